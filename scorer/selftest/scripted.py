"""Playing a :class:`~probegate.scorer.selftest.mutations.Plan` for real: probe calls through the probes'
in-process service and the matching model exchanges, written to a store.

The calls run through :class:`probegate.probes.service.ProbeService` (validation, tools, world
state, the probe log), so the world state a plan leaves is real. The exchanges are
what an OpenAI function-calling agent would have sent and received for those calls
(``tool_calls`` turns, ``tool`` results, a final text answer), so the scorer rebuilds
the attempt from the store exactly as it rebuilds a live one.
"""

from __future__ import annotations

import json
from typing import Any

from probegate.store.models import Exchange, Run, utcnow
from probegate.store.writer import CaptureWriter
from probegate.scorer.selftest.mutations import Plan, PlannedCall
from probegate.tasks.loader import Task

#: Times a scripted agent repeats a call that failed with a tool error (a recovery).
RETRIES = 2
_PATH = "/v1/chat/completions"


def _exchange(run: str, task: str, attempt: int, seq: int, messages: list[dict[str, Any]], tools: list[dict[str, Any]], assistant: dict[str, Any]) -> Exchange:
    started = utcnow()
    request = {"model": "scripted", "messages": [dict(m) for m in messages], "tools": tools}
    # what a server that really read the request would count (about 4 characters a token)
    prompt_tokens = len(json.dumps(request, ensure_ascii=False)) // 4 + 1
    return Exchange(
        run_id=run,
        task_id=task,
        attempt=attempt,
        seq=seq,
        started_at=started,
        ended_at=started,
        latency_ms=1.0,
        method="POST",
        path=_PATH,
        request_body=request,
        status_code=200,
        completion={"assistant": assistant, "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 5},
                    "flags": [], "content_calls": []},
        flags=[],
        model="scripted",
        prompt_tokens=prompt_tokens,
        completion_tokens=5,
    )


def _call_turn(call: PlannedCall, call_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    raw = json.dumps(call.args, ensure_ascii=False)
    assistant = {
        "content": None,
        "reasoning": None,
        "tool_calls": [{"id": call_id, "name": call.tool, "arguments": call.args, "arguments_raw": raw, "repaired": False}],
        "finish_reason": "tool_calls",
    }
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": call.tool, "arguments": raw}}],
    }
    return assistant, message


class ScriptedAgent:
    """Plays plans against a probe service and records them through a capture writer.

    Args:
        service: a ``probegate.probes.service.ProbeService`` writing to ``writer``.
        writer: the capture writer of the target store.
    """

    def __init__(self, service: Any, writer: CaptureWriter) -> None:
        self.service = service
        self.writer = writer

    def start_run(self, run: str, task_set: str, harness: str = "scripted", model: str = "scripted") -> None:
        """Record the run row."""
        self.writer.submit_blocking(Run(id=run, task_set=task_set, harness=harness, model=model, status="done"))

    def play(self, run: str, task: Task, attempt: int, plan: Plan) -> None:
        """Reset the attempt's world, make the plan's calls, answer; rows go to the writer."""
        tools = self.service.reset(run, task.id, attempt, world=task.world, world_patch=task.world_patch or None, tools=task.tools)
        messages: list[dict[str, Any]] = [{"role": "user", "content": task.prompt.en}]
        if task.system:
            messages.insert(0, {"role": "system", "content": task.system})
        seq = 0
        for n, call in enumerate(plan.calls):
            for retry in range(RETRIES + 1):
                call_id = f"call_{n}_{retry}"
                assistant, message = _call_turn(call, call_id)
                self.writer.submit_blocking(_exchange(run, task.id, attempt, seq, messages, tools, assistant))
                seq += 1
                outcome = self.service.call(run, task.id, attempt, call.tool, json.dumps(call.args).encode())
                content = json.dumps(outcome.body, ensure_ascii=False, sort_keys=True)
                messages = messages + [message, {"role": "tool", "tool_call_id": call_id, "content": content}]
                if outcome.status_code != 400:
                    break
        final: dict[str, Any] = {"content": plan.answer, "reasoning": None, "tool_calls": [], "finish_reason": "stop"}
        self.writer.submit_blocking(_exchange(run, task.id, attempt, seq, messages, tools, final))
