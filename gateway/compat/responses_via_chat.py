"""``responses-via-chat``: a ``POST .../v1/responses`` request goes upstream as
``POST .../v1/chat/completions``, and the answer comes back in Responses form (pure).

For servers without the Responses route (llama-cpp-python answers ``404 Not Found``;
``probegate doctor`` finds it, check ``responses``). Unlike the other rules this one is
not a body rewrite: the forwarder (:mod:`probegate.gateway.via_chat`) calls the three
translations here, which do no I/O:

- :func:`to_chat`: the Responses request -> a chat-completions request (raises
  :class:`Refused` for what has no chat equivalent);
- :func:`response_from_chat`: a ``chat.completion`` -> a ``response`` object;
- :class:`EventStream`: ``chat.completion.chunk`` objects, one at a time -> Responses
  stream events (``response.created`` ... ``response.completed``), as they arrive.

Request mapping: ``instructions`` -> a first system message; ``input`` (text, or items:
``message`` items with ``input_text``/``output_text`` parts, a ``developer`` role as
``system``; ``function_call`` items -> assistant ``tool_calls`` (consecutive calls, and
the assistant text just before them, are one assistant message); ``function_call_output``
-> ``role: tool`` with ``tool_call_id`` = ``call_id``; ``reasoning`` items are dropped:
chat servers take no reasoning back) -> ``messages``; flat function ``tools`` -> chat
tools; ``tool_choice``; ``max_output_tokens`` -> ``max_tokens``; ``text.format``
(``json_schema``/``json_object``) -> ``response_format``; ``temperature``, ``top_p``,
``parallel_tool_calls``, ``user``, ``stream`` as they are. A streamed request also
asks for ``stream_options.include_usage`` (usage reaches ``response.completed``).
Fields a stateless chat server cannot honour and that change nothing in the turn
(``store``, ``metadata``, ``include``, ``truncation``, ``reasoning``, ...) are dropped;
every drop is a recorded change. Refused (HTTP 400, recorded): ``previous_response_id``
and ``conversation`` (the rule is stateless: send the whole history as ``input``),
``background``, ``prompt`` templates, built-in (non-function) tools and tool choices,
and input items of other kinds (``item_reference``, hosted tool calls, files).

Answer mapping: reasoning text (``reasoning_content``/``reasoning``) -> a ``reasoning``
item; text -> one ``message`` item with an ``output_text`` part; each tool call -> a
``function_call`` item whose ``call_id`` is the chat call's id (``call_<base>_<n>``
when the server sent none) and whose ``arguments`` are the raw string as sent (never
repaired); ``finish_reason: length`` -> ``status: incomplete`` with
``incomplete_details.reason: max_output_tokens``; usage -> ``input_tokens``,
``output_tokens``, ``total_tokens``. Ids derive from a ``base`` the caller gives (the
gateway passes the exchange id), so the same upstream answer always translates the same.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from probegate.gateway.compat.rule import Change, Rule

NAME = "responses-via-chat"
#: The ``to`` of the ``(answer)`` change of an exchange whose answer the client got translated
#: (a replay answers such an exchange with its recorded bytes, as they are).
TRANSLATED = ("response", "responses events")
#: The ``to`` of the ``(answer)`` change of a replayed translation.
REPLAYED = "replayed translation"

#: Top-level request fields dropped (recorded) rather than refused: none changes the turn
#: a stateless chat server produces.
DROPPED = ("store", "metadata", "include", "truncation", "reasoning", "service_tier", "safety_identifier",
           "prompt_cache_key", "prompt_cache_retention", "stream_options", "top_logprobs", "max_tool_calls",
           "context_management", "verbosity")
#: Fields copied as they are.
COPIED = ("model", "temperature", "top_p", "parallel_tool_calls", "user", "stream", "seed", "stop",
          "frequency_penalty", "presence_penalty")
#: Fields with no chat equivalent that would change the turn: refused.
REFUSED = {
    "previous_response_id": "the rule is stateless: send the whole history as input items",
    "conversation": "the rule is stateless: send the whole history as input items",
    "background": "a chat server cannot run a response in the background",
    "prompt": "prompt templates live on OpenAI's servers",
}


class Refused(ValueError):
    """The request has something chat completions cannot carry.

    Attributes:
        param: the request field, as ``input[3]`` or ``tools[0]``.
        message: why, one line.
    """

    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"{param}: {message}")
        self.param = param
        self.message = message


def is_responses_path(path: str) -> bool:
    """Whether an upstream path is the Responses create route (``/v1/responses``)."""
    return path.split("?", 1)[0].rstrip("/").endswith("/responses")


def chat_path(path: str) -> str:
    """``/v1/responses`` -> ``/v1/chat/completions`` (whatever prefix comes before)."""
    return path.rstrip("/")[: -len("responses")] + "chat/completions"


def error_body(message: str, *, code: str, param: str | None = None) -> bytes:
    """A 400 in the OpenAI/Responses error shape ``{"error": {"message", "type", "param", "code"}}``."""
    return json.dumps({"error": {"message": message, "type": "invalid_request_error", "param": param,
                                 "code": code}}).encode()


# -- request -----------------------------------------------------------------------------
def _change(path: str, before: Any, after: Any) -> Change:
    return {"rule": NAME, "path": path, "from": before, "to": after}


def _text_of(content: Any) -> str | None:
    """Content parts as one string when every part is text, else ``None``."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text", "refusal"):
            texts.append(str(part.get("text", part.get("refusal", ""))))
        else:
            return None
    return "".join(texts)


