"""Attribution rules read from wire evidence: upstream rejections (``interop``),
context truncation, and turns no parser could use (``format_mismatch``). Pure."""

from __future__ import annotations

import json
import re

from probegate.scorer.rebuild.capture_checks import CORRUPT_NOTE
from probegate.scorer.judge.facts import Facts
from probegate.scorer.judge.labels import Attribution
from probegate.scorer.trajectory import ExchangeRecord

_VALIDATION = re.compile(
    r"validation|input should be|field required|is required|invalid|must be|not a valid|unprocessable"
    r"|type_error|value_error|extra inputs|expected (a |an )?(string|object|array|list)|string_type|missing",
    re.IGNORECASE,
)
_CONTEXT = re.compile(
    r"context (length|window|size)|maximum context|too many tokens|prompt is too long|exceeds? (the )?"
    r"(max|context|available)|n_ctx|token limit|requested \d+ tokens",
    re.IGNORECASE,
)
_LOC = re.compile(r"""(?:['"]type['"]\s*:\s*['"](\w+)['"]\s*,\s*)?['"]loc['"]\s*:\s*[\[(]([^\])]*)[\])]""")
#: Error types that only say "this union member did not fit" (pydantic tries every
#: message type; the member whose role matched names the real problem).
_UNION_NOISE = ("literal_error", "union_tag_invalid")
_FIELD_PATH = re.compile(r"\b(messages(?:\.\d+|\[\d+\])(?:\.\w+|\[\d+\])*)")


def _step_at(facts: Facts, exchange_seq: int) -> int | None:
    return next((s.step_id for s in facts.trajectory.steps if s.exchange_seq == exchange_seq), None)


def _loc_path(raw: str) -> str | None:
    parts = [p.strip().strip("'\"") for p in raw.split(",")]
    # drop the request-body prefix and pydantic's union member names (ChatCompletionRequestAssistantMessage, typed-dict)
    kept = [p for p in parts if p and p != "body" and not p[:1].isupper() and "-" not in p and "[" not in p]
    return ".".join(kept) or None


def offending_field(message: str) -> str | None:
    """The request field a validation error names (``messages.2.content``), if readable.

    Reads pydantic/FastAPI ``loc`` entries (preferring one that is not a union
    member's ``literal_error``), else a ``messages.N.field`` path, else ``field 'x'``.
    """
    locs = [(m.group(1), m.group(2)) for m in _LOC.finditer(message)]
    ranked = sorted(locs, key=lambda loc: loc[0] in _UNION_NOISE)
    for _, raw in ranked:
        found = _loc_path(raw)
        if found:
            return found
    path = _FIELD_PATH.search(message)
    if path:
        return re.sub(r"\[(\d+)\]", r".\1", path.group(1))
    field = re.search(r"field ['\"`]?([\w.]+)['\"`]?", message, re.IGNORECASE)
    return field.group(1) if field else None


def _failed(ex: ExchangeRecord) -> bool:
    return (ex.status_code is not None and ex.status_code >= 400) or (ex.status_code is None and bool(ex.error))


def _got_past(ex: ExchangeRecord, exchanges: list[ExchangeRecord]) -> bool:
    """A later exchange of the same thread succeeded: the agent got past this failure."""
    return any(o.seq > ex.seq and o.thread == ex.thread and o.status_code is not None and o.status_code < 400 for o in exchanges)


def pair(ex: ExchangeRecord) -> str:
    """The framework x server pair of an exchange, from its user-agent and server headers."""
    return f"client {ex.client or 'unknown'} -> server {ex.server or 'unknown'}"


#: A JSON tool schema takes at least one token per 4 characters in any tokenizer we
#: know; a prompt counted at under half of that cannot have held the tools.
CHARS_PER_TOKEN = 4


