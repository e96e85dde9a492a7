"""Building real store rows for scorer tests (exchanges, probe calls, world states).

Rows are the store's own SQLModel classes, written through a real session, so the
scorer reads them back exactly as it reads a live run (SQLite and PostgreSQL).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from probegate.store.models import Exchange, ProbeCall, Run, WorldState

TASKS_DIR = Path(__file__).parent / "taskset"
T0 = datetime(2025, 3, 14, 9, 30, tzinfo=UTC)
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in ("get_weather", "send_email", "find_contact")]


def completion(content: str | None = None, calls: list[dict[str, Any]] | None = None, finish: str | None = None) -> dict[str, Any]:
    """The gateway's reassembled-turn shape for a turn."""
    tool_calls = [
        {"id": c.get("id"), "name": c["name"], "arguments": c.get("arguments"), "arguments_raw": c.get("raw", json.dumps(c.get("arguments"))), "repaired": c.get("repaired", False)}
        for c in calls or []
    ]
    return {
        "assistant": {"content": content, "reasoning": None, "tool_calls": tool_calls, "finish_reason": finish or ("tool_calls" if calls else "stop")},
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        "flags": [],
        "content_calls": [],
    }


def assistant_message(content: str | None = None, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The assistant message an agent sends back for a turn."""
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = [{"id": c.get("id"), "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments"))}} for c in calls]
    return msg


@dataclass
class AttemptBuilder:
    """Accumulates the rows of one attempt with increasing timestamps."""

    run: str = "r1"
    task: str = "t1"
    attempt: int = 0
    tools: list[dict[str, Any]] | None = field(default_factory=lambda: list(TOOLS))
    rows: list[Any] = field(default_factory=list)
    clock: int = 0
    seq: int = 0
    probe_seq: int = 0

    def tick(self) -> datetime:
        self.clock += 1
        return T0 + timedelta(seconds=self.clock)

    def exchange(
        self,
        messages: list[dict[str, Any]],
        turn: dict[str, Any] | None,
        *,
        status: int = 200,
        error: str | None = None,
        response_body: Any = None,
        prompt_tokens: int | None = None,
        completion_tokens: int = 5,
        flags: list[str] | None = None,
        request_extra: dict[str, Any] | None = None,
    ) -> Exchange:
        body: dict[str, Any] = {"model": "m", "messages": messages, **(request_extra or {})}
        if self.tools:
            body["tools"] = self.tools
        if prompt_tokens is None:  # what a server that read the whole request would count
            prompt_tokens = len(json.dumps(body)) // 4 + 1
        row = Exchange(
            run_id=self.run, task_id=self.task, attempt=self.attempt, seq=self.seq, started_at=self.tick(),
            latency_ms=100.0, path="/v1/chat/completions", request_body=body, status_code=status,
            completion=turn, error=error, response_body=response_body, flags=flags or [], model="m",
            prompt_tokens=prompt_tokens if turn else None, completion_tokens=completion_tokens if turn else None,
        )
        self.seq += 1
        self.rows.append(row)
        return row

    def probe(self, tool: str, args: dict[str, Any] | None, status: str = "ok", result: Any = None, **extra: Any) -> ProbeCall:
        self.probe_seq += 1
        row = ProbeCall(
            run_id=self.run, task_id=self.task, attempt=self.attempt, seq=self.probe_seq, at=self.tick(), tool=tool,
            raw_args=json.dumps(args), args=args, status=status, result=result if result is not None else {"ok": True}, **extra,
        )
        self.rows.append(row)
        return row

    def world(self, state: dict[str, Any]) -> None:
        self.rows.append(WorldState(run_id=self.run, task_id=self.task, attempt=self.attempt, world="default", state=state))

    def fc_chain(self, prompt: str, steps: list[tuple[str, dict[str, Any], Any]], answer: str | None) -> None:
        """A whole function-calling attempt: each step is (tool, args, result); then the answer."""
        messages: list[dict[str, Any]] = [{"role": "system", "content": "be helpful"}, {"role": "user", "content": prompt}]
        for i, (tool, args, result) in enumerate(steps):
            call = {"id": f"call_{i}", "name": tool, "arguments": args}
            self.exchange(messages, completion(None, [call]))
            self.probe(tool, args, result=result)
            messages = messages + [assistant_message(None, [call]), {"role": "tool", "tool_call_id": f"call_{i}", "content": json.dumps(result)}]
        if answer is not None:
            self.exchange(messages, completion(answer))


def write(engine: Engine, *rows: Any, run: Run | None = None) -> None:
    """Commit rows (and optionally their run) to the store."""
    with Session(engine) as session:
        if run is not None:
            session.add(run)
        session.add_all(list(rows))
        session.commit()


def play(
    task: Any,
    calls: list[tuple[str, dict[str, Any]]],
    answer: str | None,
    *,
    builder: AttemptBuilder | None = None,
    call_source: str = "probes",
) -> Any:
    """Run ``calls`` through the real probe service (no store) and rebuild the attempt.

    Returns the :class:`~probegate.scorer.trajectory.Trajectory`, with the real world state the
    calls left, as the scorer would rebuild it from the store.
    """
    from probegate.probes.service import ProbeService
    from probegate.scorer.rebuild.build import build_trajectory
    from probegate.scorer.rebuild.rows import AttemptRows, RunInfo

    b = builder or AttemptBuilder(task=task.id)
    service = ProbeService()
    service.reset(b.run, task.id, b.attempt, world=task.world, world_patch=task.world_patch or None, tools=task.tools)
    messages: list[dict[str, Any]] = [{"role": "user", "content": task.prompt.en}]
    for i, (tool, args) in enumerate(calls):
        call = {"id": f"call_{i}", "name": tool, "arguments": args}
        b.exchange(messages, completion(None, [call]))
        outcome = service.call(b.run, task.id, b.attempt, tool, json.dumps(args).encode())
        row = outcome.probe_call_row
        row.at = b.tick()
        b.rows.append(row)
        messages = messages + [assistant_message(None, [call]), {"role": "tool", "tool_call_id": f"call_{i}", "content": json.dumps(outcome.body)}]
    if answer is not None:
        b.exchange(messages, completion(answer))
    state = service.state(b.run, task.id, b.attempt)
    rows = AttemptRows(
        b.run, task.id, b.attempt,
        exchanges=tuple(r for r in b.rows if isinstance(r, Exchange)),
        probe_calls=tuple(r for r in b.rows if isinstance(r, ProbeCall)),
        world_state=state[1] if state else None,
    )
    return build_trajectory(rows, RunInfo(b.run, "tasks", "fc", "m"), tools=task.tools, max_steps=task.max_steps, call_source=call_source)  # type: ignore[arg-type]
