"""Pairing tool-result messages in a request's history with the calls they answer.

For each ``tool`` message, the call it answers is in the nearest preceding assistant
message. The pairing rule, in order: ``id`` (its ``tool_call_id`` matches exactly one
call), ``name`` (its ``name`` matches exactly one call), ``position`` (its place in
the run of tool messages after that assistant message).
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
