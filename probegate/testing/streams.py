"""Builders for wire bodies the way model servers send them (for tests and benches)."""

from __future__ import annotations

import json
from typing import Any


def sse(events: list[Any], *, done: bool = True, eol: str = "\n") -> bytes:
    """An SSE body: each event as ``data: <json>`` then a blank line, then ``[DONE]``."""
    out = []
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event, separators=(",", ":"))
        out.append(f"data: {data}{eol}{eol}")
    if done:
        out.append(f"data: [DONE]{eol}{eol}")
    return "".join(out).encode()


def chat_chunk(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> dict[str, Any]:
    """One ``chat.completion.chunk`` with a single choice."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1735725600,
        "model": extra.pop("model", "test-model"),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        **extra,
    }


def chat_completion(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    *,
    model: str = "test-model",
    finish_reason: str | None = None,
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """A non-streamed ``chat.completion``; ``tool_calls`` as ``[{"name", "arguments"}]``
    (arguments a dict or a raw string)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": call.get("id", f"call_{i}"),
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"]
                    if isinstance(call["arguments"], str)
                    else json.dumps(call["arguments"]),
                },
            }
            for i, call in enumerate(tool_calls)
        ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1735725600,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def chat_stream(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    *,
    model: str = "test-model",
    pieces: int = 3,
) -> list[dict[str, Any]]:
    """The chunks of a streamed turn: content split in ``pieces``, each tool call's
    arguments split in two fragments, a finish chunk and a usage chunk."""
    chunks = [chat_chunk({"role": "assistant", "content": ""}, model=model)]
    if content:
        step = max(1, len(content) // pieces)
        for i in range(0, len(content), step):
            chunks.append(chat_chunk({"content": content[i : i + step]}, model=model))
    for i, call in enumerate(tool_calls or []):
        args = call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])
        half = len(args) // 2
        head = {"index": i, "id": call.get("id", f"call_{i}"), "type": "function",
                "function": {"name": call["name"], "arguments": args[:half]}}
        chunks.append(chat_chunk({"tool_calls": [head]}, model=model))
        chunks.append(chat_chunk({"tool_calls": [{"index": i, "function": {"arguments": args[half:]}}]}, model=model))
    chunks.append(chat_chunk({}, "tool_calls" if tool_calls else "stop", model=model))
    chunks.append({"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1735725600,
                   "model": model, "choices": [],
                   "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    return chunks


# -- the Responses API (POST /v1/responses) ----------------------------------------------
def _responses_usage() -> dict[str, Any]:
    return {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0}, "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}


def responses_output(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    *,
    reasoning: str | None = None,
    prefix: str = "test",
) -> list[dict[str, Any]]:
    """The ``output`` items of a response: a ``reasoning`` item, a ``message`` with one
    ``output_text`` part, then one ``function_call`` per tool call (``{"name", "arguments",
    "id"?}``; ``id`` becomes the ``call_id``, default ``call_<i>``), each in that order when given."""
    output: list[dict[str, Any]] = []
    if reasoning:
        output.append({"type": "reasoning", "id": f"rs_{prefix}", "summary": [],
                       "content": [{"type": "reasoning_text", "text": reasoning}]})
    if content:
        output.append({"type": "message", "id": f"msg_{prefix}", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": content, "annotations": []}]})
    for i, call in enumerate(tool_calls or []):
        args = call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])
        output.append({"type": "function_call", "id": f"fc_{prefix}_{i}", "call_id": call.get("id", f"call_{i}"),
                       "name": call["name"], "arguments": args, "status": "completed"})
    return output


def response_object(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    *,
    model: str = "test-model",
    reasoning: str | None = None,
    response_id: str = "resp_test",
    status: str = "completed",
    previous_response_id: str | None = None,
) -> dict[str, Any]:
    """A non-streamed ``response`` object (``object: "response"``) with the
    :func:`responses_output` items and usage in Responses terms (``input_tokens``,
    ``output_tokens``)."""
    return {
        "id": response_id,
        "object": "response",
        "created_at": 1735725600,
        "status": status,
        "model": model,
        "output": responses_output(content, tool_calls, reasoning=reasoning, prefix=response_id.removeprefix("resp_")),
        "parallel_tool_calls": True,
        "previous_response_id": previous_response_id,
        "tool_choice": "auto",
        "tools": [],
        "text": {"format": {"type": "text"}},
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "usage": _responses_usage(),
    }


def responses_stream(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    *,
    model: str = "test-model",
    reasoning: str | None = None,
    response_id: str = "resp_test",
    pieces: int = 3,
) -> list[dict[str, Any]]:
    """The events of a streamed response, in the order OpenAI sends them:
    ``response.created``, ``response.in_progress``, per output item
    ``response.output_item.added`` / its deltas (text split in ``pieces``, each call's
    arguments in two ``response.function_call_arguments.delta``) / its ``.done`` events /
    ``response.output_item.done``, then ``response.completed`` with the whole response.
    Every event has a ``sequence_number``; send them with :func:`sse_events`."""
    final = response_object(content, tool_calls, model=model, reasoning=reasoning, response_id=response_id)
    started = {**final, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": started},
                                    {"type": "response.in_progress", "response": started}]
    for index, item in enumerate(final["output"]):
        kind = item["type"]
        head = {"output_index": index, "item_id": item["id"]}
        if kind == "function_call":
            events.append({"type": "response.output_item.added", "output_index": index,
                           "item": {**item, "arguments": "", "status": "in_progress"}})
            half = len(item["arguments"]) // 2
            for piece in (item["arguments"][:half], item["arguments"][half:]):
                events.append({"type": "response.function_call_arguments.delta", **head, "delta": piece})
            events.append({"type": "response.function_call_arguments.done", **head,
                           "name": item["name"], "arguments": item["arguments"]})
        else:
            text_kind, part_key = ("output_text", "content") if kind == "message" else ("reasoning_text", "content")
            text = item[part_key][0]["text"]
            empty = {**item, part_key: [], "status": "in_progress"} if kind == "message" else {**item, "content": []}
            events.append({"type": "response.output_item.added", "output_index": index, "item": empty})
            part = {"type": text_kind, "text": ""} | ({"annotations": []} if kind == "message" else {})
            events.append({"type": "response.content_part.added", **head, "content_index": 0, "part": part})
            delta_type = "response.output_text.delta" if kind == "message" else "response.reasoning_text.delta"
            done_type = "response.output_text.done" if kind == "message" else "response.reasoning_text.done"
            step = max(1, len(text) // pieces)
            extra = {"logprobs": []} if kind == "message" else {}
            for i in range(0, len(text), step):
                events.append({"type": delta_type, **head, "content_index": 0, "delta": text[i : i + step], **extra})
            events.append({"type": done_type, **head, "content_index": 0, "text": text, **extra})
            events.append({"type": "response.content_part.done", **head, "content_index": 0,
                           "part": {**part, "text": text}})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": final})
    return [{**event, "sequence_number": seq} for seq, event in enumerate(events)]


def sse_events(events: list[dict[str, Any]], *, eol: str = "\n") -> list[bytes]:
    """SSE frames of typed events, one per event: an ``event: <type>`` line, then
    ``data: <json>``, then a blank line; no ``[DONE]`` (as the Responses API sends them)."""
    return [
        f"event: {event['type']}{eol}data: {json.dumps(event, separators=(',', ':'))}{eol}{eol}".encode()
        for event in events
    ]


def ndjson(objects: list[Any]) -> bytes:
    """An NDJSON body (Ollama's native streams): one compact JSON object a line."""
    return "".join(json.dumps(o, separators=(",", ":")) + "\n" for o in objects).encode()


def _ollama_calls(tool_calls: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    # Ollama sends every call whole, without an id, its arguments an object
    return [{"function": {"name": call["name"], "arguments": call["arguments"]}} for call in tool_calls or []]


def _ollama_done(model: str, done_reason: str) -> dict[str, Any]:
    return {"model": model, "created_at": "2025-01-01T10:00:00Z",
            "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": done_reason,
            "total_duration": 1000000, "prompt_eval_count": 10, "eval_count": 5}


def ollama_chat(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    *,
    model: str = "test-model",
    done_reason: str = "stop",
) -> dict[str, Any]:
    """A non-streamed Ollama ``/api/chat`` answer; ``tool_calls`` as ``[{"name", "arguments"}]``
    (arguments sent as given: a dict, as Ollama sends them, or a string to play a server
    that does not). Ollama gives calls no id and ends a tool-calling turn with ``done_reason: "stop"``."""
    body = _ollama_done(model, done_reason)
    body["message"] = {"role": "assistant", "content": content or ""}
    if tool_calls:
        body["message"]["tool_calls"] = _ollama_calls(tool_calls)
    return body


def ollama_chat_stream(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    *,
    model: str = "test-model",
    pieces: int = 3,
) -> list[dict[str, Any]]:
    """The NDJSON objects of a streamed ``/api/chat`` turn: content split in ``pieces``
    (``done: false``), one object with every tool call, then the ``done: true`` object
    with ``done_reason`` and the token counts (``prompt_eval_count``, ``eval_count``)."""
    def chunk(message: dict[str, Any]) -> dict[str, Any]:
        return {"model": model, "created_at": "2025-01-01T10:00:00Z",
                "message": {"role": "assistant", **message}, "done": False}

    chunks = []
    if content:
        step = max(1, len(content) // pieces)
        chunks += [chunk({"content": content[i : i + step]}) for i in range(0, len(content), step)]
    if tool_calls:
        chunks.append(chunk({"content": "", "tool_calls": _ollama_calls(tool_calls)}))
    return [*chunks, _ollama_done(model, "stop")]
