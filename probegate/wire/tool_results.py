"""Pairing tool-result messages in a request's history with the calls they answer.

For each ``tool`` message, the call it answers is in the nearest preceding assistant
message. The pairing rule, in order: ``id`` (its ``tool_call_id`` matches exactly one
call), ``name`` (its ``name`` matches exactly one call), ``position`` (its place in
the run of tool messages after that assistant message).

A Responses request's ``input`` items are read as messages first
(:func:`input_messages`): ``function_call_output`` items are tool messages, and the
``reasoning`` / assistant ``message`` / ``function_call`` items of one model turn are
one assistant message, so a result pairs with its call by ``call_id`` as in chat.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from probegate.wire.json_shapes import items

PairedBy = Literal["id", "name", "position"]


@dataclass(frozen=True)
class ToolResult:
    """One tool-result message and the call it answers.

    Attributes:
        index: the message's index in ``messages``.
        tool_call_id: the id of the answered call (``None`` when it has none).
        name: the answered call's tool name.
        content: the result text as the agent sent it.
        paired_by: the rule that decided the pairing.
        call_index: index of the call in its assistant message, ``None`` if unpaired.
    """

    index: int
    tool_call_id: str | None
    name: str | None
    content: Any
    paired_by: PairedBy
    call_index: int | None

    def to_json(self) -> dict[str, Any]:
        """The contract form of ``expected.request.json``."""
        return {
            "tool_call_id": self.tool_call_id,
            "name": self.name,
            "content": self.content,
            "paired_by": self.paired_by,
        }


def _calls_of(message: dict[str, Any]) -> list[tuple[str | None, str | None]]:
    calls: list[tuple[str | None, str | None]] = []
    for call in items(message.get("tool_calls")):
        if not isinstance(call, dict):
            continue
        fn = call.get("function") if isinstance(call.get("function"), dict) else {}
        calls.append((call.get("id") or None, fn.get("name") or call.get("name")))
    if not calls and isinstance(message.get("function_call"), dict):
        calls.append((None, message["function_call"].get("name")))
    return calls


def _is_result(message: dict[str, Any]) -> bool:
    return message.get("role") in ("tool", "function")


def pair_tool_results(messages: list[Any]) -> list[ToolResult]:
    """Pair every tool-result message in ``messages``; see the module docstring."""
    results: list[ToolResult] = []
    calls: list[tuple[str | None, str | None]] = []
    position = 0
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            calls, position = _calls_of(message), 0
            continue
        if not _is_result(message):
            if message.get("role") != "system":
                calls, position = [], 0
            continue
        results.append(_pair(index, message, calls, position))
        position += 1
    return results


def _pair(
    index: int, message: dict[str, Any], calls: list[tuple[str | None, str | None]], position: int
) -> ToolResult:
    content = message.get("content")
    call_id = message.get("tool_call_id") or None
    name = message.get("name") or message.get("tool_name") or None
    if call_id:
        hits = [i for i, (cid, _) in enumerate(calls) if cid == call_id]
        if len(hits) == 1:
            return ToolResult(index, call_id, calls[hits[0]][1], content, "id", hits[0])
    if name:
        hits = [i for i, (_, cname) in enumerate(calls) if cname == name]
        if len(hits) == 1:
            return ToolResult(index, calls[hits[0]][0], name, content, "name", hits[0])
    if position < len(calls):
        cid, cname = calls[position]
        return ToolResult(index, cid, cname, content, "position", position)
    return ToolResult(index, call_id, name, content, "position", None)


def missing_tool_call_ids(messages: list[Any]) -> bool:
    """Whether any chat-dialect tool message lacks its ``tool_call_id``."""
    return any(
        isinstance(m, dict) and m.get("role") == "tool" and not m.get("tool_call_id")
        for m in messages
    )


def _opens_turn(current: dict[str, Any] | None, kind: Any) -> bool:
    """Whether an assistant-side input item starts a new assistant message: there is
    none open, or the open one already holds what comes later in a turn's output
    (reasoning, then text, then calls)."""
    if current is None:
        return True
    if kind == "reasoning":
        return bool(current.get("content") or current.get("tool_calls"))
    if kind != "function_call":
        return bool(current.get("tool_calls"))
    return False


def input_messages(source: list[Any]) -> list[dict[str, Any]]:
    """A Responses request's ``input`` items as chat-style messages.

    - ``function_call_output`` -> ``{"role": "tool", "tool_call_id": call_id, "content": output}``;
    - consecutive ``reasoning``, assistant ``message`` and ``function_call`` items (one
      model turn replayed) -> one ``{"role": "assistant", "content": text | None,
      "reasoning": text?, "tool_calls": [{"id": call_id, "type": "function",
      "function": {"name", "arguments"}}]?}``;
    - any other item with a ``role`` (user, system, developer) is kept as it is; items
      that are not objects are skipped.

    Pure; never raises.
    """
    messages: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for item in source:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        assistant_side = kind in ("reasoning", "function_call") or (
            kind in ("message", None) and item.get("role") == "assistant"
        )
        if not assistant_side:
            current = None
            if kind == "function_call_output":
                messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output")})
            else:
                messages.append(item)
            continue
        if _opens_turn(current, kind):
            current = {"role": "assistant", "content": None}
            messages.append(current)
        assert current is not None
        if kind == "reasoning":
            parts = items(item.get("content")) + items(item.get("summary"))
            text = "".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
            current["reasoning"] = (current.get("reasoning") or "") + text
        elif kind == "function_call":
            call = {"id": item.get("call_id"), "type": "function",
                    "function": {"name": item.get("name"), "arguments": item.get("arguments")}}
            current.setdefault("tool_calls", []).append(call)
        else:
            text = _text_of(item.get("content"))
            if text:
                current["content"] = (current.get("content") or "") + text
    return messages


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [p.get("text") for p in items(content) if isinstance(p, dict)]
    return "".join(p for p in parts if isinstance(p, str))
