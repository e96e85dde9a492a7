"""What the agent saw after a call: the tool result in its next request. Pure.

Structured calls are answered by ``tool`` messages, paired with
:func:`probegate.wire.tool_results.pair_tool_results` (id, then name, then position).
Text protocols put the result in the next message, or after the model's own text
inside a rebuilt prompt (``Observation: ...``).
"""

from __future__ import annotations

import re
from typing import Any

from probegate.wire.json_shapes import items, mapping
from probegate.wire.tool_results import pair_tool_results
from probegate.scorer.rebuild.threads import content_text

_OBSERVATION = re.compile(r"^[ \t>*_#]*Observation[*_]*[ \t]*:[*_]*[ \t]*", re.IGNORECASE | re.MULTILINE)
_NEXT_MARKER = re.compile(r"^[ \t>*_#]*(Thought|Action|Final Answer)[*_]*[ \t]*:", re.IGNORECASE | re.MULTILINE)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def structured_observation(messages: list[Any], call_id: str | None, call_index: int, output_names: list[str]) -> Any:
    """The result of a structured call in a later request's ``messages``.

    Args:
        messages: the later request's messages.
        call_id: the call's id (``None`` when the server sent none).
        call_index: the call's position in its turn.
        output_names: the tool names of the turn's calls (to find that turn without ids).

    Returns:
        The tool message content, or ``None`` when the request carries no result for it.
    """
    results = pair_tool_results(messages)
    if call_id:
        for result in results:
            if result.tool_call_id == call_id:
                return result.content
    turn = _turn_index(messages, output_names)
    if turn is None:
        return None
    for result in results:
        if result.index > turn and result.call_index == call_index:
            return result.content
    return None


def _turn_index(messages: list[Any], names: list[str]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if not isinstance(m, dict) or m.get("role") != "assistant":
            continue
        called = [mapping(c.get("function")).get("name") or c.get("name") for c in items(m.get("tool_calls")) if isinstance(c, dict)]
        if called == names:
            return i
    return None


def _after_marker(text: str) -> str:
    found = _OBSERVATION.search(text)
    if found is None:
        return text.strip()
    rest = text[found.end() :]
    stop = _NEXT_MARKER.search(rest)
    return rest[: stop.start() if stop else len(rest)].strip()


def text_observation(messages: list[Any], raw_output: str | None) -> str | None:
    """The result a text-protocol turn got: the message after the model's text, or the
    ``Observation:`` that follows it inside a rebuilt prompt. ``None`` when absent."""
    if not raw_output or not raw_output.strip():
        return None
    needle = _squash(raw_output)
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        text = content_text(m.get("content"))
        if m.get("role") == "assistant" and _squash(text) == needle:
            following = messages[i + 1] if i + 1 < len(messages) else None
            if isinstance(following, dict) and following.get("role") in ("user", "tool", "function"):
                return _after_marker(content_text(following.get("content")))
            return None
    tail = needle[-200:]
    for m in messages:
        if not isinstance(m, dict):
            continue
        squashed = _squash(content_text(m.get("content")))
        at = squashed.rfind(tail)
        if at >= 0 and m.get("role") != "assistant":
            rest = squashed[at + len(tail) :]
            return _after_marker(_unsquash_markers(rest)) or None
    return None


def _unsquash_markers(text: str) -> str:
    """Put line breaks back before ReAct markers in a whitespace-squashed text."""
    return re.sub(r"\s*\b(Observation|Thought|Action Input|Action|Final Answer)\s*:", r"\n\1:", text)