def ignored_tools(facts: Facts) -> list[Attribution]:
    """``interop.tools_ignored``: the request offered tools, but the server's own prompt
    token count is too small to have held them (llama-cpp-python's
    chatml-function-calling drops them when ``tool_choice`` is absent or the request has
    no system message). The model never
    saw the tools: not the model's failure."""
    for ex in facts.trajectory.exchanges:
        if ex.tools_chars and ex.prompt_tokens is not None and ex.prompt_tokens * CHARS_PER_TOKEN * 2 < ex.tools_chars:
            note = (f"the request offered {ex.tools_chars} characters of tool schemas but the server counted "
                    f"{ex.prompt_tokens} prompt tokens: the tools never reached the model ({pair(ex)}); "
                    "run probegate doctor: the tool-choice-auto or system-for-tools shim may bring them back")
            return [Attribution("interop", "interop.tools_ignored", note, _step_at(facts, ex.seq), ex.seq)]
    return []


#: The compat rule that rewrites tool results into a form such servers render.
TOOL_RESULTS_SHIM = "tool-results-as-user"
#: New tool results shorter than this (characters) are too short to tell apart from
#: the tokens of the assistant turn the same request adds.
MIN_TOOL_RESULT_CHARS = 100


def dropped_tool_results(facts: Facts) -> list[Attribution]:
    """``interop.tool_results_dropped``: a request added tool results of N characters over
    the previous request of its thread, but the server's prompt token count grew by less
    than every added character would cost at :data:`CHARS_PER_TOKEN` x 2 per token
    (llama-cpp-python's chatml-function-calling renders a tool message as an empty
    header). The model never saw the observation: not the model's failure.

    Only two requests that offer the same tools are compared: a framework that drops
    the tool list from its last request (CrewAI does) shrinks the prompt by the list's
    tokens, which says nothing about the tool results."""
    last: dict[int | None, ExchangeRecord] = {}
    for ex in sorted(facts.trajectory.exchanges, key=lambda e: e.seq):
        if ex.prompt_tokens is None or _failed(ex):
            continue
        prev, last[ex.thread] = last.get(ex.thread), ex
        if prev is None or prev.prompt_tokens is None or prev.tools_chars != ex.tools_chars:
            continue
        results = ex.tool_results - prev.tool_results
        added_results = ex.tool_results_chars - prev.tool_results_chars
        added = ex.messages_chars - prev.messages_chars
        grew = ex.prompt_tokens - prev.prompt_tokens
        if results > 0 and added_results >= MIN_TOOL_RESULT_CHARS and grew * CHARS_PER_TOKEN * 2 < added:
            note = (f"request {ex.seq} added {results} tool result(s) of {added_results} characters ({added} characters "
                    f"of messages in all) but the server's prompt grew from {prev.prompt_tokens} to {ex.prompt_tokens} "
                    f"tokens ({grew:+d}; at least {added // (CHARS_PER_TOKEN * 2)} expected): the tool results never "
                    f"reached the model ({pair(ex)}); run probegate doctor: the {TOOL_RESULTS_SHIM} shim may bring "
                    "them back")
            return [Attribution("interop", "interop.tool_results_dropped", note, _step_at(facts, ex.seq), ex.seq)]
    return []


#: Statuses that say a route does not exist (or takes no POST).
ROUTE_MISSING = (404, 405, 501)
#: The compat rule that serves the Responses API from chat completions.
RESPONSES_SHIM = "responses-via-chat"
_NOT_A_ROUTE = re.compile(r"\bmodel\b", re.IGNORECASE)  # Ollama's 404: model 'x' not found


def route_missing(ex: ExchangeRecord, message: str) -> str | None:
    """The evidence that an exchange hit a route the server does not have: HTTP 404, 405 or
    501 whose message is not about a missing *model* (``None`` otherwise)."""
    if ex.status_code not in ROUTE_MISSING or (ex.status_code == 404 and _NOT_A_ROUTE.search(message)):
        return None
    note = f"HTTP {ex.status_code} on {ex.path or 'the route'}: the server has no such route ({pair(ex)})"
    if ex.path.rstrip("/").endswith("/responses"):
        note += f"; run probegate doctor: the {RESPONSES_SHIM} shim would fix it by translating to chat completions"
    return note + (f": {message[:200]}" if message else "")


