"""Reading one assistant turn: structured tool calls first, then every text protocol.

:func:`parse_completion` reads the gateway's reassembled turn (the contract shape
``{"assistant": {"content", "reasoning", "tool_calls", "finish_reason"}, ...}``);
:func:`parse_text` reads free text with the parsers of :mod:`probegate.scorer.rebuild.parsers` in a
fixed order (markup, ReAct, JSON, pythonic call, code blocks, plain answer). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from probegate.wire.arguments import parse_arguments
from probegate.wire.content_calls import (
    find_markup_calls,
    find_python_calls,
    has_tool_markup,
)
from probegate.wire.json_shapes import items, mapping
from probegate.scorer.rebuild.parsers import (
    ParsedCall,
    code_blocks,
    parse_code_calls,
    parse_json_blocks,
    parse_react,
)
from probegate.scorer.trajectory import ParseKind, ParseStatus

_THINK = re.compile(r"<think(?:ing)?>(.*?)(?:</think(?:ing)?>|$)", re.DOTALL | re.IGNORECASE)
_ATTEMPT = re.compile(r"\"(?:name|action|tool|tool_name|function)\"\s*:|<tool_call>|<function=", re.IGNORECASE)
_ANSWER_CALLS = ("final_answer", "answer", "finish")
_RANK = {"ok": 0, "repaired": 1, "failed": 2}


@dataclass(frozen=True)
class ParsedTurn:
    """One assistant turn, read.

    Attributes:
        thought: reasoning or text around the call(s).
        calls: the tool calls found, in order.
        answer: the text meant for the user (only when there is no call).
        status: the worst status of the calls, ``failed`` when the turn tried to call
            a tool but nothing could be read, else ``ok``/``repaired``.
        kind: the protocol that produced the result.
        notes: turn-level repairs (``think_tags_removed``, ``empty_turn``, ...).
    """

    thought: str | None
    calls: tuple[ParsedCall, ...] = ()
    answer: str | None = None
    status: ParseStatus = "ok"
    kind: ParseKind = "none"
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form (``probegate debug-parse --json``)."""
        return {
            "thought": self.thought,
            "calls": [c.to_json() for c in self.calls],
            "answer": self.answer,
            "status": self.status,
            "kind": self.kind,
            "notes": list(self.notes),
        }


def worst(statuses: Collection[ParseStatus]) -> ParseStatus:
    """The worst of several parse statuses (``ok`` for none)."""
    return max(statuses, key=_RANK.__getitem__, default="ok")


def _with_calls(calls: list[ParsedCall], kind: ParseKind, thought: str | None, notes: tuple[str, ...]) -> ParsedTurn:
    return ParsedTurn(thought, tuple(calls), None, worst([c.status for c in calls]), kind, notes)


def split_think(text: str) -> tuple[str, str | None]:
    """Remove ``<think>…</think>`` blocks; returns ``(rest, thinking)``."""
    found = [m.group(1).strip() for m in _THINK.finditer(text)]
    if not found:
        return text, None
    return _THINK.sub("", text).strip(), "\n".join(f for f in found if f) or None


def _markup(text: str, tools: Collection[str], thought: str | None, notes: tuple[str, ...]) -> ParsedTurn:
    schemas: dict[str, dict[str, Any]] = {t: {} for t in tools}
    calls = []
    for found in find_markup_calls(text, schemas):
        call_notes = ("coerced",) if found.repaired else ()
        calls.append(ParsedCall(found.name, found.arguments, found.raw, "markup", call_notes))
    if not calls:
        return ParsedTurn(thought, status="failed", kind="markup", notes=notes + ("markup_unreadable",))
    head = text.split("<", 1)[0].strip() or thought
    return _with_calls(calls, "markup", head, notes)


def _code(text: str, tools: Collection[str], thought: str | None, notes: tuple[str, ...]) -> ParsedTurn | None:
    if not tools:
        return None
    names = set(tools) | set(_ANSWER_CALLS)
    calls = [c for block in code_blocks(text) for c in parse_code_calls(block, names)]
    if not calls:
        return None
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL).strip() or thought
    tool_calls = [c for c in calls if c.name not in _ANSWER_CALLS]
    answers = [c for c in calls if c.name in _ANSWER_CALLS]
    if not tool_calls and answers:
        value = next(iter(answers[-1].arguments.values()), "") if answers[-1].arguments else ""
        return ParsedTurn(prose, answer=str(value), kind="code", notes=notes)
    return _with_calls(tool_calls, "code", prose, notes)


