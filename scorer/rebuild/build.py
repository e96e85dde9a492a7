"""Rebuilding one attempt's trajectory from its stored rows. Pure: no I/O.

Exchanges are read in ``seq`` order. Each model call's whole history is read from its
request (a Responses request continuing a ``previous_response_id`` gets the history of
that response first), it is assigned to a thread
(:mod:`probegate.scorer.rebuild.threads`), its reassembled turn is parsed (:mod:`probegate.scorer.rebuild.turns`) into
steps, the next request of the same thread gives each call's observation
(:mod:`probegate.scorer.rebuild.observations`), and probe calls are joined to the steps that caused
them (:mod:`probegate.scorer.rebuild.join`). Failed exchanges (HTTP >= 400, transport errors) make
no step; they stay in ``exchanges`` as wire evidence.

The rows are checked first (:mod:`probegate.scorer.rebuild.capture_checks`): every problem becomes
a line of the trajectory's ``warnings``; a model call the server answered whose
turn cannot be read makes one step with parse ``failed`` and the note
``corrupt_capture``, and a step whose probe call had a field repaired gets that
note too.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from probegate.store.models import Exchange, ProbeCall
from probegate.wire.content_calls import tool_schemas
from probegate.wire.json_shapes import items, mapping
from probegate.scorer.rebuild.calls import actual_calls
from probegate.scorer.rebuild.capture_checks import CORRUPT_NOTE, CaptureIssue, check_rows, is_model_call
from probegate.scorer.rebuild.mcp_calls import with_proxy_calls
from probegate.scorer.rebuild.join import CallStep, ProbeMoment, attach_by_time, aware, join_calls
from probegate.scorer.judge.loops import detect_loop
from probegate.scorer.rebuild.observations import structured_observation, text_observation
from probegate.scorer.rebuild.rows import AttemptRows, RunInfo
from probegate.scorer.rebuild.threads import ResponseChain, ThreadTracker, message_sizes
from probegate.scorer.trajectory import (
    CallSource,
    Door,
    ExchangeRecord,
    ProbeCallRecord,
    Step,
    ThreadInfo,
    Trajectory,
    Usage,
)
from probegate.scorer.rebuild.turns import ParsedTurn, parse_completion

DOORS: tuple[Door, ...] = ("rest", "mcp", "mitm", "mcp-proxy")
_CONTEXT_KEYS = ("context_size", "n_ctx", "num_ctx", "context_window", "ctx_size", "context_length")


def succeeded(exchange: Exchange) -> bool:
    """Whether the exchange produced an assistant turn (2xx/3xx and a completion)."""
    return exchange.status_code is not None and exchange.status_code < 400 and exchange.completion is not None


def context_size(params: dict[str, Any], request: Any) -> int | None:
    """The server's context size: from the run params, else the request's ``options.num_ctx``."""
    for key in _CONTEXT_KEYS:
        if isinstance(params.get(key), int):
            return int(params[key])
    options = request.get("options") if isinstance(request, dict) else None
    if isinstance(options, dict) and isinstance(options.get("num_ctx"), int):
        return int(options["num_ctx"])
    return None


@dataclass
class _Turn:
    exchange: Exchange
    thread: int
    turn: ParsedTurn | None
    steps: list[dict[str, Any]] = field(default_factory=list)


def _raw_output(exchange: Exchange) -> str | None:
    assistant = mapping(mapping(exchange.completion).get("assistant"))
    content = assistant.get("content")
    calls = [c for c in items(assistant.get("tool_calls")) if isinstance(c, dict)]
    if not calls:
        return content
    lines = [f"{c.get('name')}({c.get('arguments_raw') or ''})" for c in calls]
    return "\n".join(([content] if content else []) + lines)


def _steps_of(turn: _Turn, first_id: int) -> list[dict[str, Any]]:
    ex, parsed = turn.exchange, turn.turn
    assert parsed is not None
    base = {
        "thread": turn.thread,
        "exchange_seq": ex.seq,
        "thought": parsed.thought,
        "raw_output": _raw_output(ex),
        "finish_reason": mapping(mapping(ex.completion).get("assistant")).get("finish_reason"),
        "parse_kind": parsed.kind,
    }
    usage = {"latency_ms": ex.latency_ms, "prompt_tokens": ex.prompt_tokens, "completion_tokens": ex.completion_tokens}
    if not parsed.calls:
        return [{**base, **usage, "step_id": first_id, "parse": parsed.status, "parse_notes": list(parsed.notes)}]
    steps = []
    for i, call in enumerate(parsed.calls):
        step = {
            **base,
            "step_id": first_id + i,
            "call_index": i,
            "tool_name": call.name or None,
            "tool_args": call.arguments,
            "tool_call_id": call.call_id,
            "parse": call.status,
            "parse_kind": call.kind,
            "parse_notes": list(parsed.notes + call.notes),
        }
        steps.append({**step, **usage} if i == 0 else step)
    return steps


def _known_tools(rows: AttemptRows, tools: Collection[str]) -> set[str]:
    known = set(tools) | {p.tool for p in rows.probe_calls if p.tool}
    for ex in rows.exchanges:
        known |= set(tool_schemas(ex.request_body))
    return known


def _record(ex: Exchange, thread: int | None, params: dict[str, Any]) -> ExchangeRecord:
    assistant = mapping(mapping(ex.completion).get("assistant"))
    failed = ex.status_code is None or ex.status_code >= 400
    sizes = message_sizes(ex.request_body)
    return ExchangeRecord(
        seq=ex.seq,
        thread=thread,
        path=ex.path or "",
        status_code=ex.status_code,
        error=ex.error,
        error_body=ex.response_body if failed else None,
        finish_reason=assistant.get("finish_reason"),
        flags=sorted(str(f) for f in items(ex.flags)),
        prompt_tokens=ex.prompt_tokens,
        completion_tokens=ex.completion_tokens,
        latency_ms=ex.latency_ms,
        context_size=context_size(params, ex.request_body),
        client=mapping(ex.request_headers).get("user-agent"),
        server=mapping(ex.response_headers).get("server"),
        tools_chars=_tools_chars(ex.request_body),
        tool_results=sizes.tool_results,
        tool_results_chars=sizes.tool_results_chars,
        messages_chars=sizes.messages_chars,
        shims=_shims(ex.compat),
    )


def _shims(compat: Any) -> list[str]:
    """The request shims the gateway applied to an exchange (``probegate.gateway.compat`` rules;
    a replay marker is not a shim)."""
    rules = {c.get("rule") for c in items(compat) if isinstance(c, dict)}
    return sorted(str(r) for r in rules if r and r != "replay")


def _tools_chars(body: Any) -> int:
    """Size (characters of JSON) of the tool schemas a request offered."""
    tools = body.get("tools") or body.get("functions") if isinstance(body, dict) else None
    return len(json.dumps(tools, ensure_ascii=False)) if tools else 0


def _observe(turns: list[_Turn], histories: dict[int, list[dict[str, Any]]], tracker: ThreadTracker) -> None:
    for turn in turns:
        if turn.turn is None or not turn.turn.calls:
            continue
        seqs = tracker.threads[turn.thread].exchanges
        later = [s for s in seqs if s > turn.exchange.seq]
        if not later:
            continue
        messages = histories[later[0]]
        names = [c.name for c in turn.turn.calls]
        if turn.turn.kind == "fc":
            for step in turn.steps:
                step["observation"] = structured_observation(messages, step.get("tool_call_id"), step["call_index"], names)
        else:
            turn.steps[-1]["observation"] = text_observation(messages, turn.steps[0]["raw_output"])


def _probe_records(
    rows: AttemptRows, turns: list[_Turn], tracker: ThreadTracker, by_seq: dict[int, Exchange]
) -> tuple[list[ProbeCallRecord], dict[int, int]]:
    probes = sorted(rows.probe_calls, key=lambda p: (p.seq, aware(p.at) or aware_min()))
    moments = [ProbeMoment(i, p.tool, p.args, aware(p.at)) for i, p in enumerate(probes)]
    starts = {seq: aware(ex.started_at) for seq, ex in by_seq.items()}
    call_steps = []
    for turn in turns:
        later = [s for s in tracker.threads[turn.thread].exchanges if s > turn.exchange.seq]
        end = starts.get(later[0]) if later else None
        for step in turn.steps:
            if step.get("tool_name"):
                call_steps.append(CallStep(step["step_id"], step["tool_name"], step.get("tool_args"), starts[turn.exchange.seq], end))
    joined = join_calls(call_steps, moments)
    step_starts = [(s["step_id"], starts[t.exchange.seq]) for t in turns for s in t.steps]
    timed = attach_by_time(step_starts, moments, joined)
    records = [_probe_record(i, p, joined, timed) for i, p in enumerate(probes)]
    return records, {step: index for index, step in joined.items()}


def aware_min() -> datetime:
    """The earliest aware datetime (sort key for rows without a time)."""
    return datetime.min.replace(tzinfo=UTC)


def _probe_record(i: int, p: ProbeCall, joined: dict[int, int], timed: dict[int, int]) -> ProbeCallRecord:
    step_id = joined.get(i, timed.get(i))
    return ProbeCallRecord(
        index=i,
        seq=p.seq,
        tool=p.tool,
        args=p.args,
        raw_args=p.raw_args,
        status=p.status,
        missing=[str(m) for m in items(p.missing)],
        invalid={str(k): str(v) for k, v in mapping(p.invalid).items()},
        result=p.result,
        latency_ms=p.latency_ms,
        step_id=step_id,
        joined_by="call" if i in joined else ("time" if i in timed else None),
        door=p.door if p.door in DOORS else "rest",
    )


def build_trajectory(
    rows: AttemptRows,
    run: RunInfo,
    *,
    tools: Collection[str] = (),
    max_steps: int | None = None,
    call_source: CallSource = "probes",
) -> Trajectory:
    """Rebuild one attempt.

    Args:
        rows: the attempt's stored rows.
        run: the run's fields (model, harness, params).
        tools: tool names the task offers (helps the text parsers).
        max_steps: the step budget (``max_steps`` in the run params wins).
        call_source: ``probes`` when the run used probes, ``mcp-proxy`` when its calls
            went to the agent's own MCP servers through the recording proxy (their
            ``tools/call`` messages are the calls), ``steps`` for other probe-less runs.

    Returns:
        The :class:`~probegate.scorer.trajectory.Trajectory`; never raises on odd rows.
    """
    if call_source == "mcp-proxy":
        rows = with_proxy_calls(rows)
    rows, issues = check_rows(rows)
    unreadable = {i.exchange_seq for i in issues if i.exchange_seq is not None}
    known = _known_tools(rows, tools)
    ordered = sorted(rows.exchanges, key=lambda e: (e.seq, aware(e.started_at) or aware_min()))
    by_seq = {e.seq: e for e in ordered}
    tracker = ThreadTracker()
    chain = ResponseChain()
    histories: dict[int, list[dict[str, Any]]] = {}
    turns: list[_Turn] = []
    records: list[ExchangeRecord] = []
    next_id = 0
    for ex in (e for e in ordered if is_model_call(e)):
        histories[ex.seq] = chain.messages(ex.seq, ex.request_body)
        thread = tracker.assign(ex.seq, histories[ex.seq])
        if succeeded(ex):
            chain.record(ex.response_body, histories[ex.seq], ex.completion)
        records.append(_record(ex, thread, run.params))
        if ex.seq in unreadable:
            parsed = ParsedTurn(None, status="failed", notes=(CORRUPT_NOTE,))
        elif succeeded(ex):
            parsed = parse_completion(ex.completion, known, offered=bool(tool_schemas(ex.request_body)))
        else:
            continue
        turn = _Turn(ex, thread, parsed)
        turn.steps = _steps_of(turn, next_id)
        next_id += len(turn.steps)
        turns.append(turn)
        tracker.record_output(thread, mapping(mapping(ex.completion).get("assistant")).get("content"),
                              [c.call_id or "" for c in parsed.calls],
                              [(c.name, c.arguments if c.arguments is not None else c.raw)
                               for c in parsed.calls if not c.call_id and c.kind == "fc"])
    _observe(turns, histories, tracker)
    probe_records, step_probe = _probe_records(rows, turns, tracker, by_seq)
    _mark_repaired_probe_calls(turns, probe_records, issues)
    steps = [Step(**s, probe_call=step_probe.get(s["step_id"])) for t in turns for s in t.steps]
    draft = Trajectory(
        run_id=rows.run_id,
        task_id=rows.task_id,
        attempt=rows.attempt,
        model=run.model or next((e.model for e in ordered if e.model), None),
        harness=run.harness,
        call_source=call_source,
        threads=[ThreadInfo(thread=t.thread, parent=t.parent, exchanges=t.exchanges, dropped=t.dropped) for t in tracker.threads],
        steps=steps,
        probe_calls=probe_records,
        exchanges=records,
        usage=_usage(records),
        world_state=rows.world_state,
        warnings=[i.text() for i in issues] + [
            f"exchange {seq} continues response {rid!r}, which no exchange of this attempt answered: "
            "its history is its own input items only"
            for seq, rid in chain.missing
        ],
    )
    max_steps = run.params.get("max_steps") if isinstance(run.params.get("max_steps"), int) else max_steps
    return _with_reported_answer(_finish(draft, turns, max_steps), run.params)


def _mark_repaired_probe_calls(turns: list[_Turn], records: list[ProbeCallRecord], issues: tuple[CaptureIssue, ...]) -> None:
    """Add the ``corrupt_capture`` note to the steps whose probe call had a field repaired."""
    repaired = {i.probe_seq for i in issues if i.probe_seq is not None}
    marked = {r.step_id for r in records if r.seq in repaired and r.step_id is not None}
    for step in (s for t in turns for s in t.steps if s["step_id"] in marked):
        if CORRUPT_NOTE not in step["parse_notes"]:
            step["parse_notes"] = [*step["parse_notes"], CORRUPT_NOTE]


def _with_reported_answer(trajectory: Trajectory, params: dict[str, Any]) -> Trajectory:
    """Use the answer the harness reported, when the runner stored one.

    Some agents answer off the wire: the ``code`` harness's answer is what its program
    printed, a ``cmd:`` agent's is its stdout. The runner stores that (in the store,
    under ``Run.params["outcomes"]``); it is what the user saw, so it wins over the
    last model text. Agents not driven by the runner have none: the wire decides.
    """
    outcomes = params.get("outcomes") if isinstance(params.get("outcomes"), dict) else {}
    outcome = outcomes.get(f"{trajectory.task_id}/{trajectory.attempt}")
    reported = outcome.get("final_answer") if isinstance(outcome, dict) else None
    if not isinstance(reported, str) or not reported.strip() or reported == trajectory.final_answer:
        return trajectory
    return trajectory.model_copy(update={"final_answer": reported, "answer_source": "harness"})


def _usage(records: list[ExchangeRecord]) -> Usage:
    return Usage(
        model_calls=len(records),
        prompt_tokens=sum(r.prompt_tokens or 0 for r in records),
        completion_tokens=sum(r.completion_tokens or 0 for r in records),
        latency_ms=round(sum(r.latency_ms or 0.0 for r in records), 3),
    )


def _finish(draft: Trajectory, turns: list[_Turn], max_steps: int | None) -> Trajectory:
    main = [t for t in turns if t.thread == 0]
    last = main[-1] if main else None
    answer = last.turn.answer if last is not None and last.turn is not None and not last.turn.calls else None
    still_calling = last is not None and last.turn is not None and bool(last.turn.calls)
    main_calls = sum(1 for r in draft.exchanges if r.thread == 0)
    loop = detect_loop(actual_calls(draft))
    return draft.model_copy(
        update={
            "final_answer": answer,
            "loop": loop,
            "loop_detected": loop is not None,
            "max_steps_hit": bool(max_steps) and main_calls >= (max_steps or 0) and still_calling,
        }
    )


def trajectory_json(trajectory: Trajectory) -> str:
    """The trajectory as stable JSON text (sorted keys, two-space indent)."""
    return json.dumps(trajectory.model_dump(mode="json"), sort_keys=True, indent=2, ensure_ascii=False)