def _parts(content: list[Any], where: str) -> list[dict[str, Any]]:
    out = []
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(part, str):
            out.append({"type": "text", "text": part})
        elif kind in ("input_text", "output_text", "text"):
            out.append({"type": "text", "text": part.get("text", "")})
        elif kind == "input_image" and isinstance(part.get("image_url"), str):
            image: dict[str, Any] = {"url": part["image_url"]}
            if part.get("detail"):
                image["detail"] = part["detail"]
            out.append({"type": "image_url", "image_url": image})
        else:
            raise Refused(f"{where}.content[{j}]", f"a {kind or type(part).__name__!s} content part has no "
                                                   "chat-completions form here")
    return out


def _message(item: dict[str, Any], where: str) -> dict[str, Any]:
    role = item.get("role")
    if role not in ("user", "assistant", "system", "developer"):
        raise Refused(f"{where}.role", f"unknown message role {role!r}")
    content = item.get("content")
    text = _text_of(content)
    if text is None and not isinstance(content, list):
        raise Refused(f"{where}.content", "message content must be text or a list of content parts")
    return {"role": "system" if role == "developer" else role,
            "content": text if text is not None else _parts(content, where)}


def _output_text(output: Any) -> Any:
    text = _text_of(output)
    if text is not None:
        return text
    return json.dumps(output, ensure_ascii=False)


def _messages(body: dict[str, Any], changes: list[Change]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        messages.append({"role": "system", "content": instructions})
    source = body.get("input")
    if isinstance(source, str):
        return [*messages, {"role": "user", "content": source}]
    if source is None:
        return messages
    if not isinstance(source, list):
        raise Refused("input", "input must be text or a list of items")
    for i, item in enumerate(source):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise Refused(where, "an input item must be an object")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            messages.append(_message(item, where))
        elif kind == "function_call":
            call = {"id": item.get("call_id"), "type": "function",
                    "function": {"name": item.get("name"), "arguments": item.get("arguments")}}
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant":  # the text before it, or a parallel call
                last.setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"),
                             "content": _output_text(item.get("output"))})
        elif kind == "reasoning":
            changes.append(_change(where, "reasoning", None))
        else:
            raise Refused(where, f"input items of type {kind!r} have no chat-completions form")
    return messages


def _tools(tools: Any) -> list[dict[str, Any]]:
    if not isinstance(tools, list):
        raise Refused("tools", "tools must be a list")
    out = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or tool.get("type") != "function":
            kind = tool.get("type") if isinstance(tool, dict) else type(tool).__name__
            raise Refused(f"tools[{i}]", f"built-in tools ({kind}) cannot run on a chat-completions server")
        function = {k: tool[k] for k in ("name", "description", "parameters", "strict") if tool.get(k) is not None}
        out.append({"type": "function", "function": function})
    return out