def wire_failures(facts: Facts) -> list[Attribution]:
    out: list[Attribution] = []
    exchanges = facts.trajectory.exchanges
    for ex in exchanges:
        if not _failed(ex) or _got_past(ex, exchanges):
            continue
        body = ex.error_body if isinstance(ex.error_body, str) else json.dumps(ex.error_body, ensure_ascii=False, default=str)
        message = " ".join(p for p in (ex.error, body if ex.error_body is not None else None) if p)
        status = f"HTTP {ex.status_code}" if ex.status_code is not None else "no response"
        excerpt = message[:240] or status
        missing = route_missing(ex, message)
        if missing is not None:
            out.append(Attribution("interop", "interop.route_missing", missing, exchange_seq=ex.seq))
        elif _CONTEXT.search(message):
            out.append(Attribution("context_truncation", "context_truncation.upstream_rejected", f"{status}: {excerpt}", exchange_seq=ex.seq))
        elif ex.status_code is not None and _VALIDATION.search(message):
            where = offending_field(message)
            note = f"{status} rejected the request" + (f" at field {where}" if where else "") + f" ({pair(ex)}): {excerpt}"
            out.append(Attribution("interop", "interop.upstream_rejected", note, exchange_seq=ex.seq))
        else:
            out.append(Attribution("interop", "interop.upstream_error", f"{status} ({pair(ex)}): {excerpt}", exchange_seq=ex.seq))
    return out


def truncation(facts: Facts) -> list[Attribution]:
    out: list[Attribution] = []
    for ex in facts.trajectory.exchanges:
        if ex.finish_reason == "length":
            out.append(Attribution("context_truncation", "context_truncation.finish_length", "the turn ended with finish_reason: length", _step_at(facts, ex.seq), ex.seq))
        used = (ex.prompt_tokens or 0) + (ex.completion_tokens or 0)
        if ex.context_size and used >= 0.98 * ex.context_size:
            note = f"{used} tokens used of a {ex.context_size}-token context"
            out.append(Attribution("context_truncation", "context_truncation.context_full", note, _step_at(facts, ex.seq), ex.seq))
    for thread in facts.trajectory.threads:
        for dropped in thread.dropped:
            note = f"thread {thread.thread} no longer carries its first {dropped.role} message: {dropped.excerpt[:80]!r}"
            out.append(Attribution("context_truncation", "context_truncation.instruction_dropped", note, _step_at(facts, dropped.exchange_seq), dropped.exchange_seq))
    return out


def _continued(facts: Facts, thread: int, exchange_seq: int) -> bool:
    """The agent took another turn in the same thread after this one."""
    info = next((t for t in facts.trajectory.threads if t.thread == thread), None)
    return info is not None and any(seq > exchange_seq for seq in info.exchanges)


def format_problems(facts: Facts) -> list[Attribution]:
    out: list[Attribution] = []
    probes_known = facts.trajectory.call_source != "steps"  # the executed calls are known
    for step in facts.trajectory.steps:
        if CORRUPT_NOTE in step.parse_notes:
            continue  # the capture is broken, not the model's format (the run's warnings say how)
        notes = ", ".join(step.parse_notes) or "no parser could read it"
        unrun = bool(step.tool_name) and step.probe_call is None
        if step.parse == "failed":
            out.append(Attribution("format_mismatch", "format_mismatch.unparseable", f"step {step.step_id}: {notes}", step.step_id, step.exchange_seq))
        elif unrun and "call_in_content" in step.parse_notes:
            note = f"step {step.step_id}: {step.tool_name} was written as text ({step.parse_kind}) and never ran"
            out.append(Attribution("format_mismatch", "format_mismatch.call_in_content", note, step.step_id, step.exchange_seq))
        elif unrun and probes_known and (step.parse == "repaired" or _continued(facts, step.thread, step.exchange_seq)):
            why = f"needed repair ({notes})" if step.parse == "repaired" else f"was written as {step.parse_kind} and the agent went on"
            note = f"step {step.step_id}: {step.tool_name} {why} but never reached a probe"
            out.append(Attribution("format_mismatch", "format_mismatch.not_executed", note, step.step_id, step.exchange_seq))
    return out
