"""Finding tool calls that a model wrote as text instead of structured ``tool_calls``.

These are *detections*: the gateway flags them (``tool_call_in_content``,
``tool_call_markup_in_content``) and the scorer's text-protocol parsers reuse them,
but they are never promoted into the assistant turn's ``tool_calls``.

Shapes recognised:
- markup: ``<tool_call>…</tool_call>`` holding JSON or ``<function=NAME>`` with
  ``<parameter=KEY>VALUE</parameter>``; ``<function=NAME>{json}</function>``;
  ``<|python_tag|>``, ``[TOOL_CALLS]``, ``<tool_code>``, DeepSeek's
  ``<｜tool▁call▁begin｜>`` tokens;
- JSON objects shaped like a call (``{"name": ..., "arguments"|"parameters": {...}}``
  or ``{"function": {...}}``) anywhere in the text, back to back or fenced;
- a pythonic call list (``[get_time(place="Osaka")]``) that is the whole text.
Parameter values from markup are strings; when a JSON Schema for the tool is known
they are coerced to its types (``"5"`` -> ``5`` for an integer).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from probegate.wire.arguments import parse_arguments
from probegate.wire.json_shapes import items, mapping

CallKind = Literal["markup", "json", "python"]

_MARKUP_TOKENS = (
    "<tool_call>",
    "</tool_call>",
    "<function=",
    "<|python_tag|>",
    "[TOOL_CALLS]",
    "<tool_code>",
    "<function_call>",
    "<|tool_call|>",
    "<|tool_calls_section_begin|>",
    "<\uff5ctool\u2581call\u2581begin\uff5c>",
    "<\uff5ctool\u2581calls\u2581begin\uff5c>",
)
_TOOL_CALL_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_FUNCTION_BLOCK = re.compile(r"<function=([\w.\-]+)>(.*?)(?:</function>|$)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([\w.\-]+)>\n?(.*?)\n?</parameter>", re.DOTALL)


@dataclass(frozen=True)
class TextCall:
    """A tool call found in text.

    Attributes:
        name: the tool name.
        arguments: parsed arguments, or ``None`` when they could not be parsed.
        raw: the text the call was read from.
        kind: ``markup``, ``json`` or ``python``.
        repaired: the arguments needed the repair ladder or type coercion.
    """

    name: str
    arguments: dict[str, Any] | None
    raw: str
    kind: CallKind
    repaired: bool = False
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form for storage."""
        return {
            "name": self.name,
            "arguments": self.arguments,
            "raw": self.raw,
            "kind": self.kind,
            "repaired": self.repaired,
        }


def has_tool_markup(text: str) -> bool:
    """Whether ``text`` contains a known tool-call markup token."""
    return any(token in text for token in _MARKUP_TOKENS)


def tool_schemas(request: Any) -> dict[str, dict[str, Any]]:
    """Map tool name -> JSON Schema parameters from a request's ``tools``/``functions``."""
    out: dict[str, dict[str, Any]] = {}
    if not isinstance(request, dict):
        return out
    for tool in items(request.get("tools")):
        if not isinstance(tool, dict):
            continue
        fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        name = fn.get("name")
        if isinstance(name, str):
            params = fn.get("parameters") or fn.get("input_schema") or {}
            out[name] = params if isinstance(params, dict) else {}
    for fn in items(request.get("functions")):
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            params = fn.get("parameters") or {}
            out[fn["name"]] = params if isinstance(params, dict) else {}
    return out


def coerce(value: str, schema: dict[str, Any] | None) -> tuple[Any, bool]:
    """Coerce a markup string value to the schema's type; returns (value, changed)."""
    kind = mapping(schema).get("type")
    text = value.strip()
    try:
        if kind == "integer" and re.fullmatch(r"[+-]?\d+", text):
            return int(text), True
        if kind == "number" and re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text):
            number = float(text)
            return (int(number) if number.is_integer() and "." not in text else number), True
        if kind == "boolean" and text.lower() in ("true", "false"):
            return text.lower() == "true", True
        if kind in ("object", "array"):
            return json.loads(text), True
    except ValueError:
        pass
    return value if kind == "string" else text, False


