"""``bound-strings[=N]``: a string parameter of an offered tool schema with no ``maxLength``,
``pattern``, ``enum``, ``const`` or ``format`` gets ``maxLength: N`` (default 1000
characters; applied after ``cap-max-length``).

llama-cpp-python's chatml-function-calling generates tool-call arguments under a grammar
with ``max_tokens=None`` whatever the request says, so a small model that never closes a
string fills the context window (up to 105 s a turn here, then HTTP 400); the bound makes
the grammar close it. The probes still enforce the real limits.
"""

from __future__ import annotations

from typing import Any

from probegate.gateway.compat.rule import Change, Rule, walk
from probegate.wire.json_shapes import items

DEFAULT_STRING_BOUND = 1000
#: A string schema with one of these is already bounded (or shaped) by it.
STRING_SHAPES = ("maxLength", "pattern", "enum", "const", "format")


def _is_string_schema(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def _bound(schema: Any, limit: int, path: str, changes: list[Change]) -> None:
    for node, where in walk(schema, path):
        if _is_string_schema(node) and not any(key in node for key in STRING_SHAPES):
            node["maxLength"] = limit
            changes.append({"rule": "bound-strings", "path": f"{where}.maxLength", "from": None, "to": limit})


def rewrite(body: dict[str, Any], limit: int) -> list[Change]:
    changes: list[Change] = []
    for i, tool in enumerate(items(body.get("tools"))):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("parameters"), dict):
            _bound(fn["parameters"], limit, f"tools[{i}].function.parameters", changes)
    for i, fn in enumerate(items(body.get("functions"))):
        if isinstance(fn, dict) and isinstance(fn.get("parameters"), dict):
            _bound(fn["parameters"], limit, f"functions[{i}].parameters", changes)
    return changes


RULE = Rule("bound-strings", "give unbounded tool-schema strings maxLength N (argument runaway)", rewrite,
            param="number", default=DEFAULT_STRING_BOUND, unit="characters")
