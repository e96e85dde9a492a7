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
