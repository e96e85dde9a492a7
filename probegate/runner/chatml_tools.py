"""The embedded server's prompt format: ChatML with tools, tool calls and tool results. Pure.

llama-cpp-python's own ``chatml-function-calling`` renders a ``role: "tool"`` message as
``<|im_start|>tool\\n`` with no content and no end marker (its template has branches for
system, user and assistant only), renders with HTML autoescape on (``"`` reaches the
model as ``&#34;``), and shows the tools only inside a system message. This module
renders what the model must see:

```
<|im_start|>system
{system text}

You can call these functions:
functions.get_order: Full details of one customer order ...
  order_id (string, required): Customer order id, e.g. ORD-5001.

To call functions, reply with functions.<name>: and the JSON arguments on the next line,
once per call. To reply in text, begin with message: on its own line.<|im_end|>
<|im_start|>user
Has ORD-5003 shipped?<|im_end|>
<|im_start|>assistant
functions.get_order:
{"order_id": "ORD-5003"}<|im_end|>
<|im_start|>tool
get_order (call_1) returned:
{"status": "processing"}<|im_end|>
<|im_start|>assistant
```

The tool result keeps the role ``tool``, as the model's own GGUF template (every role as
``<|im_start|>{role}\\n{content}<|im_end|>``) and llama.cpp's server render it for
SmolLM2, and says which call it answers (name and call id). Text goes in verbatim (no
escaping). Each tool is one line plus one line per parameter (types, enums, required),
not its JSON Schema: about half the prompt tokens of ``chatml-function-calling``'s
schema dump, and the prompt's cold evaluation is most of an attempt's time on a CPU.
Patterns, lengths and enums are enforced by the grammar the tool call is generated
under (see :func:`arguments_schema`), not by the prose.

The model's turn is generated in the same syntax it reads: ``message:`` then text, or
one or more ``functions.NAME:`` lines each followed by JSON arguments. The grammars
that constrain that choice are here too (GBNF text); :mod:`probegate.runner.chat_handler`
runs them on llama-cpp-python.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

START, END = "<|im_start|>", "<|im_end|>"
MESSAGE = "message:"
CALL_PREFIX = "functions."
INSTRUCTIONS = (
    "To call functions, reply with functions.<name>: and the JSON arguments on the next line, once per "
    "call. To reply in text, begin with message: on its own line."
)
#: ``maxLength`` above this is left out of the grammar: llama.cpp turns it into a
#: repetition that crashes it (SIGSEGV) near 2000; the probes still check the real limit.
GRAMMAR_MAX_LENGTH = 1000


def text_of(content: Any) -> str:
    """A message's content as text: a string as is, text parts joined, ``None`` as ``""``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return json.dumps(content, ensure_ascii=False)


def _function(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    fn = tool.get("function")
    return fn if isinstance(fn, Mapping) else tool


def tool_names(tools: Sequence[Mapping[str, Any]]) -> list[str]:
    """The offered tools' names, in order."""
    return [str(_function(t).get("name", "")) for t in tools if _function(t).get("name")]


def type_text(schema: Mapping[str, Any] | None) -> str:
    """A short type for a JSON Schema: ``string``, ``"a" | "b"``, ``array of integer``, ..."""
    schema = schema or {}
    if schema.get("enum"):
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return " | ".join(dict.fromkeys(type_text(o) for o in options))
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if kind == "array":
        return f"array of {type_text(schema.get('items'))}"
    if kind == "object" and schema.get("properties"):
        return json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    return str(kind or "any")


def describe_tool(tool: Mapping[str, Any]) -> str:
    """One tool as ``functions.NAME: description`` and one line per parameter."""
    fn = _function(tool)
    description = " ".join(str(fn.get("description") or "").split())
    lines = [f"{CALL_PREFIX}{fn.get('name')}:" + (f" {description}" if description else "")]
    params = fn.get("parameters") or {}
    required = set(params.get("required") or [])
    for name, schema in (params.get("properties") or {}).items():
        schema = schema if isinstance(schema, Mapping) else {}
        flags = [type_text(schema)] + (["required"] if name in required else [])
        if "default" in schema:
            flags.append(f"default {json.dumps(schema['default'], ensure_ascii=False)}")
        about = " ".join(str(schema.get("description") or "").split())
        lines.append(f"  {name} ({', '.join(flags)})" + (f": {about}" if about else ""))
    return "\n".join(lines)


def tools_text(tools: Sequence[Mapping[str, Any]]) -> str:
    """The block appended to the system message when tools are offered."""
    listed = "\n".join(describe_tool(t) for t in tools)
    return f"You can call these functions:\n{listed}\n\n{INSTRUCTIONS}"


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments.strip()
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)


