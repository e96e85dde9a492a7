"""Splitting an attempt's requests into conversation threads (main agent, sub-agents). Pure.

Every request carries the whole history the agent sent (a Responses request that names
``previous_response_id`` carries only new items: :class:`ResponseChain` gives it back
its whole history first). A request **extends** a
thread when its messages start with that thread's last request; it **continues** a
thread when it repeats that thread's last model output (as an assistant message, a
tool result answering its call ids, a call without id (Ollama's native API has none)
repeated with the same name and arguments, or inside a rebuilt prompt, as ReAct
scratchpads do). Anything else starts a new thread (a sub-agent). A continuing request that no
longer carries the thread's first system or user message is evidence of history
truncation (:class:`~probegate.scorer.trajectory.DroppedMessage`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from probegate.wire.json_shapes import items, mapping
from probegate.wire.tool_results import input_messages
from probegate.scorer.trajectory import DroppedMessage


def content_text(content: Any) -> str:
    """Message content as text (content parts joined; non-text parts skipped)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") if isinstance(p, dict) else p for p in content]
        return "".join(p for p in parts if isinstance(p, str))
    return json.dumps(content, sort_keys=True, ensure_ascii=False)


def request_messages(body: Any) -> list[dict[str, Any]]:
    """The message history of a request in any dialect we proxy.

    Chat (``messages``), Responses (``input`` text, or items read by
    :func:`probegate.wire.tool_results.input_messages`: tool results, and one assistant
    message per replayed model turn), legacy completions and Ollama generate
    (``prompt``); a top-level ``system`` or ``instructions`` becomes the first message.
    """
    if not isinstance(body, dict):
        return []
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("system"), str):
        messages.append({"role": "system", "content": body["system"]})
    if isinstance(body.get("instructions"), str):
        messages.append({"role": "system", "content": body["instructions"]})
    if isinstance(body.get("messages"), list):
        messages.extend(m for m in body["messages"] if isinstance(m, dict))
    elif isinstance(body.get("input"), list):
        messages.extend(input_messages(body["input"]))
    elif isinstance(body.get("input"), str):
        messages.append({"role": "user", "content": body["input"]})
    elif isinstance(body.get("prompt"), str):
        messages.append({"role": "user", "content": body["prompt"]})
    return messages


def assistant_message(completion: Any) -> dict[str, Any]:
    """The reassembled assistant turn (``Exchange.completion``) as the chat message a
    client would send back: ``{"role": "assistant", "content", "tool_calls"?}``."""
    assistant = mapping(mapping(completion).get("assistant"))
    message: dict[str, Any] = {"role": "assistant", "content": assistant.get("content")}
    calls = [
        {"id": c.get("id"), "type": "function", "function": {"name": c.get("name"), "arguments": c.get("arguments_raw")}}
        for c in items(assistant.get("tool_calls"))
        if isinstance(c, dict)
    ]
    if calls:
        message["tool_calls"] = calls
    return message


@dataclass
class ResponseChain:
    """Whole histories of Responses exchanges, for servers that keep state.

    A request naming ``previous_response_id`` sends only its new ``input`` items; the
    history it continues is the previous response's request history plus that
    response's output. :meth:`messages` gives every request its whole history, so
    thread joining and observations read it as they read a stateless replay.

    Attributes:
        histories: response id -> the history up to and including that response's turn.
        missing: ``(exchange seq, response id)`` of requests naming a previous response
            no exchange of the attempt answered (their history is their own items only).
    """

    histories: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    missing: list[tuple[int, str]] = field(default_factory=list)

    def messages(self, seq: int, body: Any) -> list[dict[str, Any]]:
        """The whole history of exchange ``seq``'s request (its own messages when it names no
        previous response; the chain's history then its new items when it does)."""
        own = request_messages(body)
        previous = body.get("previous_response_id") if isinstance(body, dict) else None
        if not isinstance(previous, str) or not previous:
            return own
        history = self.histories.get(previous)
        if history is None:
            self.missing.append((seq, previous))
            return own
        new = list(own)
        while new and new[0].get("role") == "system" and new[0] in history:
            new.pop(0)  # the instructions sent again: already in the history
        return [*history, *new]

    def record(self, response_body: Any, messages: list[dict[str, Any]], completion: Any) -> None:
        """Remember the history a response ends (its ``id`` read from ``response_body``)."""
        response_id = mapping(response_body).get("id")
        if isinstance(response_id, str) and response_id and completion is not None:
            self.histories[response_id] = [*messages, assistant_message(completion)]


class MessageSizes(NamedTuple):
    """How much a request's history holds (characters with whitespace runs squashed).

    Attributes:
        tool_results: number of tool-result messages.
        tool_results_chars: characters of their content.
        messages_chars: characters of every message's content and tool-call arguments.
    """

    tool_results: int
    tool_results_chars: int
    messages_chars: int


def message_sizes(body: Any) -> MessageSizes:
    """The :class:`MessageSizes` of a request body (any dialect :func:`request_messages` reads)."""
    results = chars = total = 0
    for message in request_messages(body):
        size = len(_squash(content_text(message.get("content"))))
        for call in items(message.get("tool_calls")):
            fn = mapping(mapping(call).get("function"))
            arguments = fn.get("arguments")
            size += len(_squash(arguments if isinstance(arguments, str) else json.dumps(arguments, default=str)))
            size += len(str(fn.get("name") or ""))
        if message.get("role") in ("tool", "function"):
            results, chars = results + 1, chars + size
        total += size
    return MessageSizes(results, chars, total)