def _tool_choice(choice: Any) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function" and isinstance(choice.get("name"), str):
        return {"type": "function", "function": {"name": choice["name"]}}
    raise Refused("tool_choice", f"tool_choice {json.dumps(choice)} has no chat-completions form")


def _response_format(text: Any) -> dict[str, Any] | None:
    fmt = text.get("format") if isinstance(text, dict) else None
    if not isinstance(fmt, dict) or fmt.get("type") in (None, "text"):
        return None
    if fmt["type"] == "json_object":
        return {"type": "json_object"}
    if fmt["type"] == "json_schema":
        schema = {k: fmt[k] for k in ("name", "description", "schema", "strict") if k in fmt}
        return {"type": "json_schema", "json_schema": schema}
    raise Refused("text.format", f"text format {fmt['type']!r} has no chat-completions form")


def to_chat(body: dict[str, Any]) -> tuple[dict[str, Any], list[Change]]:
    """Translate a Responses request into a chat-completions request.

    Args:
        body: the parsed ``POST /v1/responses`` body.

    Returns:
        ``(chat request, changes)``; the changes name what was dropped (``reasoning``
        items, fields in :data:`DROPPED`) and added (``stream_options``).

    Raises:
        Refused: a field or item that chat completions cannot carry (see module docstring).
    """
    for key, why in REFUSED.items():
        if body.get(key) not in (None, False, ""):
            raise Refused(key, f"responses-via-chat cannot translate {key}: {why}")
    changes: list[Change] = []
    chat: dict[str, Any] = {k: body[k] for k in COPIED if k in body}
    chat["messages"] = _messages(body, changes)
    if body.get("tools"):
        chat["tools"] = _tools(body["tools"])
    if body.get("tool_choice") is not None:
        chat["tool_choice"] = _tool_choice(body["tool_choice"])
    if body.get("max_output_tokens") is not None:
        chat["max_tokens"] = body["max_output_tokens"]
    response_format = _response_format(body.get("text"))
    if response_format is not None:
        chat["response_format"] = response_format
    for key in DROPPED:
        if key in body:
            changes.append(_change(key, body[key], None))
    if chat.get("stream"):
        chat["stream_options"] = {"include_usage": True}
        changes.append(_change("stream_options", None, chat["stream_options"]))
    unknown = sorted(set(body) - set(COPIED) - set(DROPPED) - set(REFUSED)
                     - {"input", "instructions", "tools", "tool_choice", "max_output_tokens", "text"})
    for key in unknown:
        changes.append(_change(key, body[key], None))
    return chat, changes


# -- answer ------------------------------------------------------------------------------
def _usage(usage: Any) -> dict[str, Any] | None:
    if not isinstance(usage, dict):
        return None
    prompt = usage.get("prompt_tokens")
    completion = usage.get("completion_tokens")
    if not isinstance(prompt, int) and not isinstance(completion, int):
        return None
    prompt, completion = prompt if isinstance(prompt, int) else 0, completion if isinstance(completion, int) else 0
    total = usage.get("total_tokens")
    details = usage.get("completion_tokens_details") if isinstance(usage.get("completion_tokens_details"), dict) else {}
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") if isinstance(
        usage.get("prompt_tokens_details"), dict) else None
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": cached or 0, "cache_write_tokens": 0},
            "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": details.get("reasoning_tokens") or 0},
            "total_tokens": total if isinstance(total, int) else prompt + completion}


def _status(finish_reason: Any) -> tuple[str, dict[str, str] | None]:
    if finish_reason == "length":
        return "incomplete", {"reason": "max_output_tokens"}
    if finish_reason == "content_filter":
        return "incomplete", {"reason": "content_filter"}
    return "completed", None


