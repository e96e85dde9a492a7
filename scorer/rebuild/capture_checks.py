"""Checking an attempt's stored rows before the rebuild. Pure.

A capture can be corrupt or partial: a stream cut before its turn was reassembled,
a JSON column holding a string or a list where an object belongs (SQLite stores any
text), a probe call whose arguments are not an object. The scorer never crashes on
one: :func:`check_rows` returns rows it can read (each bad value replaced by a
neutral one) and one :class:`CaptureIssue` per problem. The rebuild turns the issues
into the trajectory's ``warnings`` and marks the steps they touch (docs/metrics.md,
"Corrupt or partial captures").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from probegate.store.models import Exchange
from probegate.wire.reassemble import dialect_of
from probegate.scorer.rebuild.rows import AttemptRows

#: The parse note on a step whose capture could not be read.
CORRUPT_NOTE = "corrupt_capture"
PROBE_STATUSES = ("ok", "blocked", "error")

# the Exchange and ProbeCall fields the scorer reads (the deferred raw columns are not among them)
_EXCHANGE_FIELDS = (
    "id", "run_id", "task_id", "attempt", "seq", "started_at", "ended_at", "ttft_ms", "latency_ms", "method", "path",
    "request_headers", "request_body", "status_code", "response_headers", "response_body", "stream", "completion",
    "flags", "error", "model", "prompt_tokens", "completion_tokens", "truncated",
)
_PROBE_FIELDS = (
    "id", "run_id", "task_id", "attempt", "seq", "at", "tool", "raw_args", "args", "missing", "invalid", "status",
    "result", "latency_ms", "via", "door",
)


@dataclass(frozen=True)
class CaptureIssue:
    """One problem found in a stored row.

    Attributes:
        where: the row (``exchange 3``, ``probe call 2``, ``world state``, ...).
        problem: what is wrong, in a line.
        exchange_seq: the model exchange whose turn could not be read (its step is
            marked failed); ``None`` otherwise.
        probe_seq: the probe call whose record was repaired (the step it joins is marked).
    """

    where: str
    problem: str
    exchange_seq: int | None = None
    probe_seq: int | None = None

    def text(self) -> str:
        """``"<where>: <problem>"``."""
        return f"{self.where}: {self.problem}"


def json_kind(value: Any) -> str:
    """``value``'s JSON type with its article (``an object``, ``a string``, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _optional(accept: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or accept(value)


_is_str = _optional(lambda v: isinstance(v, str))
_is_int_or_none = _optional(_is_int)
_is_number = _optional(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
_is_time = _optional(lambda v: isinstance(v, datetime))
_is_object = _optional(lambda v: isinstance(v, dict))
_is_str_list = _optional(lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v))
_is_str_map = _optional(lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()))

#: ``(field, accepts, what it must be, replacement)``; the replacement gets the bad value.
Rule = tuple[str, Callable[[Any], bool], str, Callable[[Any], Any]]


def _none(_: Any) -> Any:
    return None


def _strings(value: Any) -> Any:
    return [x for x in value if isinstance(x, str)] if isinstance(value, list) else None


