"""Reassembling one exchange's assistant turn from the wire, for every dialect we proxy.

Input: the request body, the decoded response body or the stream's events.
Output: the contract form of ``shared/wire-cases``::

    {"assistant": {"content", "reasoning", "tool_calls": [{"id", "name", "arguments",
                   "arguments_raw", "repaired"}], "finish_reason"},
     "usage": {"prompt_tokens", "completion_tokens"} | None,
     "flags": [anomaly, ...]}

plus, for streams, an OpenAI ``chat.completion`` body built from the same pieces.

Rules (each one a whole kind of wire fault, not one example):
- text joins every fragment; empty text is ``None``; reasoning is read from
  ``reasoning_content``, ``reasoning`` or ``thinking``, whichever carries it;
- tool-call fragments are slotted by ``index``; without an index a new non-empty id
  (or a new name after complete arguments) opens a new slot (``index_missing``); an
  id that changes while the arguments are still incomplete keeps the first id
  (``id_changed_mid_call``); a reused index with a new id and name after complete
  arguments is a new call (``index_reused``);
- arguments are parsed by :func:`probegate.wire.arguments.parse_arguments`;
- the finish reason is the last non-null one, as sent, never corrected;
- usage is read from whatever dialect sends it, ``None`` when absent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from probegate.wire.arguments import parse_arguments
from probegate.wire.content_calls import detect_content_calls
from probegate.wire.json_shapes import items
from probegate.wire.sse import StreamEvent
from probegate.wire.tool_results import missing_tool_call_ids

_REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")


def dialect_of(path: str) -> str | None:
    """The wire dialect of an upstream path: ``chat``, ``completions``, ``responses``,
    ``ollama_chat``, ``ollama_generate``, or ``None`` for routes without a turn."""
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/completions"):
        return "completions"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/api/chat"):
        return "ollama_chat"
    if path.endswith("/api/generate"):
        return "ollama_generate"
    return None


@dataclass
class _Slot:
    index: int | None
    order: int
    id: str | None = None
    name: str | None = None
    pieces: list[str] = field(default_factory=list)
    object_args: Any = None

    @property
    def raw(self) -> str:
        if self.object_args is not None and not self.pieces:
            return json.dumps(self.object_args, separators=(",", ":"), ensure_ascii=False)
        return "".join(self.pieces)

    def complete(self) -> bool:
        raw = self.raw
        if not raw.strip():
            return False
        try:
            json.loads(raw)
        except ValueError:
            return False
        return True


@dataclass
class TurnBuilder:
    """Accumulates one choice's assistant turn from fragments (pure, no I/O)."""

    dialect: str = "chat"
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    slots: list[_Slot] = field(default_factory=list)
    legacy: _Slot | None = None
    finish_reason: str | None = None
    flags: set[str] = field(default_factory=set)

    # -- text -------------------------------------------------------------------
    def add_text(self, value: Any) -> None:
        if isinstance(value, str):
            self.content.append(value)
        elif isinstance(value, list):  # content parts
            for part in value:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    self.content.append(part["text"])

    def add_reasoning_from(self, obj: dict[str, Any]) -> None:
        for key in _REASONING_KEYS:
            value = obj.get(key)
            if isinstance(value, str) and value:
                self.reasoning.append(value)
                return

    def finish(self, reason: Any) -> None:
        if reason is not None:
            self.finish_reason = reason

    # -- tool calls ---------------------------------------------------------------
    def _current(self) -> _Slot | None:
        return self.slots[-1] if self.slots else None

    def _open(self, index: int | None) -> _Slot:
        slot = _Slot(index=index, order=len(self.slots))
        self.slots.append(slot)
        return slot

    def _slot_for(self, index: Any, call_id: str | None, name: str | None) -> _Slot:
        current = self._current()
        if not isinstance(index, int):
            self.flags.add("index_missing")
            if current is None:
                return self._open(None)
            if call_id and current.id and call_id != current.id and current.complete():
                return self._open(None)
            if name and current.name and current.complete() and not call_id:
                return self._open(None)
            return current
        for slot in reversed(self.slots):
            if slot.index == index:
                if call_id and slot.id and call_id != slot.id and name and slot.complete():
                    self.flags.add("index_reused")
                    return self._open(index)
                return slot
        return self._open(index)

    def add_call_fragment(
        self, fragment: dict[str, Any], *, legacy: bool = False, whole: bool = False
    ) -> None:
        """One ``tool_calls[]`` delta (or a ``function_call`` delta when ``legacy``).

        ``whole`` marks a complete call (a non-streamed message, an Ollama chunk):
        it always opens its own slot, whatever its index says.
        """
        fn = fragment if legacy else fragment.get("function")
        fn = fn if isinstance(fn, dict) else {}
        call_id = None if legacy else (fragment.get("id") or fragment.get("call_id") or None)
        name = fn.get("name") or None
        index = 0 if legacy else fragment.get("index", fn.get("index"))
        if legacy:
            self._add_legacy(fn)
            return
        if whole:
            slot = self._open(len(self.slots))
        else:
            slot = self._slot_for(index, call_id, name)
        if call_id:
            if slot.id is None:
                slot.id = call_id
            elif call_id != slot.id:
                self.flags.add("id_changed_mid_call")
        if name:
            if slot.name is None:
                slot.name = name
            elif name != slot.name:
                if slot.pieces or slot.object_args is not None:
                    self.flags.add("name_changed_mid_call")
                else:
                    slot.name += name  # a name streamed in pieces
        self._add_arguments(slot, fn.get("arguments"))

    def _add_legacy(self, fn: dict[str, Any]) -> None:
        # kept apart: servers such as llama-cpp-python send a legacy ``function_call``
        # mirroring the first of their ``tool_calls``; it is a call only when alone
        if self.legacy is None:
            self.legacy = _Slot(index=0, order=-1)
        if fn.get("name") and not self.legacy.name:
            self.legacy.name = fn["name"]
        self._add_arguments(self.legacy, fn.get("arguments"))

    def _add_arguments(self, slot: _Slot, piece: Any) -> None:
        if piece is None:
            return
        if not isinstance(piece, str):
            if self.dialect not in ("ollama_chat", "ollama_generate"):
                self.flags.add("arguments_not_string")
            slot.object_args = piece
            return
        so_far = "".join(slot.pieces)
        if len(so_far) >= 2 and piece.startswith(so_far) and len(piece) > len(so_far):
            self.flags.add("arguments_cumulative")  # the server resent the whole string
            slot.pieces = [piece]
            return
        slot.pieces.append(piece)

    # -- result -------------------------------------------------------------------
    def tool_calls(self) -> list[dict[str, Any]]:
        if self.legacy is not None:
            if self.slots:
                self.flags.add("legacy_function_call_mirror")
            else:
                self.flags.add("legacy_function_call")
                self.slots = [self.legacy]
            self.legacy = None
        slots = self.slots
        if slots and all(s.index is not None for s in slots):
            slots = sorted(slots, key=lambda s: (s.index, s.order))
        calls = []
        for slot in slots:
            parsed = parse_arguments(slot.object_args if slot.object_args is not None and not slot.pieces else slot.raw)
            self.flags.update(parsed.flags)
            calls.append(
                {
                    "id": slot.id,
                    "name": slot.name,
                    "arguments": parsed.value,
                    "arguments_raw": parsed.raw,
                    "repaired": parsed.repaired,
                }
            )
        return calls

    def assistant(self) -> dict[str, Any]:
        text = "".join(self.content)
        reasoning = "".join(self.reasoning)
        return {
            "content": text or None,
            "reasoning": reasoning or None,
            "tool_calls": self.tool_calls(),
            "finish_reason": self.finish_reason,
        }


