"""Tolerant parsers for tool calls written as text (pure, no I/O).

Each parser reads one protocol and says what it had to repair, so a trajectory can
tell a clean call from one that only a forgiving reader would accept:

- ReAct: ``Thought:`` / ``Action:`` / ``Action Input:`` / ``Final Answer:``
  (:func:`parse_react`);
- fenced or bare JSON: ``{"action": ..., "action_input": ...}`` (LangChain structured
  chat) and ``{"name": ..., "arguments": ...}`` shapes (:func:`parse_json_blocks`);
- ``key=value`` argument lists (:func:`parse_kv`);
- Python code that calls tools as functions (:mod:`probegate.scorer.rebuild.code_calls`).

``<tool_call>`` markup and whole-text pythonic calls are read by
:mod:`probegate.wire.content_calls`, which the gateway uses too; arguments go through
the wire's repair ladder (:func:`probegate.wire.arguments.parse_arguments`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from probegate.wire.arguments import parse_arguments
from probegate.scorer.rebuild.code_calls import FENCE, code_blocks, parse_code_calls
from probegate.scorer.rebuild.parsed import ParsedCall

_ACTION = re.compile(r"^[ \t>*_#]*Action[*_]*[ \t]*(?:\d+[ \t]*)?:[*_]*[ \t]*(.*)$", re.IGNORECASE | re.MULTILINE)
_ACTION_INPUT = re.compile(r"^[ \t>*_#]*Action[ \t]*Input[*_]*[ \t]*(?:\d+[ \t]*)?:[*_]*", re.IGNORECASE | re.MULTILINE)
_FINAL = re.compile(r"^[ \t>*_#]*Final[ \t]*Answer[*_]*[ \t]*:[*_]*[ \t]*", re.IGNORECASE | re.MULTILINE)
_THOUGHT = re.compile(r"^[ \t>*_#]*Thought[*_]*[ \t]*:[*_]*[ \t]*", re.IGNORECASE | re.MULTILINE)
_STOP = re.compile(r"^[ \t>*_#]*(Observation|Thought|Action)[*_]*[ \t]*:", re.IGNORECASE | re.MULTILINE)
_BRACKET = re.compile(r"^([\w.\-]+)\s*\[(.*)\]$", re.DOTALL)
_KV = re.compile(
    r"""\s*([A-Za-z_][\w.\-]*)\s*=\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^,\n]*?)\s*(?:[,\n;]|$)"""
)


@dataclass(frozen=True)
class ReactParse:
    """What :func:`parse_react` found: a call, a final answer, or an attempt it could not read."""

    thought: str | None
    call: ParsedCall | None = None
    final_answer: str | None = None
    notes: tuple[str, ...] = field(default=())
    failed: bool = False


def parse_json_value(text: str) -> tuple[Any, tuple[str, ...]]:
    """Parse a JSON-ish value with the wire repair ladder.

    Returns:
        ``(value, notes)``; ``value`` is ``None`` when nothing could be parsed.
    """
    parsed = parse_arguments(text)
    notes = tuple(parsed.steps) + tuple(
        f for f in parsed.flags if f in ("arguments_double_encoded", "arguments_trailing_data")
    )
    return parsed.value, notes


def _scalar(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none"):
        return None
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?", text):
        return float(text)
    return text


def parse_kv(text: str) -> dict[str, Any] | None:
    """Read ``key=value`` pairs (``city="New York", days=3``); ``None`` unless the
    whole text is such pairs. Bare values become numbers, booleans or ``None``."""
    text = text.strip()
    if "=" not in text:
        return None
    out: dict[str, Any] = {}
    pos = 0
    while pos < len(text):
        match = _KV.match(text, pos)
        if not match or match.end() == pos:
            return None
        key, value = match.group(1), match.group(2).strip()
        if value[:1] in ("'", '"') and value[-1:] == value[:1] and len(value) >= 2:
            out[key] = value[1:-1].replace("\\" + value[0], value[0])
        else:
            out[key] = _scalar(value)
        pos = match.end()
    return out or None


def _clean_name(name: str) -> tuple[str, tuple[str, ...]]:
    stripped = name.strip().strip("`*_'\"").strip().rstrip(".").strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        stripped = stripped[1:-1].strip()
    return stripped, (("name_decorated",) if stripped != name.strip() else ())


def _known(name: str, tools: Collection[str]) -> tuple[str, tuple[str, ...]]:
    if not tools or name in tools:
        return name, ()
    for tool in tools:
        if tool.lower() == name.lower():
            return tool, ("name_case",)
    return name, ()


def parse_action_input(text: str) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """Read the text after ``Action Input:`` as an arguments object.

    Order: JSON (with the repair ladder; fences removed), ``key=value`` pairs, then
    the plain text wrapped as ``{"input": text}``. Returns ``(arguments, notes)``.
    """
    body = text.strip()
    notes: list[str] = []
    fence = FENCE.search(body)
    if fence:
        body, notes = fence.group(2).strip(), ["fence_removed"]
    if not body:
        return {}, tuple(notes + ["no_action_input"])
    value, repairs = parse_json_value(body)
    if isinstance(value, dict):
        return value, tuple(notes) + repairs
    kv = parse_kv(body)
    if kv is not None:
        return kv, tuple(notes + ["key_value"])
    if isinstance(value, str):
        return {"input": value}, tuple(notes + ["input_string"])
    return {"input": body}, tuple(notes + ["input_text"])


def _react_call(name_line: str, input_text: str | None, raw: str, tools: Collection[str]) -> ParsedCall:
    bracket = _BRACKET.match(name_line.strip())
    if bracket and input_text is None:
        name, notes = _known(bracket.group(1), tools)
        return ParsedCall(name, {"input": bracket.group(2).strip()}, raw, "react", notes + ("bracket_input",))
    if "(" in name_line and input_text is None:
        for call in parse_code_calls(name_line, tools or None):
            return ParsedCall(call.name, call.arguments, raw, "react", ("python_call",) + call.notes)
    name, notes = _clean_name(name_line)
    name, case = _known(name, tools)
    if input_text is None:
        return ParsedCall(name, {}, raw, "react", notes + case + ("no_action_input",))
    args, arg_notes = parse_action_input(input_text)
    return ParsedCall(name, args, raw, "react", notes + case + arg_notes)


def _section(text: str, start: int) -> str:
    stop = _STOP.search(text, start)
    return text[start : stop.start() if stop else len(text)]


def _thought(text: str, end: int) -> str | None:
    head = _THOUGHT.sub("", text[:end]).strip()
    return head or None


def parse_react(text: str, tools: Collection[str] = ()) -> ReactParse | None:
    """Read one ReAct turn; ``None`` when the text has no ReAct markers.

    The first of ``Action:`` and ``Final Answer:`` wins; a later one is ignored and
    noted (models often write the observation and answer themselves). Anything after
    an ``Observation:`` line the model wrote itself is ignored (``hallucinated_observation``).
    """
    action, final = _ACTION.search(text), _FINAL.search(text)
    if action is None and final is None:
        return None
    if final is not None and (action is None or final.start() < action.start()):
        ignored: tuple[str, ...] = ("action_after_final_ignored",) if action else ()
        answer = text[final.end() :].strip()
        return ReactParse(_thought(text, final.start()), final_answer=answer, notes=ignored)
    assert action is not None
    name_line = action.group(1)
    after = action.end()
    inp = _ACTION_INPUT.search(text, after)
    input_text = _section(text, inp.end()) if inp else None
    end = inp.end() + len(input_text or "") if inp else after
    rest = text[end:]
    notes: tuple[str, ...] = ()
    if re.search(r"^\s*Observation\s*:", rest, re.IGNORECASE | re.MULTILINE):
        notes += ("hallucinated_observation",)
    if final is not None:
        notes += ("final_answer_after_action_ignored",)
    if not name_line.strip():
        return ReactParse(_thought(text, action.start()), notes=notes + ("empty_action",), failed=True)
    raw = text[action.start() : end].strip()
    call = _react_call(name_line, input_text, raw, tools)
    call = ParsedCall(call.name, call.arguments, call.raw, call.kind, call.notes + notes)
    return ReactParse(_thought(text, action.start()), call=call, notes=notes, failed=call.arguments is None)


def _action_shape(obj: Any) -> tuple[str, Any] | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("action") or obj.get("name") or obj.get("tool") or obj.get("tool_name")
    if not isinstance(name, str):
        return None
    for key in ("action_input", "arguments", "parameters", "args", "input", "tool_input"):
        if key in obj:
            return name, obj[key]
    return (name, {}) if "action" in obj else None


def _next_open(text: str, start: int) -> int:
    hits = [p for p in (text.find("{", start), text.find("[", start)) if p >= 0]
    return min(hits) if hits else -1


def _json_objects(text: str) -> list[tuple[Any, str]]:
    decoder = json.JSONDecoder()
    found: list[tuple[Any, str]] = []
    i = 0
    while (i := _next_open(text, i)) >= 0:
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        found.append((obj, text[i:end]))
        i = end
    return found


def _blocks(text: str) -> list[tuple[str, bool]]:
    fences = [(m.group(2), True) for m in FENCE.finditer(text) if m.group(1).lower() in ("json", "", "tool_call")]
    return fences or [(text, False)]


def parse_json_blocks(text: str, tools: Collection[str] = ()) -> tuple[list[ParsedCall], str | None]:
    """Calls written as JSON objects, fenced (```json) or bare.

    A bare (unfenced) object counts only when its name is one of ``tools``. The
    action ``Final Answer`` (LangChain structured chat) is returned as the answer.

    Returns:
        ``(calls, final_answer)``.
    """
    calls: list[ParsedCall] = []
    for body, fenced in _blocks(text):
        for obj, raw in _json_objects(body):
            items = obj if isinstance(obj, list) else [obj]
            for item in items:
                shape = _action_shape(item)
                if shape is None:
                    continue
                name, args = shape
                if name.strip().lower() in ("final answer", "final_answer"):
                    answer = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
                    return calls, answer
                if not fenced and tools and name not in tools:
                    continue
                calls.append(_json_call(name, args, raw, fenced, tools))
    return calls, None


def _json_call(name: str, args: Any, raw: str, fenced: bool, tools: Collection[str]) -> ParsedCall:
    name, notes = _known(name, tools)
    notes += () if fenced else ("bare_json",)
    if isinstance(args, str) and not args.strip().startswith(("{", "[")):
        return ParsedCall(name, {"input": args}, raw, "json", notes + ("input_string",))
    value, repairs = parse_json_value(args) if isinstance(args, str) else (args, ())
    if isinstance(args, str):
        repairs = ("arguments_string",) + repairs
    value = value if isinstance(value, dict) else None
    return ParsedCall(name, value, raw, "json", notes + repairs)


__all__ = [
    "ParsedCall",
    "ReactParse",
    "code_blocks",
    "parse_action_input",
    "parse_code_calls",
    "parse_json_blocks",
    "parse_json_value",
    "parse_kv",
    "parse_react",
]
