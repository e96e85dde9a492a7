"""Opt-in request shims for known framework x server interop faults (pure).

The gateway is transparent by default. A user who wants to evaluate a model behind a
server that rejects what their framework sends can turn on named rules; every rewrite
is recorded on the exchange (which rule, what changed) next to the original request.

Rules:
- ``null-content``: assistant messages with ``"content": null`` get ``""`` (CrewAI's
  follow-up after a tool call vs llama-cpp-python's string validation).
- ``tool-content-text``: a tool message whose ``content`` is a list of text parts gets
  their texts joined into one string (``langchain-mcp-adapters`` and the OpenAI Agents
  SDK pass an MCP tool result on as content parts; llama-cpp-python accepts only a
  string there and answers HTTP 500).
- ``args-as-string``: tool-call ``arguments`` given as an object in the history are
  sent as a JSON string.
- ``drop-params=NAME[,NAME...]``: remove top-level request parameters the server
  rejects (``parallel_tool_calls``, ``max_completion_tokens``, ...).
- ``max-tokens-alias``: ``max_completion_tokens`` is renamed ``max_tokens`` when the
  latter is absent.
- ``tool-choice-auto``: a request with ``tools`` and no ``tool_choice`` gets
  ``"tool_choice": "auto"`` (OpenAI's default, said out loud: llama-cpp-python's
  chatml-function-calling leaves the tools out of the prompt without it).
- ``cap-max-length[=N]``: ``maxLength`` above N (default 1000) is dropped from the
  offered tool schemas (llama.cpp turns it into a grammar repetition and crashes,
  SIGSEGV, on values like 2000). The probes still enforce the real limits.
- ``system-for-tools``: a chat request with ``tools`` and no system message gets an
  empty one first (llama-cpp-python's chatml-function-calling writes the tool list
  into the system message, so without one the tools never reach the model; LangChain's
  ``create_agent`` without a system prompt sends none).
- ``bound-strings[=N]``: a string parameter of an offered tool schema with no
  ``maxLength``, ``pattern``, ``enum``, ``const`` or ``format`` gets ``maxLength: N``
  (default 1000 characters; applied after ``cap-max-length``). llama-cpp-python's
  chatml-function-calling generates tool-call arguments under a grammar with
  ``max_tokens=None`` whatever the request says, so a small model that never closes
  a string fills the context window (up to 105 s a turn here, then HTTP 400); the bound
  makes the grammar close it. The probes still enforce the real limits.
- ``default-max-tokens[=N]``: a chat or completion request that sets neither
  ``max_tokens`` nor ``max_completion_tokens`` gets ``"max_tokens": N`` (default 1024
  tokens). A budget, not a fault fix: llama-cpp-python generates until the context
  window is full when no limit is given, so one degenerate turn of a framework that
  sends none (CrewAI) can take minutes on a CPU. Applied after ``max-tokens-alias``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from probegate.errors import UsageError
from probegate.wire.json_shapes import items

RULES = ("null-content", "tool-content-text", "args-as-string", "drop-params", "max-tokens-alias", "tool-choice-auto", "cap-max-length",
         "system-for-tools", "default-max-tokens", "bound-strings")
DEFAULT_MAX_LENGTH = 1000
DEFAULT_MAX_TOKENS = 1024
DEFAULT_STRING_BOUND = 1000
#: A string schema with one of these is already bounded (or shaped) by it.
_STRING_SHAPES = ("maxLength", "pattern", "enum", "const", "format")


@dataclass(frozen=True)
class CompatRules:
    """The shims turned on for a gateway or run."""

    null_content: bool = False
    tool_content_text: bool = False
    args_as_string: bool = False
    drop_params: tuple[str, ...] = ()
    max_tokens_alias: bool = False
    tool_choice_auto: bool = False
    cap_max_length: int | None = None
    system_for_tools: bool = False
    default_max_tokens: int | None = None
    bound_strings: int | None = None
    names: tuple[str, ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.null_content or self.tool_content_text or self.args_as_string or self.drop_params or self.max_tokens_alias
                    or self.tool_choice_auto or self.cap_max_length or self.system_for_tools
                    or self.default_max_tokens or self.bound_strings)


# Rules that take an optional ``=N``: (default, unit for the error message).
_NUMBERED = {"cap-max-length": (DEFAULT_MAX_LENGTH, "characters"),
             "default-max-tokens": (DEFAULT_MAX_TOKENS, "tokens"),
             "bound-strings": (DEFAULT_STRING_BOUND, "characters")}


def parse_rules(specs: list[str] | str | None) -> CompatRules:
    """Parse ``--compat`` values such as ``null-content,drop-params=a,b,args-as-string``.

    Names after ``drop-params=`` that are not rule names are more parameters to drop.

    Raises:
        UsageError: an unknown rule.
    """
    if not specs:
        return CompatRules()
    tokens = [t.strip() for spec in ([specs] if isinstance(specs, str) else specs) for t in spec.split(",")]
    flags: dict[str, bool] = {}
    drop: list[str] = []
    numbers: dict[str, int] = {}
    in_drop = False
    for token in filter(None, tokens):
        name, _, value = token.partition("=")
        if name == "drop-params":
            in_drop = True
            drop.extend(v for v in [value] if v)
        elif name in _NUMBERED:
            in_drop = False
            default, unit = _NUMBERED[name]
            if value and not (value.isdigit() and int(value) > 0):
                raise UsageError(f"{name}={value!r}: give a positive number of {unit}")
            numbers[name] = int(value) if value else default
            flags[name] = True
        elif name in RULES:
            in_drop = False
            flags[name] = True
        elif in_drop and "=" not in token:
            drop.append(token)
        else:
            raise UsageError(f"unknown --compat rule {token!r}; known: {', '.join(RULES)}")
    names = tuple(sorted(f"{name}={numbers[name]}" if name in numbers else name for name in flags)
                  + (["drop-params=" + "+".join(drop)] if drop else []))
    return CompatRules(
        null_content=flags.get("null-content", False),
        tool_content_text=flags.get("tool-content-text", False),
        args_as_string=flags.get("args-as-string", False),
        drop_params=tuple(drop),
        max_tokens_alias=flags.get("max-tokens-alias", False),
        tool_choice_auto=flags.get("tool-choice-auto", False),
        cap_max_length=numbers.get("cap-max-length"),
        system_for_tools=flags.get("system-for-tools", False),
        default_max_tokens=numbers.get("default-max-tokens"),
        bound_strings=numbers.get("bound-strings"),
        names=names,
    )


def _messages(body: dict[str, Any]) -> list[Any]:
    messages = body.get("messages")
    return messages if isinstance(messages, list) else []


def _null_content(body: dict[str, Any]) -> list[dict[str, Any]]:
    changes = []
    for i, message in enumerate(_messages(body)):
        if isinstance(message, dict) and message.get("role") == "assistant" and "content" in message \
                and message["content"] is None:
            message["content"] = ""
            changes.append({"rule": "null-content", "path": f"messages[{i}].content", "from": None, "to": ""})
    return changes


def _tool_content_text(body: dict[str, Any]) -> list[dict[str, Any]]:
    changes = []
    for i, message in enumerate(_messages(body)):
        if not isinstance(message, dict) or message.get("role") != "tool":
            continue
        parts = message.get("content")
        if not isinstance(parts, list) or not parts:
            continue
        if all(isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in parts):
            message["content"] = "\n".join(p["text"] for p in parts)
            changes.append({"rule": "tool-content-text", "path": f"messages[{i}].content", "from": parts,
                            "to": message["content"]})
    return changes


def _args_as_string(body: dict[str, Any]) -> list[dict[str, Any]]:
    changes = []
    for i, message in enumerate(_messages(body)):
        if not isinstance(message, dict):
            continue
        for j, call in enumerate(items(message.get("tool_calls"))):
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict) and "arguments" in fn and not isinstance(fn["arguments"], str):
                before = fn["arguments"]
                fn["arguments"] = json.dumps(before, ensure_ascii=False)
                changes.append({"rule": "args-as-string", "path": f"messages[{i}].tool_calls[{j}].function.arguments",
                                "from": before, "to": fn["arguments"]})
    return changes


def _drop(body: dict[str, Any], names: tuple[str, ...]) -> list[dict[str, Any]]:
    changes = []
    for name in names:
        if name in body:
            changes.append({"rule": "drop-params", "path": name, "from": body.pop(name), "to": None})
    return changes


def _alias(body: dict[str, Any]) -> list[dict[str, Any]]:
    if "max_completion_tokens" in body and "max_tokens" not in body:
        value = body.pop("max_completion_tokens")
        body["max_tokens"] = value
        return [{"rule": "max-tokens-alias", "path": "max_completion_tokens", "from": value, "to": "max_tokens"}]
    return []


def _default_max_tokens(body: dict[str, Any], limit: int) -> list[dict[str, Any]]:
    if "messages" not in body and "prompt" not in body:
        return []
    if body.get("max_tokens") is not None or body.get("max_completion_tokens") is not None:
        return []
    before = body.get("max_tokens")
    body["max_tokens"] = limit
    return [{"rule": "default-max-tokens", "path": "max_tokens", "from": before, "to": limit}]


def _tool_choice(body: dict[str, Any]) -> list[dict[str, Any]]:
    if body.get("tools") and "tool_choice" not in body:
        body["tool_choice"] = "auto"
        return [{"rule": "tool-choice-auto", "path": "tool_choice", "from": None, "to": "auto"}]
    return []


def _system_for_tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not body.get("tools") or not isinstance(messages, list):
        return []
    if any(isinstance(m, dict) and m.get("role") in ("system", "developer") for m in messages):
        return []
    system = {"role": "system", "content": ""}
    messages.insert(0, system)
    return [{"rule": "system-for-tools", "path": "messages[0]", "from": None, "to": dict(system)}]


def _schemas(node: Any, path: str) -> Iterator[tuple[dict[str, Any], str]]:
    """Every object in a JSON tree with its path, parents first (a parent may be changed
    when it is yielded, before its children are walked)."""
    if isinstance(node, dict):
        yield node, path
        for key, value in node.items():
            yield from _schemas(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _schemas(value, f"{path}[{i}]")


def _cap_lengths(schema: Any, cap: int, path: str, changes: list[dict[str, Any]]) -> None:
    for node, where in _schemas(schema, path):
        limit = node.get("maxLength")
        if isinstance(limit, int) and limit > cap:
            del node["maxLength"]
            changes.append({"rule": "cap-max-length", "path": f"{where}.maxLength", "from": limit, "to": None})


def _cap_max_length(body: dict[str, Any], cap: int) -> list[dict[str, Any]]:
    changes: list[dict[str, Any]] = []
    for key in ("tools", "functions"):
        if isinstance(body.get(key), list):
            _cap_lengths(body[key], cap, key, changes)
    return changes


def _is_string_schema(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def _bound(schema: Any, limit: int, path: str, changes: list[dict[str, Any]]) -> None:
    for node, where in _schemas(schema, path):
        if _is_string_schema(node) and not any(key in node for key in _STRING_SHAPES):
            node["maxLength"] = limit
            changes.append({"rule": "bound-strings", "path": f"{where}.maxLength", "from": None, "to": limit})


def _bound_strings(body: dict[str, Any], limit: int) -> list[dict[str, Any]]:
    changes: list[dict[str, Any]] = []
    for i, tool in enumerate(items(body.get("tools"))):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("parameters"), dict):
            _bound(fn["parameters"], limit, f"tools[{i}].function.parameters", changes)
    for i, fn in enumerate(items(body.get("functions"))):
        if isinstance(fn, dict) and isinstance(fn.get("parameters"), dict):
            _bound(fn["parameters"], limit, f"functions[{i}].parameters", changes)
    return changes


def apply_rules(rules: CompatRules, body: bytes) -> tuple[bytes, list[dict[str, Any]]]:
    """Rewrite a JSON request body; returns ``(new body, changes)``.

    The body comes back byte-identical when nothing changed (or it is not a JSON
    object). Each change is ``{"rule", "path", "from", "to"}``.
    """
    if not rules:
        return body, []
    try:
        obj = json.loads(body)
    except ValueError:
        return body, []
    if not isinstance(obj, dict):
        return body, []
    changes: list[dict[str, Any]] = []
    if rules.null_content:
        changes += _null_content(obj)
    if rules.tool_content_text:
        changes += _tool_content_text(obj)
    if rules.args_as_string:
        changes += _args_as_string(obj)
    if rules.drop_params:
        changes += _drop(obj, rules.drop_params)
    if rules.max_tokens_alias:
        changes += _alias(obj)
    if rules.tool_choice_auto:
        changes += _tool_choice(obj)
    if rules.cap_max_length:
        changes += _cap_max_length(obj, rules.cap_max_length)
    if rules.bound_strings:
        changes += _bound_strings(obj, rules.bound_strings)
    if rules.system_for_tools:
        changes += _system_for_tools(obj)
    if rules.default_max_tokens:
        changes += _default_max_tokens(obj, rules.default_max_tokens)
    if not changes:
        return body, []
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode(), changes
