"""Tool calls in Python code (code-writing agents, pythonic ``Action:`` lines). Pure.

A code-writing agent calls tools as functions; the probe log says what really ran,
these parsers say what the model *wrote*: keyword arguments read as literals,
run-time values kept as source text and noted.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from typing import Any

from probegate.scorer.rebuild.parsed import ParsedCall

#: A fenced block: group 1 is the language tag, group 2 the body.
FENCE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_CODE_LANGS = {"python", "py", "python3", "tool_code", "code", ""}


def _literal(node: ast.expr) -> tuple[Any, bool]:
    try:
        return ast.literal_eval(node), True
    except (ValueError, SyntaxError, TypeError):
        return ast.unparse(node), False


def parse_code_calls(code: str, tools: Collection[str] | None) -> list[ParsedCall]:
    """Calls to ``tools`` (any name when ``None``) in Python code, in source order.

    Keyword arguments are read as literals; a non-literal (a variable computed at run
    time) is kept as its source text and noted ``non_literal_argument``; positional
    arguments become ``_0``, ``_1``... and are noted ``positional_arguments``.
    """
    try:
        tree = ast.parse(code.strip())
    except (SyntaxError, ValueError, RecursionError):
        return []
    calls: list[ParsedCall] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name is None or (tools is not None and name not in tools):
            continue
        calls.append(_code_call(name, node, code))
    return sorted(calls, key=lambda c: code.find(c.raw) if c.raw else 0)


def _code_call(name: str, node: ast.Call, code: str) -> ParsedCall:
    args: dict[str, Any] = {}
    notes: list[str] = []
    for i, arg in enumerate(node.args):
        args[f"_{i}"], _ = _literal(arg)
        notes.append("positional_arguments")
    for kw in node.keywords:
        if kw.arg is None:
            notes.append("star_arguments")
            continue
        args[kw.arg], literal = _literal(kw.value)
        if not literal:
            notes.append("non_literal_argument")
    raw = ast.get_source_segment(code.strip(), node) or ""
    return ParsedCall(name, args, raw, "code", tuple(dict.fromkeys(notes)))


def code_blocks(text: str) -> list[str]:
    """The bodies of fenced code blocks that may hold Python (``python``, ``py``, untagged)."""
    return [m.group(2) for m in FENCE.finditer(text) if m.group(1).lower() in _CODE_LANGS]