@dataclass
class Reassembly:
    """What the reassembler derived from one exchange.

    Attributes:
        completion: the contract form (``assistant``, ``usage``, ``flags``) plus
            ``content_calls`` (calls detected in text, never promoted).
        response_body: for streams, an OpenAI ``chat.completion`` body; else ``None``.
        error: an error the stream itself carried (an ``error`` event), if any.
    """

    completion: dict[str, Any] | None
    response_body: dict[str, Any] | None = None
    error: str | None = None


def _usage(obj: Any) -> dict[str, int] | None:
    if not isinstance(obj, dict):
        return None
    prompt = obj.get("prompt_tokens", obj.get("input_tokens"))
    completion = obj.get("completion_tokens", obj.get("output_tokens"))
    if prompt is None and completion is None:
        return None
    return {"prompt_tokens": prompt, "completion_tokens": completion}


def _ollama_usage(obj: dict[str, Any]) -> dict[str, int] | None:
    if "prompt_eval_count" not in obj and "eval_count" not in obj:
        return None
    return {"prompt_tokens": obj.get("prompt_eval_count"), "completion_tokens": obj.get("eval_count")}


def _token_limit(request: Any) -> int | None:
    if not isinstance(request, dict):
        return None
    for key in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        if isinstance(request.get(key), int):
            return request[key]
    options = request.get("options")
    if isinstance(options, dict) and isinstance(options.get("num_predict"), int):
        return options["num_predict"]
    return None