def _arguments(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _reasoning(obj: dict[str, Any]) -> str:
    for key in ("reasoning_content", "reasoning"):
        if isinstance(obj.get(key), str) and obj[key]:
            return str(obj[key])
    return ""


def text_item(item_id: str, text: str, status: str = "completed") -> dict[str, Any]:
    """An assistant ``message`` output item with one ``output_text`` part."""
    part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    return {"id": item_id, "type": "message", "status": status, "role": "assistant", "content": [part] if text else []}


def call_item(item_id: str, call_id: str, name: str, arguments: str, status: str = "completed") -> dict[str, Any]:
    """A ``function_call`` output item."""
    return {"id": item_id, "type": "function_call", "status": status, "call_id": call_id, "name": name,
            "arguments": arguments}


def reasoning_item(item_id: str, text: str) -> dict[str, Any]:
    """A ``reasoning`` output item carrying the server's reasoning text."""
    return {"id": item_id, "type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": text}]}


def response_object(request: dict[str, Any], *, response_id: str, created_at: float, model: Any, status: str,
                    output: list[dict[str, Any]], usage: dict[str, Any] | None,
                    incomplete: dict[str, str] | None = None) -> dict[str, Any]:
    """A ``response`` object echoing the request's settings (the shape the ``openai`` SDK parses)."""
    text = request.get("text") if isinstance(request.get("text"), dict) else {"format": {"type": "text"}}
    return {
        "id": response_id, "object": "response", "created_at": created_at, "status": status,
        "error": None, "incomplete_details": incomplete, "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"), "model": model or request.get("model") or "",
        "output": output, "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "previous_response_id": None, "reasoning": {"effort": None, "summary": None},
        "store": False, "temperature": request.get("temperature"), "text": text,
        "tool_choice": request.get("tool_choice") or "auto", "tools": request.get("tools") or [],
        "top_p": request.get("top_p"), "truncation": "disabled", "usage": usage, "user": request.get("user"),
        "metadata": request.get("metadata") or {},
    }


def response_from_chat(chat: dict[str, Any], request: dict[str, Any], *, base: str,
                       created_at: float | None = None) -> dict[str, Any]:
    """Translate a non-streamed ``chat.completion`` into a ``response`` object.

    Args:
        chat: the upstream's parsed answer (its first choice is the turn).
        request: the client's Responses request (echoed settings).
        base: the id root (``resp_<base>``, ``msg_<base>_<n>``, ``fc_<base>_<n>``).
        created_at: Unix seconds; the chat answer's ``created`` when absent.

    Raises:
        ValueError: ``chat`` has no ``choices[0].message``.
    """
    choices = chat.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    message = choice.get("message") if choice else None
    if not isinstance(message, dict):
        raise ValueError("the upstream answer has no choices[0].message: not a chat completion")
    output: list[dict[str, Any]] = []
    reasoning = _reasoning(message)
    if reasoning:
        output.append(reasoning_item(f"rs_{base}_{len(output)}", reasoning))
    text = _text_of(message.get("content")) or ""
    if text:
        output.append(text_item(f"msg_{base}_{len(output)}", text))
    for i, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") if isinstance(call, dict) and isinstance(call.get("function"), dict) else {}
        call_id = call.get("id") if isinstance(call, dict) and call.get("id") else f"call_{base}_{i}"
        output.append(call_item(f"fc_{base}_{len(output)}", str(call_id), str(fn.get("name") or ""),
                                _arguments(fn.get("arguments"))))
    status, incomplete = _status(choice.get("finish_reason") if choice else None)
    created = created_at if created_at is not None else chat.get("created") or time.time()
    return response_object(request, response_id=f"resp_{base}", created_at=created, model=chat.get("model"),
                           status=status, output=output, usage=_usage(chat.get("usage")), incomplete=incomplete)


def encode_event(event: dict[str, Any]) -> bytes:
    """One SSE event: ``event: <type>`` and ``data: <json>`` lines, then a blank line."""
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()


@dataclass
class _Open:
    """An output item being streamed."""

    output_index: int
    item: dict[str, Any]
    text: list[str] = field(default_factory=list)
    closed: bool = False