def _squash(text: str) -> str:
    # str.split() splits on exactly the characters re's \s matches in a str pattern
    return " ".join(text.split())


MessageKey = tuple[Any, ...]


def message_key(message: dict[str, Any]) -> MessageKey:
    """Identity of a message for prefix comparison: (role, squashed text, ((tool, call id), ...),
    tool_call_id). A tuple, not a JSON string: hashing and comparing it is the scorer's hot path."""
    calls = tuple(
        (_hashable(mapping(c.get("function")).get("name") or c.get("name")), _hashable(c.get("id")))
        for c in items(message.get("tool_calls"))
        if isinstance(c, dict)
    )
    return (
        _hashable(message.get("role")),
        _squash(content_text(message.get("content"))),
        calls,
        _hashable(message.get("tool_call_id")),
    )


def _hashable(value: Any) -> Any:
    """``value`` itself when it is a JSON scalar, else its canonical JSON text (a damaged row may
    hold an object where a string belongs)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@dataclass
class _Thread:
    thread: int
    parent: int | None
    first: list[tuple[str, str]]  # (role, squashed text) of the first system and user messages
    last_keys: list[MessageKey] = field(default_factory=list)
    output_text: str = ""
    output_ids: set[str] = field(default_factory=set)
    output_calls: set[str] = field(default_factory=set)
    exchanges: list[int] = field(default_factory=list)
    dropped: list[DroppedMessage] = field(default_factory=list)


def _firsts(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for role in ("system", "user"):
        for m in messages:
            if m.get("role") == role and _squash(content_text(m.get("content"))):
                out.append((role, _squash(content_text(m.get("content")))))
                break
    return out


@dataclass
class ThreadTracker:
    """Assigns requests to threads, in exchange order (see the module docstring)."""

    threads: list[_Thread] = field(default_factory=list)
    _recent: list[int] = field(default_factory=list)

    def _extends(self, t: _Thread, keys: list[MessageKey]) -> bool:
        n = len(t.last_keys)
        return n > 0 and len(keys) >= n and keys[:n] == t.last_keys

    def _continues(self, t: _Thread, messages: list[dict[str, Any]]) -> bool:
        for m in messages:
            if m.get("role") == "tool" and m.get("tool_call_id") in t.output_ids:
                return True
            calls = [c for c in items(m.get("tool_calls")) if isinstance(c, dict)]
            if {c.get("id") for c in calls} & t.output_ids:
                return True
            if t.output_calls and {call_signature(_call_name(c), _call_arguments(c)) for c in calls} & t.output_calls:
                return True
            if len(t.output_text) >= 8 and t.output_text in _squash(content_text(m.get("content"))):
                return True
        return False

    def assign(self, seq: int, messages: list[dict[str, Any]]) -> int:
        """The thread of the request with ``messages`` (exchange ``seq``)."""
        keys = [message_key(m) for m in messages]
        order = [self.threads[i] for i in reversed(self._recent)]
        chosen = next((t for t in order if self._extends(t, keys)), None)
        if chosen is None:
            chosen = next((t for t in order if self._continues(t, messages)), None)
            if chosen is not None:
                self._check_dropped(chosen, seq, messages)
        if chosen is None:
            parent = self._recent[-1] if self._recent else None
            chosen = _Thread(len(self.threads), parent, _firsts(messages))
            self.threads.append(chosen)
        chosen.last_keys = keys
        chosen.exchanges.append(seq)
        if chosen.thread in self._recent:
            self._recent.remove(chosen.thread)
        self._recent.append(chosen.thread)
        return chosen.thread

    def _check_dropped(self, t: _Thread, seq: int, messages: list[dict[str, Any]]) -> None:
        texts = [_squash(content_text(m.get("content"))) for m in messages]
        for role, first in t.first:
            if not any(first in text for text in texts):
                t.dropped.append(DroppedMessage(exchange_seq=seq, role=role, excerpt=first[:160]))

    def record_output(
        self, thread: int, text: str | None, call_ids: list[str], id_less: list[tuple[str, Any]] | None = None
    ) -> None:
        """Remember the model's answer in ``thread`` (what the next request must repeat).

        Args:
            thread: the thread.
            text: the answer's text.
            call_ids: the ids of its tool calls.
            id_less: ``(name, arguments)`` of its tool calls that have no id (Ollama's
                native API gives none): a request repeating one continues the thread.
        """
        t = self.threads[thread]
        t.output_text = _squash(text or "")
        t.output_ids = {i for i in call_ids if i}
        t.output_calls = {call_signature(name, arguments) for name, arguments in id_less or []}


def _call_name(call: dict[str, Any]) -> Any:
    return mapping(call.get("function")).get("name") or call.get("name")


def _call_arguments(call: dict[str, Any]) -> Any:
    return mapping(call.get("function")).get("arguments", call.get("arguments"))


def call_signature(name: Any, arguments: Any) -> str:
    """A tool call's identity without an id: its name and its arguments as canonical JSON
    (arguments given as JSON text are parsed first, so ``'{"a": 1}'`` and ``{"a": 1}`` agree)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            pass
    return json.dumps([name, arguments], sort_keys=True, ensure_ascii=False, default=str)
