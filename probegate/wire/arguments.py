"""Parsing tool-call arguments as servers really send them.

Strict JSON comes first: a string that parses is never touched. Only failures go
through the repair ladder, in this fixed order, each step working on the output of
the previous one:

1. Python literal (``{'a': 1}``, ``True``/``None``) via :func:`ast.literal_eval`;
2. trailing commas before ``}`` or ``]`` removed, outside strings;
3. full-width quotes, colons and commas in structural positions made ASCII
   (``{“q”: “明天”}``), text inside strings kept;
4. the first complete JSON value, when trailing data follows it
   (``{"a": 1}{"a":`` -> ``{"a": 1}``, flagged ``arguments_trailing_data``).

Empty or whitespace-only arguments mean ``{}`` (flagged ``empty_arguments``). A
string nothing repairs stays unparseable: its value is ``None`` and it is flagged
``arguments_unparseable``; it is never guessed or replaced by ``{}``.
"""

from __future__ import annotations

import ast
import json
import math
from dataclasses import dataclass, field
from typing import Any

_FULLWIDTH_QUOTES = {"\u201c", "\u201d", "\uff02", "\u201e", "\u201f"}
_FULLWIDTH_STRUCTURE = {"\uff1a": ":", "\uff0c": ",", "\uff5b": "{", "\uff5d": "}"}


@dataclass(frozen=True)
class ParsedArguments:
    """The outcome of parsing one arguments string.

    Attributes:
        value: the parsed JSON value (normally a dict), or ``None`` when unparseable.
        raw: the string as sent.
        repaired: strict JSON failed and the ladder produced ``value``.
        flags: anomaly names (``empty_arguments``, ``arguments_repaired``,
            ``arguments_trailing_data``, ``arguments_unparseable``,
            ``arguments_not_object``, ``arguments_double_encoded``).
        steps: the ladder steps that were applied, in order.
    """

    value: Any
    raw: str
    repaired: bool = False
    flags: tuple[str, ...] = ()
    steps: tuple[str, ...] = field(default=())


def _is_plain_json(value: Any) -> bool:
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_plain_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain_json(v) for k, v in value.items())
    return False


def _strict(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def _python_literal(text: str) -> tuple[bool, Any]:
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, (dict, list)) and _is_plain_json(value):
        return True, value
    return False, None


def strip_trailing_commas(text: str) -> str:
    """Remove commas that directly precede ``}`` or ``]`` (whitespace between), outside strings."""
    out: list[str] = []
    in_string = False
    escaped = False
    pending: list[str] = []  # a comma and the whitespace after it, held back
    for ch in text:
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if pending:
            if ch.isspace():
                pending.append(ch)
                continue
            if ch in "}]":
                out.extend(pending[1:])
            else:
                out.extend(pending)
            pending = []
        if ch == ",":
            pending = [ch]
            continue
        if ch == '"':
            in_string = True
        out.append(ch)
    out.extend(pending)
    return "".join(out)


def ascii_structure(text: str) -> str:
    """Replace full-width quotes (and colons, commas, braces) outside strings with ASCII.

    A string opened by a full-width quote is closed by the next full-width quote;
    an ASCII double quote inside it is escaped so the result stays valid JSON.
    """
    out: list[str] = []
    mode: str | None = None  # None, 'ascii' (opened by "), 'wide' (opened by “)
    escaped = False
    for ch in text:
        if mode == "ascii":
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                mode = None
            continue
        if mode == "wide":
            if escaped:
                escaped = False
                out.append(ch)
            elif ch == "\\":
                escaped = True
                out.append(ch)
            elif ch in _FULLWIDTH_QUOTES:
                out.append('"')
                mode = None
            elif ch == '"':
                out.append('\\"')
            else:
                out.append(ch)
            continue
        if ch == '"':
            mode = "ascii"
            out.append(ch)
        elif ch in _FULLWIDTH_QUOTES:
            mode = "wide"
            out.append('"')
        else:
            out.append(_FULLWIDTH_STRUCTURE.get(ch, ch))
    return "".join(out)


def first_value(text: str) -> tuple[bool, Any, bool]:
    """Decode the first complete JSON value; returns (ok, value, had_trailing_data)."""
    stripped = text.lstrip()
    try:
        value, end = json.JSONDecoder().raw_decode(stripped)
    except (ValueError, RecursionError):
        return False, None, False
    return True, value, bool(stripped[end:].strip())


def parse_arguments(raw: Any) -> ParsedArguments:
    """Parse a tool call's arguments as sent on the wire.

    Args:
        raw: the arguments string; a dict/list (a dialect that sends objects) is
            accepted as already parsed and its ``raw`` is the compact JSON text.

    Returns:
        A :class:`ParsedArguments`; never raises.
    """
    if raw is None:
        return ParsedArguments(value={}, raw="", flags=("empty_arguments",))
    if not isinstance(raw, str):
        text = json.dumps(raw, separators=(",", ":"), ensure_ascii=False)
        return _checked(ParsedArguments(value=raw, raw=text))
    if not raw.strip():
        return ParsedArguments(value={}, raw=raw, flags=("empty_arguments",))
    ok, value = _strict(raw)
    if ok and isinstance(value, str) and value.strip().startswith("{"):
        inner_ok, inner = _strict(value)
        if inner_ok and isinstance(inner, dict):
            return ParsedArguments(value=inner, raw=raw, flags=("arguments_double_encoded",))
    if ok:
        return _checked(ParsedArguments(value=value, raw=raw))
    return _repair(raw)


def _repair(raw: str) -> ParsedArguments:
    steps: list[str] = []
    ok, value = _python_literal(raw)
    if ok:
        return _repaired(raw, value, ["python_literal"])
    text = strip_trailing_commas(raw)
    if text != raw:
        steps.append("trailing_comma")
        ok, value = _strict(text)
        if ok:
            return _repaired(raw, value, steps)
    wide = ascii_structure(text)
    if wide != text:
        steps.append("fullwidth_quotes")
        text = wide
        ok, value = _strict(text)
        if ok:
            return _repaired(raw, value, steps)
    ok, value, trailing = first_value(text)
    if ok and trailing and isinstance(value, (dict, list)):
        steps.append("first_value")
        result = _repaired(raw, value, steps)
        return ParsedArguments(
            value=result.value,
            raw=raw,
            repaired=True,
            flags=result.flags + ("arguments_trailing_data",),
            steps=result.steps,
        )
    return ParsedArguments(value=None, raw=raw, flags=("arguments_unparseable",), steps=tuple(steps))


def _repaired(raw: str, value: Any, steps: list[str]) -> ParsedArguments:
    parsed = ParsedArguments(
        value=value, raw=raw, repaired=True, flags=("arguments_repaired",), steps=tuple(steps)
    )
    return _checked(parsed)


def _checked(parsed: ParsedArguments) -> ParsedArguments:
    if parsed.value is not None and not isinstance(parsed.value, dict):
        return ParsedArguments(
            value=parsed.value,
            raw=parsed.raw,
            repaired=parsed.repaired,
            flags=parsed.flags + ("arguments_not_object",),
            steps=parsed.steps,
        )
    return parsed