@dataclass
class EventStream:
    """Chat-completion chunks in, Responses stream events out, as they arrive (no I/O).

    Call :meth:`start` once, :meth:`feed` for each parsed chunk, :meth:`finish` when the
    upstream stream ends (``[DONE]`` or its last byte); each returns the events to send
    now (encode them with :func:`encode_event`). Events carry ``sequence_number`` from 0.
    A chunk with an ``error`` object ends the stream with ``error`` and
    ``response.failed``. No ``[DONE]`` is ever produced.
    """

    request: dict[str, Any]
    base: str
    created_at: float = field(default_factory=time.time)
    model: Any = None
    finish_reason: Any = None
    usage: dict[str, Any] | None = None
    failed: bool = False
    items: list[_Open] = field(default_factory=list)
    calls: dict[Any, _Open] = field(default_factory=dict)
    _seq: int = 0

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": kind, "sequence_number": self._seq, **fields}
        self._seq += 1
        return event

    def _response(self, status: str, incomplete: dict[str, str] | None = None) -> dict[str, Any]:
        output = [self._final(o) for o in self.items] if status != "in_progress" else []
        return response_object(self.request, response_id=f"resp_{self.base}", created_at=self.created_at,
                               model=self.model, status=status, output=output, usage=self.usage if status != "in_progress" else None,
                               incomplete=incomplete)

    def start(self) -> list[dict[str, Any]]:
        """``response.created`` and ``response.in_progress``."""
        return [self._event("response.created", response=self._response("in_progress")),
                self._event("response.in_progress", response=self._response("in_progress"))]

    # -- items ------------------------------------------------------------------------------
    def _current(self) -> _Open | None:
        return self.items[-1] if self.items and not self.items[-1].closed else None

    def _open(self, item: dict[str, Any]) -> tuple[_Open, list[dict[str, Any]]]:
        events = self._close_current()
        opened = _Open(len(self.items), item)
        self.items.append(opened)
        return opened, [*events, self._event("response.output_item.added", output_index=opened.output_index, item=dict(item))]

    def _final(self, o: _Open) -> dict[str, Any]:
        kind = o.item["type"]
        text = "".join(o.text)
        if kind == "message":
            return text_item(o.item["id"], text)
        if kind == "reasoning":
            return reasoning_item(o.item["id"], text)
        return call_item(o.item["id"], o.item["call_id"], o.item["name"], text)

    def _close(self, o: _Open) -> list[dict[str, Any]]:
        o.closed = True
        final, kind, where = self._final(o), o.item["type"], {"item_id": o.item["id"], "output_index": o.output_index}
        events = []
        if kind == "message":
            part = final["content"][0] if final["content"] else {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            events += [self._event("response.output_text.done", **where, content_index=0, text=part["text"], logprobs=[]),
                       self._event("response.content_part.done", **where, content_index=0, part=part)]
        elif kind == "reasoning":
            events.append(self._event("response.reasoning_text.done", **where, content_index=0, text=final["content"][0]["text"]))
        else:
            events.append(self._event("response.function_call_arguments.done", **where, name=final["name"],
                                      arguments=final["arguments"]))
        return [*events, self._event("response.output_item.done", output_index=o.output_index, item=final)]

    def _close_current(self) -> list[dict[str, Any]]:
        current = self._current()
        return self._close(current) if current is not None else []

    def _text(self, kind: str, delta: str) -> list[dict[str, Any]]:
        current = self._current()
        events: list[dict[str, Any]] = []
        if current is None or current.item["type"] != kind:
            n = len(self.items)
            if kind == "message":
                current, events = self._open({**text_item(f"msg_{self.base}_{n}", "", "in_progress")})
                part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
                events.append(self._event("response.content_part.added", item_id=current.item["id"],
                                          output_index=current.output_index, content_index=0, part=part))
            else:
                current, events = self._open({**reasoning_item(f"rs_{self.base}_{n}", ""), "content": []})
        current.text.append(delta)
        where = {"item_id": current.item["id"], "output_index": current.output_index, "content_index": 0}
        if kind == "message":
            return [*events, self._event("response.output_text.delta", **where, delta=delta, logprobs=[])]
        return [*events, self._event("response.reasoning_text.delta", **where, delta=delta)]

    def _call(self, fragment: dict[str, Any], position: int) -> list[dict[str, Any]]:
        fn = fragment.get("function") if isinstance(fragment.get("function"), dict) else {}
        key = fragment.get("index", position)
        call = self.calls.get(key)
        events: list[dict[str, Any]] = []
        if call is None:
            n = len(self.items)
            call_id = fragment.get("id") or f"call_{self.base}_{len(self.calls)}"
            call, events = self._open(call_item(f"fc_{self.base}_{n}", str(call_id), str(fn.get("name") or ""), "",
                                                "in_progress"))
            self.calls[key] = call
        elif fn.get("name") and not call.item["name"]:
            call.item["name"] = str(fn["name"])
        piece = _arguments(fn.get("arguments"))
        if not piece:
            return events
        call.text.append(piece)
        return [*events, self._event("response.function_call_arguments.delta", item_id=call.item["id"],
                                     output_index=call.output_index, delta=piece)]

    # -- chunks -----------------------------------------------------------------------------
    def feed(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        """The events one ``chat.completion.chunk`` makes (only choice 0 is read)."""
        if self.failed:
            return []
        if "error" in chunk and not chunk.get("choices"):
            return self.fail(chunk["error"])
        self.model = self.model or chunk.get("model")
        if _usage(chunk.get("usage")):
            self.usage = _usage(chunk.get("usage"))
        events: list[dict[str, Any]] = []
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
            reasoning = _reasoning(delta)
            if reasoning:
                events += self._text("reasoning", reasoning)
            text = _text_of(delta.get("content"))
            if text:
                events += self._text("message", text)
            for position, fragment in enumerate(delta.get("tool_calls") or []):
                if isinstance(fragment, dict):
                    events += self._call(fragment, position)
            if choice.get("finish_reason") is not None:
                self.finish_reason = choice["finish_reason"]
        return events

    def fail(self, error: Any) -> list[dict[str, Any]]:
        """``error`` and ``response.failed``: the upstream stream carried an error."""
        self.failed = True
        message = error.get("message") if isinstance(error, dict) else error
        code = error.get("code") if isinstance(error, dict) else None
        failed = self._response("failed")
        failed["error"] = {"code": "server_error", "message": str(message)}
        return [self._event("error", code=code, message=str(message), param=None),
                self._event("response.failed", response=failed)]

    def finish(self) -> list[dict[str, Any]]:
        """Close every open item and end with ``response.completed`` (or ``.incomplete``)."""
        if self.failed:
            return []
        events = []
        for o in self.items:
            if not o.closed:
                events += self._close(o)
        status, incomplete = _status(self.finish_reason)
        kind = "response.completed" if status == "completed" else "response.incomplete"
        return [*events, self._event(kind, response=self._response(status, incomplete))]


def events_from_chat(chat: dict[str, Any], request: dict[str, Any], *, base: str,
                     created_at: float | None = None) -> list[dict[str, Any]]:
    """The whole stream of events for a non-streamed ``chat.completion`` (a server that
    answered a streamed request in one JSON body): the message fed as one chunk.

    Raises:
        ValueError: ``chat`` has no ``choices[0].message``.
    """
    choices = chat.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    if not isinstance(choice.get("message"), dict):
        raise ValueError("the upstream answer has no choices[0].message: not a chat completion")
    machine = EventStream(request, base, created_at=created_at if created_at is not None else chat.get("created") or time.time())
    chunk = {"model": chat.get("model"), "usage": chat.get("usage"),
             "choices": [{"index": 0, "delta": choice["message"], "finish_reason": choice.get("finish_reason")}]}
    return machine.start() + machine.feed(chunk) + machine.finish()


def _no_body_rewrite(_body: dict[str, Any], _value: Any = None) -> list[Change]:
    return []  # a route translation: the forwarder runs it (probegate.gateway.via_chat)


RULE = Rule(NAME, "POST /v1/responses -> /v1/chat/completions upstream, the answer back in Responses form, streamed "
            "or not (servers without /v1/responses: llama-cpp-python)", _no_body_rewrite)
