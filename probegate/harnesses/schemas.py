"""Tool schemas as each harness shows them: OpenAI tool objects, text, Python.

Pure functions over the OpenAI tool objects the probes serve
(``{"type": "function", "function": {"name", "description", "parameters"}}``).
"""

from __future__ import annotations

import json
from typing import Any

_PY_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "object": "dict", "null": "None"}


def tool_function(tool: dict[str, Any]) -> dict[str, Any]:
    """The ``function`` part of an OpenAI tool object (or the object itself)."""
    fn = tool.get("function")
    return fn if isinstance(fn, dict) else tool


def schemas_of(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Tool name -> JSON Schema of its parameters."""
    return {tool_function(t)["name"]: tool_function(t).get("parameters") or {} for t in tools}


def parameter_order(schema: dict[str, Any] | None) -> list[str]:
    """Parameter names, required ones first, each group in schema order."""
    props = list(((schema or {}).get("properties") or {}).keys())
    required = [p for p in (schema or {}).get("required") or [] if p in props]
    return required + [p for p in props if p not in required]


def describe_tools(tools: list[dict[str, Any]]) -> str:
    """One block per tool: ``name: description`` and its JSON Schema parameters."""
    lines = []
    for tool in tools:
        fn = tool_function(tool)
        params = json.dumps(fn.get("parameters") or {}, ensure_ascii=False)
        lines.append(f"{fn.get('name')}: {(fn.get('description') or '').strip()}\n  parameters: {params}")
    return "\n".join(lines)


def python_type(schema: dict[str, Any] | None) -> str:
    """A Python annotation for a JSON Schema (``{"type": "array", "items":
    {"type": "string"}}`` -> ``list[str]``); ``Any`` when it cannot tell."""
    schema = schema or {}
    if "enum" in schema and schema["enum"]:
        return "Literal[" + ", ".join(repr(v) for v in schema["enum"]) + "]"
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return " | ".join(dict.fromkeys(python_type(o) for o in options))
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(dict.fromkeys(python_type({**schema, "type": k}) for k in kind))
    if kind == "array":
        return f"list[{python_type(schema.get('items'))}]"
    return _PY_TYPES.get(str(kind), "Any")


def python_signature(tool: dict[str, Any]) -> str:
    """The tool as a Python stub the code harness shows the model.

    Example: ``def query_stock(sku: str, warehouse: str | None = None) -> dict:``
    followed by a docstring with the description and each parameter's own text.
    """
    fn = tool_function(tool)
    schema = fn.get("parameters") or {}
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    params = []
    for name in parameter_order(schema):
        annotation = python_type(props.get(name))
        params.append(f"{name}: {annotation}" if name in required else f"{name}: {annotation} | None = None")
    doc = [(fn.get("description") or "").strip() or "Calls the tool."]
    doc += [f"{n}: {props[n]['description']}" for n in parameter_order(schema) if props[n].get("description")]
    body = "\n    ".join(doc)
    return f'def {fn.get("name")}({", ".join(params)}) -> dict:\n    """{body}"""'