def parse_text(text: str | None, tools: Collection[str] = ()) -> ParsedTurn:
    """Read a text turn with every text protocol, in a fixed order.

    Args:
        text: the assistant's text (``None`` counts as empty).
        tools: tool names known for the attempt; bare JSON, pythonic and code calls
            are only recognised for these names (ReAct and fenced JSON accept any).

    Returns:
        A :class:`ParsedTurn`; never raises.
    """
    body, thinking = split_think(text or "")
    notes: tuple[str, ...] = ("think_tags_removed",) if thinking else ()
    if not body.strip():
        return ParsedTurn(thinking, status="failed", notes=notes + ("empty_turn",))
    if has_tool_markup(body):
        return _markup(body, tools, thinking, notes)
    react = parse_react(body, tools)
    if react is not None:
        thought = react.thought or thinking
        if react.call is not None:
            return _with_calls([react.call], "react", thought, notes)
        if react.final_answer is not None:
            status: ParseStatus = "repaired" if react.notes else "ok"
            return ParsedTurn(thought, answer=react.final_answer, status=status, kind="react", notes=notes + react.notes)
        return ParsedTurn(thought, status="failed", kind="react", notes=notes + react.notes)
    calls, final = parse_json_blocks(body, tools)
    if calls:
        return _with_calls(calls, "json", _prose(body) or thinking, notes)
    if final is not None:
        return ParsedTurn(_prose(body) or thinking, answer=final, kind="json", notes=notes)
    pythonic = find_python_calls(body, {t: {} for t in tools})
    if pythonic:
        found = [ParsedCall(c.name, c.arguments, c.raw, "python", ()) for c in pythonic]
        return _with_calls(found, "python", thinking, notes)
    code = _code(body, tools, thinking, notes)
    if code is not None:
        return code
    if _ATTEMPT.search(body) and any(t in body for t in tools):
        return ParsedTurn(thinking, status="failed", kind="json", notes=notes + ("call_unreadable",))
    return ParsedTurn(thinking, answer=body.strip(), kind="text", notes=notes)


def _prose(text: str) -> str | None:
    rest = re.sub(r"```.*?```", "", text, flags=re.DOTALL).strip()
    return rest if rest and not rest.startswith(("{", "[")) else None


def structured_call(call: dict[str, Any]) -> ParsedCall:
    """A ``tool_calls`` entry of the reassembled turn as a :class:`ParsedCall`.

    Repairs made by the wire's arguments ladder are listed in ``notes``; arguments
    that are unreadable or not an object give ``arguments=None`` (status ``failed``).
    """
    name = call.get("name") or ""
    raw = call.get("arguments_raw")
    args = call.get("arguments")
    notes: list[str] = [] if name else ["no_name"]
    if call.get("repaired") or args is None:
        parsed = parse_arguments(raw)
        notes.extend(parsed.steps or (["arguments_unparseable"] if parsed.value is None else []))
    if args is not None and not isinstance(args, dict):
        notes.append("arguments_not_object")
        args = None
    text = raw if isinstance(raw, str) else ""
    return ParsedCall(name, args if name else None, text, "fc", tuple(notes), call_id=call.get("id"))


def parse_completion(completion: dict[str, Any] | None, tools: Collection[str] = (), offered: bool = False) -> ParsedTurn:
    """Read one reassembled assistant turn.

    Args:
        completion: ``Exchange.completion`` (contract shape), or ``None``.
        tools: tool names known for the attempt.
        offered: the request offered tools (``tools``/``functions``): a call written as
            text then did not go through the structured channel (noted ``call_in_content``).

    Returns:
        A :class:`ParsedTurn`; ``kind`` is ``fc`` for structured calls.
    """
    assistant = mapping(mapping(completion).get("assistant"))
    content = assistant.get("content")
    reasoning = assistant.get("reasoning")
    structured = [c for c in items(assistant.get("tool_calls")) if isinstance(c, dict)]
    if structured:
        calls = [structured_call(c) for c in structured]
        thought = (content or "").strip() or reasoning
        return _with_calls(calls, "fc", thought, ())
    turn = parse_text(content, tools)
    thought = turn.thought or reasoning
    if offered and turn.calls:
        noted = tuple(ParsedCall(c.name, c.arguments, c.raw, c.kind, c.notes + ("call_in_content",)) for c in turn.calls)
        return ParsedTurn(thought, noted, None, worst([c.status for c in noted]), turn.kind, turn.notes)
    return ParsedTurn(thought, turn.calls, turn.answer, turn.status, turn.kind, turn.notes)


def every_parse(text: str, tools: Collection[str] = ()) -> dict[str, Any]:
    """What each parser extracts from ``text`` on its own (for ``probegate debug-parse``).

    Returns:
        ``{"chosen": ParsedTurn JSON, "parsers": {name: [call JSON] | answer | None}}``.
    """
    schemas: dict[str, dict[str, Any]] = {t: {} for t in tools}
    react = parse_react(text, tools)
    calls, final = parse_json_blocks(text, tools)
    code = [c for b in code_blocks(text) for c in parse_code_calls(b, set(tools) or None)]
    return {
        "chosen": parse_text(text, tools).to_json(),
        "parsers": {
            "markup": [c.to_json() for c in find_markup_calls(text, schemas)] if has_tool_markup(text) else [],
            "react": None
            if react is None
            else {"call": react.call.to_json() if react.call else None, "final_answer": react.final_answer, "notes": list(react.notes)},
            "json": {"calls": [c.to_json() for c in calls], "final_answer": final},
            "python": [c.to_json() for c in find_python_calls(text, schemas)],
            "code": [c.to_json() for c in code],
        },
    }
