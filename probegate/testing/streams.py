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