def _string_map(value: Any) -> Any:
    return {str(k): v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else None


def _as_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


EXCHANGE_RULES: tuple[Rule, ...] = (
    ("started_at", _is_time, "a time", _none),
    ("method", lambda v: isinstance(v, str), "a string", lambda _: "POST"),
    ("path", lambda v: isinstance(v, str), "a string", lambda _: ""),
    ("status_code", _is_int_or_none, "an integer", _none),
    ("request_headers", _is_str_map, "an object of strings", _string_map),
    ("response_headers", _is_str_map, "an object of strings", _string_map),
    ("request_body", _is_object, "an object", _none),
    ("flags", _is_str_list, "an array of strings", _strings),
    ("error", _is_str, "a string", _as_text),
    ("model", _is_str, "a string", _none),
    ("prompt_tokens", _is_int_or_none, "an integer", _none),
    ("completion_tokens", _is_int_or_none, "an integer", _none),
    ("latency_ms", _is_number, "a number", _none),
    ("ttft_ms", _is_number, "a number", _none),
)
PROBE_RULES: tuple[Rule, ...] = (
    ("at", _is_time, "a time", _none),
    ("tool", lambda v: isinstance(v, str), "a string", lambda _: ""),
    ("raw_args", _is_str, "a string", _as_text),
    ("args", _is_object, "an object", _none),
    ("missing", _is_str_list, "an array of strings", _strings),
    ("invalid", _optional(lambda v: isinstance(v, dict)), "an object", lambda _: None),
    ("status", lambda v: v in PROBE_STATUSES, "ok, blocked or error", lambda _: "error"),
    ("latency_ms", _is_number, "a number", _none),
)


def completion_problem(completion: Any) -> str | None:
    """What is wrong with a stored reassembled turn (contract shape), ``None`` when it reads."""
    if not isinstance(completion, dict):
        return f"completion is {json_kind(completion)}, not an object"
    assistant = completion.get("assistant")
    if not isinstance(assistant, dict):
        return f"completion.assistant is {json_kind(assistant)}, not an object"
    for key in ("content", "reasoning", "finish_reason"):
        if not _is_str(assistant.get(key)):
            return f"completion.assistant.{key} is {json_kind(assistant.get(key))}, not a string"
    calls = assistant.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        return f"completion.assistant.tool_calls is {json_kind(calls)}, not an array"
    for i, call in enumerate(calls or []):
        if not isinstance(call, dict):
            return f"completion.assistant.tool_calls.{i} is {json_kind(call)}, not an object"
        for key in ("name", "id", "arguments_raw"):
            if not _is_str(call.get(key)):
                return f"completion.assistant.tool_calls.{i}.{key} is {json_kind(call.get(key))}, not a string"
    return None


def _apply(row: Any, rules: tuple[Rule, ...], where: str) -> tuple[dict[str, Any], list[CaptureIssue]]:
    fixes: dict[str, Any] = {}
    issues = []
    for name, accepts, expected, fallback in rules:
        value = getattr(row, name, None)
        if not accepts(value):
            fixes[name] = fallback(value)
            issues.append(CaptureIssue(where, f"{name} is {json_kind(value)}, not {expected}"))
    return fixes, issues


def is_model_call(exchange: Exchange) -> bool:
    """Whether the exchange was a request for a model turn (chat, completions, ...)."""
    return dialect_of(exchange.path or "") is not None and exchange.method.upper() == "POST"


def _answered(exchange: Exchange) -> bool:
    """A model call the server answered (HTTP < 400): it should have a reassembled turn."""
    return is_model_call(exchange) and exchange.status_code is not None and exchange.status_code < 400


def _check_exchange(exchange: Exchange, seq: int, lost: str | None) -> tuple[dict[str, Any], list[CaptureIssue]]:
    """Fixes and issues of one exchange; ``lost`` is why the store could not give its completion."""
    where = f"exchange {seq}"
    fixes, issues = _apply(exchange, EXCHANGE_RULES, where)
    view = _copy(exchange, _EXCHANGE_FIELDS, {**fixes, "seq": seq}) if fixes else exchange
    completion = exchange.completion
    problem = None if completion is None else completion_problem(completion)
    if problem is not None:
        fixes["completion"] = None
    elif completion is None and lost is not None:
        problem = lost
    elif completion is None and _answered(view):
        problem = "no reassembled turn although the server answered (a truncated or unreadable stream)"
        problem += f"; recorded error: {view.error}" if view.error else ""
    if problem is not None:
        issues.append(CaptureIssue(where, problem, exchange_seq=seq if _answered(view) else None))
    return fixes, issues


def _copy(row: Any, fields: tuple[str, ...], updates: dict[str, Any]) -> Any:
    values = {name: getattr(row, name, None) for name in fields}
    return type(row)(**{**values, **updates})


def _unique_seqs(rows: tuple[Any, ...]) -> list[int | None]:
    """Each row's ``seq``; a ``seq`` that is not an integer becomes one past the largest, in row order."""
    good = [r.seq for r in rows if _is_int(r.seq)]
    next_seq = max(good, default=-1) + 1
    out: list[int | None] = []
    for row in rows:
        if _is_int(row.seq):
            out.append(row.seq)
        else:
            out.append(next_seq)
            next_seq += 1
    return out


def check_rows(rows: AttemptRows) -> tuple[AttemptRows, tuple[CaptureIssue, ...]]:
    """Rows the rebuild can read, and the problems found on the way.

    Rows without a problem are passed through as they are (the same objects); a row
    with one is replaced by a copy holding the neutral value (``None``, ``[]``, ``""``)
    for each bad field.

    Returns:
        ``(rows, issues)``; issues in row order (exchanges, probe calls, world state).
    """
    issues = [CaptureIssue(*w.partition(": ")[::2]) for w in rows.warnings]  # "<where>: <problem>"
    # a completion the store could not decode: reported once, where its exchange is checked
    lost = {i.where: i for i in issues if i.where.startswith("exchange ") and i.problem.startswith("completion ")}
    issues = [i for i in issues if i.where not in lost or i is not lost[i.where]]
    exchanges = []
    for exchange, seq in zip(rows.exchanges, _unique_seqs(rows.exchanges), strict=True):
        store_issue = lost.get(f"exchange {seq}")
        fixes, found = _check_exchange(exchange, int(seq or 0), store_issue.problem if store_issue else None)
        if seq != exchange.seq:
            found.insert(0, CaptureIssue(f"exchange {seq}", f"seq is {json_kind(exchange.seq)}, not an integer"))
        issues.extend(found)
        exchanges.append(_copy(exchange, _EXCHANGE_FIELDS, {**fixes, "seq": seq}) if found else exchange)
    probe_calls = []
    for call, seq in zip(rows.probe_calls, _unique_seqs(rows.probe_calls), strict=True):
        fixes, found = _apply(call, PROBE_RULES, f"probe call {seq}")
        if seq != call.seq:
            found.insert(0, CaptureIssue(f"probe call {seq}", f"seq is {json_kind(call.seq)}, not an integer"))
        found = [replace(issue, probe_seq=seq) for issue in found]
        issues.extend(found)
        probe_calls.append(_copy(call, _PROBE_FIELDS, {**fixes, "seq": seq}) if found else call)
    world_state = rows.world_state
    if not _is_object(world_state):
        issues.append(CaptureIssue("world state", f"state is {json_kind(world_state)}, not an object"))
        world_state = None
    checked = replace(rows, exchanges=tuple(exchanges), probe_calls=tuple(probe_calls), world_state=world_state)
    return checked, tuple(issues)
