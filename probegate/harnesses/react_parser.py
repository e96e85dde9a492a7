"""Reading one ReAct turn (``Thought`` / ``Action`` / ``Action Input`` / ``Final Answer``).

Pure and tolerant. Chatter around the protocol is ignored, an ``Observation:`` the
model invented after its action is cut off, and the action input goes through a
ladder: JSON (with :func:`probegate.wire.arguments.parse_arguments`' repairs, which
include Python literals), then a bare value for a one-parameter tool, then
``key=value`` pairs. Calls written in another shape (``<tool_call>`` markup, call-
shaped JSON, a Python call) are accepted as repaired actions. Every result says
whether it was clean or repaired, and when nothing parses, why.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from probegate.harnesses.schemas import parameter_order
from probegate.wire.arguments import parse_arguments
from probegate.wire.content_calls import (
    coerce,
    find_json_calls,
    find_markup_calls,
    find_python_calls,
)

ReactKind = Literal["action", "final", "none"]

_LEAD = r"^[ \t*#>_`-]*"
_COLON = r"[ \t*_`]*:[ \t*_]*"
_ACTION = re.compile(_LEAD + r"action(?:[ \t]*\d+)?" + _COLON + r"(.*)$", re.I | re.M)
_INPUT = re.compile(_LEAD + r"action[ \t_]*input(?:[ \t]*\d+)?" + _COLON, re.I | re.M)
_FINAL = re.compile(_LEAD + r"(?:final[ \t_]*answer|answer)" + _COLON, re.I | re.M)
_THOUGHT = re.compile(_LEAD + r"thought(?:[ \t]*\d+)?" + _COLON, re.I | re.M)
_OBSERVATION = re.compile(_LEAD + r"observation(?:[ \t]*\d+)?" + _COLON, re.I | re.M)
_NEXT_KEYWORD = re.compile(
    _LEAD + r"(?:thought|observation|action|final[ \t_]*answer)\b[^\n]*:", re.I | re.M
)
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)
_FENCE = re.compile(r"^```[\w-]*\s*\n?(.*?)\n?```\s*$", re.S)
_PAIR = re.compile(r"""([A-Za-z_]\w*)\s*[=:]\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^,;\n]+)""")


@dataclass(frozen=True)
class ReactReply:
    """One turn read as ReAct.

    Attributes:
        kind: ``action`` (call ``tool`` with ``arguments``), ``final`` (``answer``)
            or ``none`` (nothing usable; ``problem`` says why).
        thought: the turn's reasoning text, when any.
        tool: the tool to call.
        arguments: the call's arguments.
        answer: the final answer.
        repaired: the turn needed a fallback to be read.
        problem: why the turn could not be read.
    """

    kind: ReactKind
    thought: str | None = None
    tool: str | None = None
    arguments: dict[str, Any] | None = None
    answer: str | None = None
    repaired: bool = False
    problem: str | None = None


def read_react_reply(text: str | None, schemas: dict[str, dict[str, Any]]) -> ReactReply:
    """Read one assistant turn.

    Args:
        text: the assistant's content.
        schemas: tool name -> JSON Schema of its parameters, for the offered tools.

    Returns:
        A :class:`ReactReply`; never raises.
    """
    body = _THINK.sub("", text or "").strip()
    if not body:
        return ReactReply("none", problem="the reply was empty")
    thought = _thought(body)
    action = _ACTION.search(body)
    final = _FINAL.search(body)
    if action and (final is None or action.start() < final.start()):
        return _action(body, action, schemas, thought)
    if final:
        answer = _block(body, final.end())
        if answer:
            return ReactReply("final", thought=thought, answer=answer)
        return ReactReply("none", thought=thought, problem="the Final Answer was empty")
    return _fallback(body, schemas, thought)


def _thought(body: str) -> str | None:
    match = _THOUGHT.search(body)
    if not match:
        return None
    end = _NEXT_KEYWORD.search(body, match.end())
    return body[match.end() : end.start() if end else len(body)].strip() or None


def _cut_observation(text: str) -> str:
    match = _OBSERVATION.search(text)
    return text[: match.start()] if match else text


def _action(body: str, match: re.Match[str], schemas: dict[str, dict[str, Any]], thought: str | None) -> ReactReply:
    value = match.group(1).strip().strip("`").strip()
    rest = _cut_observation(body[match.end() :])
    inline = _inline_call(value, _cut_observation(body[match.start(1) :]).strip(), schemas)
    if inline is not None:
        name, args = inline
        return _finish(name, args, True, thought)
    name, exact = match_tool(value, schemas)
    if not name:
        return ReactReply("none", thought=thought, problem="the Action line names no tool")
    input_match = _INPUT.search(rest)
    raw = _block(rest, input_match.end()) if input_match else ""
    args, repaired = parse_action_input(raw, schemas.get(name))
    return _finish(name, args, repaired or not exact, thought)


def _finish(name: str, args: dict[str, Any] | None, repaired: bool, thought: str | None) -> ReactReply:
    if args is None:
        return ReactReply("none", thought=thought, tool=name, problem=f"cannot read the Action Input for {name}")
    return ReactReply("action", thought=thought, tool=name, arguments=args, repaired=repaired)


def _block(text: str, start: int) -> str:
    end = _NEXT_KEYWORD.search(text, start)
    return text[start : end.start() if end else len(text)].strip()


def match_tool(value: str, schemas: dict[str, dict[str, Any]]) -> tuple[str, bool]:
    """The tool an Action line names; returns (name, exact).

    Exact names win; then a case-insensitive match; then the longest offered tool
    name appearing as a word in the line; else the line's first word as written
    (the probe then answers ``unknown_tool``).
    """
    cleaned = value.strip().strip("`'\"*[]().").strip()
    if cleaned in schemas:
        return cleaned, True
    lowered = {name.lower(): name for name in schemas}
    if cleaned.lower() in lowered:
        return lowered[cleaned.lower()], False
    found = [n for n in schemas if re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", value, re.I)]
    if found:
        return max(found, key=len), False
    first = re.match(r"[A-Za-z_][\w.-]*", cleaned)
    return (first.group(0) if first else ""), False


def _inline_call(
    value: str, tail: str, schemas: dict[str, dict[str, Any]]
) -> tuple[str, dict[str, Any] | None] | None:
    """An action written on the Action line itself: JSON (which may run over several
    lines, hence ``tail``) or ``tool(...)`` / ``tool[...]``."""
    if value.startswith("{"):
        parsed = parse_arguments(tail)
        obj = parsed.value if isinstance(parsed.value, dict) else None
        if obj is not None:
            name = obj.get("action") or obj.get("tool") or obj.get("name")
            args = obj.get("action_input", obj.get("arguments", obj.get("args", obj.get("parameters"))))
            if isinstance(name, str):
                if isinstance(args, dict):
                    return name, args
                text = args if isinstance(args, str) else ("" if args is None else json.dumps(args))
                return name, parse_action_input(text, schemas.get(name))[0]
    call = re.match(r"^([A-Za-z_][\w.-]*)\s*([(\[])(.*)([)\]])\s*$", value, re.S)
    if call and call.group(1) in schemas:
        name = call.group(1)
        if call.group(2) == "(":
            args = _python_call_args(value, schemas.get(name) or {})
            if args is not None:
                return name, args
        return name, parse_action_input(call.group(3), schemas.get(name))[0]
    return None


def _python_call_args(source: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    if not isinstance(node, ast.Call):
        return None
    order = parameter_order(schema)
    try:
        args = {order[i]: ast.literal_eval(a) for i, a in enumerate(node.args) if i < len(order)}
        args.update({kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg})
    except (ValueError, SyntaxError, TypeError):
        return None
    return args if len(node.args) <= len(order) else None


def parse_action_input(raw: str, schema: dict[str, Any] | None) -> tuple[dict[str, Any] | None, bool]:
    """Read an Action Input; returns (arguments or ``None``, repaired).

    Ladder: empty -> ``{}``; JSON (and its repairs: Python literal, trailing commas,
    full-width punctuation, first value); a bare value for a one-parameter tool;
    ``key=value`` / ``key: value`` pairs coerced to the schema's types.
    """
    text = raw.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text:
        return {}, False
    parsed = parse_arguments(text)
    if isinstance(parsed.value, dict):
        return parsed.value, parsed.repaired
    single = _single_parameter(schema)
    if parsed.value is not None and not isinstance(parsed.value, (dict, list)) and single:
        return {single: parsed.value}, True
    pairs = _pairs(text, schema)
    if pairs:
        return pairs, True
    if single:
        return {single: coerce(text.strip("'\""), ((schema or {}).get("properties") or {}).get(single))[0]}, True
    return None, False


def _single_parameter(schema: dict[str, Any] | None) -> str | None:
    props = list(((schema or {}).get("properties") or {}).keys())
    required = (schema or {}).get("required") or []
    if len(props) == 1:
        return str(props[0])
    if len(required) == 1 and required[0] in props:
        return str(required[0])
    return None


def _pairs(text: str, schema: dict[str, Any] | None) -> dict[str, Any]:
    props = (schema or {}).get("properties") or {}
    out: dict[str, Any] = {}
    for key, value in _PAIR.findall(text):
        value = value.strip()
        if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) >= 2:
            try:
                value = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                value = value[1:-1]
            out[key] = value
        else:
            out[key] = coerce(value, props.get(key))[0]
    if props and not any(k in props for k in out):
        return {}
    return out


def _fallback(body: str, schemas: dict[str, dict[str, Any]], thought: str | None) -> ReactReply:
    calls = find_markup_calls(body, schemas) or find_json_calls(body, schemas) or find_python_calls(body, schemas)
    if calls:
        call = calls[0]
        if call.arguments is None:
            problem = f"cannot read the arguments for {call.name}"
            return ReactReply("none", thought=thought, tool=call.name, problem=problem)
        return ReactReply("action", thought=thought, tool=call.name, arguments=call.arguments, repaired=True)
    return ReactReply("none", thought=thought, problem="the reply has neither an Action nor a Final Answer")