def calls_of(message: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """An assistant message's tool calls as ``(call id, name, arguments text)``
    (``tool_calls``, or a legacy ``function_call``)."""
    out = []
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        out.append((str(call.get("id") or ""), str(fn.get("name") or ""), _arguments_text(fn.get("arguments"))))
    legacy = message.get("function_call")
    if not out and isinstance(legacy, Mapping):
        out.append(("", str(legacy.get("name") or ""), _arguments_text(legacy.get("arguments"))))
    return out


def calls_text(calls: Iterable[tuple[str, str]]) -> str:
    """``(name, arguments)`` pairs in the syntax the model generates."""
    return "\n".join(f"{CALL_PREFIX}{name}:\n{arguments}" for name, arguments in calls)


def _assistant(message: Mapping[str, Any], with_tools: bool) -> str:
    content = text_of(message.get("content"))
    calls = calls_of(message)
    parts = []
    if content or not calls:
        parts.append(f"{MESSAGE}\n{content}" if with_tools else content)
    if calls:
        parts.append(calls_text((name, args) for _, name, args in calls))
    return "\n".join(parts)


def _tool_result(message: Mapping[str, Any], names: Mapping[str, str]) -> str:
    call_id = str(message.get("tool_call_id") or "")
    name = str(message.get("name") or names.get(call_id) or "")
    about = " ".join(p for p in (name, f"({call_id})" if call_id else "") if p) or "the function"
    return f"{about} returned:\n{text_of(message.get('content'))}"


def _turn(role: str, text: str) -> str:
    return f"{START}{role}\n{text}{END}\n"


def render(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None) -> str:
    """The whole prompt, ending with the assistant's generation prompt.

    Args:
        messages: OpenAI chat messages (``system``/``developer``, ``user``,
            ``assistant`` with ``content`` and/or ``tool_calls``, ``tool``/``function``).
        tools: OpenAI tool objects; their list goes at the end of the first system
            message (a system message is added first when the request has none).

    Returns:
        ChatML text; content verbatim (never HTML-escaped).
    """
    with_tools = bool(tools)
    out = []
    names: dict[str, str] = {}
    rest = list(messages)
    if with_tools:
        head = rest[0] if rest and rest[0].get("role") in ("system", "developer") else None
        system = text_of(head.get("content")) if head else ""
        out.append(_turn("system", (f"{system}\n\n" if system else "") + tools_text(tools or [])))
        rest = rest[1:] if head else rest
    for message in rest:
        role = str(message.get("role") or "user")
        if role == "assistant":
            names.update({call_id: name for call_id, name, _ in calls_of(message) if call_id})
            out.append(_turn("assistant", _assistant(message, with_tools)))
        elif role in ("tool", "function"):
            out.append(_turn("tool", _tool_result(message, names)))
        else:
            out.append(_turn("system" if role == "developer" else role, text_of(message.get("content"))))
    return "".join(out) + f"{START}assistant\n"


def _literal(text: str) -> str:
    return json.dumps(text)


def _functions_rule(names: Sequence[str]) -> str:
    return "functions ::= " + " | ".join(_literal(f"{CALL_PREFIX}{n}:") for n in names)


def choice_grammar(names: Sequence[str], *, allow_message: bool = True) -> str:
    """GBNF for the first words of the turn: ``message:`` or ``functions.NAME:``."""
    root = "root ::= functions" + (f" | {_literal(MESSAGE)}" if allow_message else "")
    return f"{root}\n{_functions_rule(names)}\n"


def next_call_grammar(names: Sequence[str]) -> str:
    """GBNF after a call's arguments: nothing (the turn may end) or another call."""
    return f"root ::= (\"\\n\" functions)?\n{_functions_rule(names)}\n"


def arguments_schema(parameters: Any) -> dict[str, Any]:
    """The JSON Schema a tool call's arguments are generated under: the tool's, with
    ``maxLength`` above :data:`GRAMMAR_MAX_LENGTH` left out; ``{"type": "object"}`` when
    the tool has none."""
    if not isinstance(parameters, Mapping) or not parameters:
        return {"type": "object"}
    return _capped(parameters)


def _capped(node: Any) -> Any:
    if isinstance(node, Mapping):
        return {k: _capped(v) for k, v in node.items()
                if not (k == "maxLength" and isinstance(v, int) and v > GRAMMAR_MAX_LENGTH)}
    if isinstance(node, list):
        return [_capped(v) for v in node]
    return node


def parameters_of(tools: Sequence[Mapping[str, Any]], name: str) -> Any:
    """The ``parameters`` schema of the tool called ``name`` (``None`` if not offered)."""
    return next((_function(t).get("parameters") for t in tools if _function(t).get("name") == name), None)


def called_name(text: str) -> str | None:
    """The function name in ``functions.NAME:`` (possibly after a newline); ``None`` otherwise."""
    text = text.strip()
    if not text.startswith(CALL_PREFIX):
        return None
    return text[len(CALL_PREFIX):].rstrip(":") or None