def find_markup_calls(text: str, schemas: dict[str, dict[str, Any]] | None = None) -> list[TextCall]:
    """Calls written as tool-call markup (Hermes/Qwen ``<tool_call>``, ``<function=…>``)."""
    schemas = schemas or {}
    calls: list[TextCall] = []
    blocks = [m.group(1) for m in _TOOL_CALL_BLOCK.finditer(text)] or [text]
    for block in blocks:
        functions = list(_FUNCTION_BLOCK.finditer(block))
        if functions:
            for fn in functions:
                calls.append(_function_block(fn.group(1), fn.group(2), fn.group(0), schemas))
            continue
        if "<tool_call>" in text:
            calls.extend(_json_calls_in(block, schemas, kind="markup", require_known=False))
    return calls


def _function_block(name: str, body: str, raw: str, schemas: dict[str, dict[str, Any]]) -> TextCall:
    props = mapping(mapping(schemas.get(name)).get("properties"))
    params = list(_PARAMETER.finditer(body))
    if params:
        args: dict[str, Any] = {}
        changed = False
        for p in params:
            value, did = coerce(p.group(2), props.get(p.group(1)))
            args[p.group(1)] = value
            changed = changed or did
        return TextCall(name, args, raw, "markup", repaired=changed)
    parsed = parse_arguments(body.strip())
    value = parsed.value if isinstance(parsed.value, dict) else None
    return TextCall(name, value, raw, "markup", repaired=parsed.repaired)


def _call_shape(obj: Any) -> tuple[str, Any] | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("name") or obj.get("tool") or obj.get("tool_name")
    if not isinstance(name, str):
        return None
    for key in ("arguments", "parameters", "args", "input", "tool_input"):
        if key in obj:
            return name, obj[key]
    return None


def _json_calls_in(
    text: str, schemas: dict[str, dict[str, Any]], *, kind: CallKind, require_known: bool
) -> list[TextCall]:
    calls: list[TextCall] = []
    decoder = json.JSONDecoder()
    i = 0
    while True:
        i = text.find("{", i)
        if i < 0:
            break
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        shape = _call_shape(obj)
        if shape and (not require_known or shape[0] in schemas):
            name, args = shape
            parsed = parse_arguments(args)
            value = parsed.value if isinstance(parsed.value, dict) else None
            calls.append(TextCall(name, value, text[i:end], kind, repaired=parsed.repaired))
        i = end if shape else i + 1
    return calls


def find_json_calls(text: str, schemas: dict[str, dict[str, Any]]) -> list[TextCall]:
    """JSON objects shaped like calls to one of the offered tools, anywhere in ``text``."""
    if not schemas:
        return []
    return _json_calls_in(text, schemas, kind="json", require_known=True)


def find_python_calls(text: str, schemas: dict[str, dict[str, Any]]) -> list[TextCall]:
    """A whole text that is a pythonic call (or list of calls) to offered tools."""
    stripped = text.strip().removeprefix("<|python_tag|>").strip()
    if not schemas or not stripped or "(" not in stripped:
        return []
    try:
        tree = ast.parse(stripped, mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return []
    nodes = tree.body.elts if isinstance(tree.body, (ast.List, ast.Tuple)) else [tree.body]
    calls: list[TextCall] = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))):
            return []
        name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        if name not in schemas or node.args:
            return []
        try:
            args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
        except (ValueError, SyntaxError):
            return []
        calls.append(TextCall(name, args, ast.get_source_segment(stripped, node) or "", "python"))
    return calls


def detect_content_calls(text: str | None, request: Any) -> tuple[list[TextCall], list[str]]:
    """Detect calls written in assistant text; returns (calls, flags).

    Flags: ``tool_call_markup_in_content`` when markup is present (markup wins over
    JSON inside it), else ``tool_call_in_content`` when call-shaped JSON or a pythonic
    call names an offered tool. Nothing is flagged when the request offered no tools:
    then text is the harness's own protocol (ReAct, code), not a wire anomaly.
    """
    schemas = tool_schemas(request)
    if not text or not schemas:
        return [], []
    if has_tool_markup(text):
        return find_markup_calls(text, schemas), ["tool_call_markup_in_content"]
    calls = find_json_calls(text, schemas) or find_python_calls(text, schemas)
    return calls, (["tool_call_in_content"] if calls else [])