class _Exchange:
    """Per-exchange state shared by the dialect readers."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.turns: dict[int, TurnBuilder] = {}
        self.usage: dict[str, int] | None = None
        self.flags: set[str] = set()
        self.meta: dict[str, Any] = {}
        self.error: str | None = None
        self.done = False

    def turn(self, index: Any = 0) -> TurnBuilder:
        key = index if isinstance(index, int) else 0
        if key not in self.turns:
            self.turns[key] = TurnBuilder(dialect=self.dialect)
        return self.turns[key]

    def keep_meta(self, obj: dict[str, Any]) -> None:
        for key in ("id", "created", "model", "system_fingerprint"):
            if key in obj and key not in self.meta:
                self.meta[key] = obj[key]

    def stream_error(self, obj: Any) -> None:
        self.flags.add("stream_error")
        err = obj.get("error") if isinstance(obj, dict) else obj
        message = err.get("message") if isinstance(err, dict) else err
        self.error = f"upstream stream error: {message}"


# -- dialect readers -----------------------------------------------------------------
def _read_chat_message(ex: _Exchange, choice: dict[str, Any], *, delta: bool) -> None:
    turn = ex.turn(choice.get("index", 0))
    msg = choice.get("delta" if delta else "message")
    if isinstance(msg, dict):
        turn.add_text(msg.get("content"))
        turn.add_reasoning_from(msg)
        for fragment in items(msg.get("tool_calls")):
            if isinstance(fragment, dict):
                turn.add_call_fragment(fragment, whole=not delta)
        if isinstance(msg.get("function_call"), dict):
            turn.add_call_fragment(msg["function_call"], legacy=True)
    if "text" in choice:  # legacy /v1/completions
        turn.add_text(choice.get("text"))
    turn.finish(choice.get("finish_reason"))


def _read_chat_object(ex: _Exchange, obj: dict[str, Any], *, delta: bool) -> None:
    if "error" in obj and not obj.get("choices"):
        ex.stream_error(obj)
        return
    ex.keep_meta(obj)
    for choice in items(obj.get("choices")):
        if isinstance(choice, dict):
            _read_chat_message(ex, choice, delta=delta)
    if _usage(obj.get("usage")):
        ex.usage = _usage(obj.get("usage"))


def _read_ollama_object(ex: _Exchange, obj: dict[str, Any]) -> None:
    if "error" in obj and "message" not in obj and "response" not in obj:
        ex.stream_error(obj)
        return
    ex.keep_meta(obj)
    turn = ex.turn(0)
    msg = obj.get("message")
    if isinstance(msg, dict):
        turn.add_text(msg.get("content"))
        turn.add_reasoning_from(msg)
        for fragment in items(msg.get("tool_calls")):
            if isinstance(fragment, dict):  # Ollama sends every call whole
                turn.add_call_fragment(fragment, whole=True)
    if "response" in obj:
        turn.add_text(obj.get("response"))
        turn.add_reasoning_from(obj)
    turn.finish(obj.get("done_reason"))
    if obj.get("done"):
        ex.done = True
    if _ollama_usage(obj):
        ex.usage = _ollama_usage(obj)


def _read_responses_output(ex: _Exchange, response: dict[str, Any]) -> None:
    turn = ex.turn(0)
    for item in items(response.get("output")):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "message":
            for part in items(item.get("content")):
                if isinstance(part, dict) and part.get("type") in ("output_text", "text"):
                    turn.add_text(part.get("text"))
        elif kind == "reasoning":
            for part in items(item.get("content")) + items(item.get("summary")):
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    turn.reasoning.append(part["text"])
        elif kind == "function_call":
            turn.add_call_fragment(_responses_call(item, len(turn.slots)))


def _responses_call(item: dict[str, Any], index: int) -> dict[str, Any]:
    return {
        "index": index,
        "id": item.get("call_id") or None,
        "function": {"name": item.get("name"), "arguments": item.get("arguments")},
    }


def _read_responses_event(ex: _Exchange, obj: dict[str, Any], state: dict[str, Any]) -> None:
    kind = obj.get("type", "")
    turn = ex.turn(0)
    if kind == "response.output_text.delta":
        turn.add_text(obj.get("delta"))
    elif kind in ("response.reasoning_text.delta", "response.reasoning_summary_text.delta"):
        if isinstance(obj.get("delta"), str):
            turn.reasoning.append(obj["delta"])
    elif kind == "response.output_item.added" and isinstance(obj.get("item"), dict):
        item = obj["item"]
        if item.get("type") == "function_call":
            index = obj.get("output_index", len(turn.slots))
            state.setdefault("calls", {})[item.get("id") or index] = index
            turn.add_call_fragment(_responses_call({**item, "arguments": item.get("arguments") or None}, index))
    elif kind == "response.function_call_arguments.delta":
        index = state.get("calls", {}).get(obj.get("item_id"), obj.get("output_index"))
        turn.add_call_fragment({"index": index, "function": {"arguments": obj.get("delta", "")}})
        state.setdefault("streamed", set()).add(index)
    elif kind == "response.output_item.done" and isinstance(obj.get("item"), dict):
        item = obj["item"]
        index = obj.get("output_index")
        if item.get("type") == "function_call" and index not in state.get("streamed", set()):
            turn.add_call_fragment({"index": index, "function": {"arguments": item.get("arguments")}})
    elif kind in ("response.completed", "response.incomplete", "response.failed"):
        response = obj.get("response") if isinstance(obj.get("response"), dict) else {}
        ex.keep_meta(response)
        turn.finish(response.get("status"))
        if _usage(response.get("usage")):
            ex.usage = _usage(response.get("usage"))
        ex.done = True
    elif kind == "error":
        ex.stream_error(obj)


# -- entry points ----------------------------------------------------------------------
def _parse_events(ex: _Exchange, events: list[StreamEvent]) -> None:
    state: dict[str, Any] = {}
    for event in events:
        data = event.data
        if data.strip() == "[DONE]":
            ex.done = True
            continue
        if not data.strip():
            continue
        try:
            obj = json.loads(data)
        except ValueError:
            ex.flags.add("malformed_event")
            continue
        if not isinstance(obj, dict):
            ex.flags.add("malformed_event")
            continue
        if event.event == "error":
            ex.stream_error(obj)
        elif ex.dialect in ("chat", "completions"):
            _read_chat_object(ex, obj, delta=True)
        elif ex.dialect == "responses":
            _read_responses_event(ex, obj, state)
        else:
            _read_ollama_object(ex, obj)


def _parse_body(ex: _Exchange, obj: Any) -> None:
    if not isinstance(obj, dict):
        return
    if ex.dialect in ("chat", "completions"):
        if "error" in obj and not obj.get("choices"):
            return  # an error answer: no turn
        _read_chat_object(ex, obj, delta=False)
    elif ex.dialect == "responses":
        if obj.get("object") == "response" or "output" in obj:
            ex.keep_meta(obj)
            _read_responses_output(ex, obj)
            ex.turn(0).finish(obj.get("status"))
            ex.usage = _usage(obj.get("usage"))
    else:
        _read_ollama_object(ex, obj)


def _finish_flags(ex: _Exchange, request: Any, assistant: dict[str, Any], stream: bool) -> None:
    calls = assistant["tool_calls"]
    finish = assistant["finish_reason"]
    legacy = "legacy_function_call" in ex.flags
    if calls and finish is not None and finish not in ("tool_calls", "function_call", "length"):
        if ex.dialect in ("chat", "completions"):
            ex.flags.add("finish_reason_mismatch")
    if not calls and finish in ("tool_calls", "function_call"):
        ex.flags.add("finish_reason_mismatch")
    if ex.dialect == "chat" and not legacy and any(c["id"] is None for c in calls):
        ex.flags.add("tool_call_without_id")
    limit = _token_limit(request)
    produced = (ex.usage or {}).get("completion_tokens")
    if limit and isinstance(produced, int) and produced >= limit and finish != "length":
        ex.flags.add("possible_truncation")
    if stream and finish is None and ex.dialect in ("chat", "completions", "responses"):
        ex.flags.add("stream_incomplete")
    if stream and ex.dialect in ("ollama_chat", "ollama_generate") and not ex.done:
        ex.flags.add("stream_incomplete")
    if ex.dialect == "chat" and isinstance(request, dict):
        if missing_tool_call_ids(items(request.get("messages"))):
            ex.flags.add("missing_tool_call_id")


def _chat_body(ex: _Exchange, turns: dict[int, dict[str, Any]]) -> dict[str, Any]:
    choices = []
    for index, turn in sorted(turns.items()):
        message: dict[str, Any] = {"role": "assistant", "content": turn["content"]}
        if turn["reasoning"] is not None:
            message["reasoning_content"] = turn["reasoning"]
        if turn["tool_calls"]:
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": call["arguments_raw"]},
                }
                for call in turn["tool_calls"]
            ]
        choices.append({"index": index, "message": message, "finish_reason": turn["finish_reason"]})
    body: dict[str, Any] = {"object": "chat.completion", **ex.meta, "choices": choices}
    if ex.usage is not None:
        body["usage"] = ex.usage
    return body


def reassemble(
    *,
    path: str,
    request: Any,
    body: bytes | None = None,
    events: list[StreamEvent] | None = None,
) -> Reassembly:
    """Reassemble one exchange.

    Args:
        path: the upstream path (``/v1/chat/completions``, ``/api/chat``, ...).
        request: the parsed JSON request body (or ``None``).
        body: the decoded response body of a non-streamed exchange.
        events: the decoded events of a streamed exchange (SSE or NDJSON lines).

    Returns:
        A :class:`Reassembly`; ``completion`` is ``None`` for routes that carry no
        assistant turn (embeddings, models) or bodies that are not JSON. Never raises.
    """
    dialect = dialect_of(path)
    if dialect is None:
        return Reassembly(completion=None)
    ex = _Exchange(dialect)
    stream = events is not None
    if stream:
        _parse_events(ex, events or [])
    else:
        try:
            obj = json.loads(body or b"")
        except ValueError:
            return Reassembly(completion=None)
        _parse_body(ex, obj)
        if not ex.turns:
            return Reassembly(completion=None)
    turns = {i: t.assistant() for i, t in sorted(ex.turns.items())} or {0: TurnBuilder().assistant()}
    for turn in ex.turns.values():
        ex.flags.update(turn.flags)
    first = turns[min(turns)]
    calls, call_flags = detect_content_calls(first["content"], request)
    ex.flags.update(call_flags)
    _finish_flags(ex, request, first, stream)
    completion = {
        "assistant": first,
        "usage": ex.usage,
        "flags": sorted(ex.flags),
        "content_calls": [c.to_json() for c in calls],
    }
    return Reassembly(
        completion=completion,
        response_body=_chat_body(ex, turns) if stream else None,
        error=ex.error,
    )
