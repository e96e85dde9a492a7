"""A scripted upstream: a real ASGI server that plays a model server step by step.

Tests (and users testing their own harness) queue replies; each incoming request
takes the next one. A :class:`Turn` answers in the shape the request asked for
(chat completions, or Responses for a ``/responses`` path; streamed or not); a :class:`Reply` sends exact bytes, optionally in paced chunks,
after a delay, or breaking the connection part way (fault injection).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from probegate.testing.streams import (
    chat_completion,
    chat_stream,
    ndjson,
    ollama_chat,
    ollama_chat_stream,
    response_object,
    responses_stream,
    sse,
    sse_events,
)

_RESPONSE_IDS = itertools.count(1)


@dataclass
class ReceivedRequest:
    """A request the scripted upstream received."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


@dataclass
class Reply:
    """Exact bytes to send.

    Attributes:
        status: HTTP status.
        headers: response headers.
        body: the whole body, sent in one piece (ignored when ``chunks`` is set).
        chunks: body pieces, sent ``gap_s`` apart.
        delay_s: wait before the status line.
        break_after: after this many chunks, drop the connection without finishing.
        gate: after the first chunk, wait until this event is set before the rest
            (proves a proxy forwards the first bytes before the upstream finishes).
    """

    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    chunks: list[bytes] | None = None
    gap_s: float = 0.0
    delay_s: float = 0.0
    break_after: int | None = None
    gate: threading.Event | None = None

    @classmethod
    def json(cls, obj: Any, status: int = 200, **kw: Any) -> Reply:
        """A JSON reply."""
        return cls(status, [("content-type", "application/json")], json.dumps(obj).encode(), **kw)

    @classmethod
    def sse(cls, events: list[Any], *, gap_s: float = 0.0, done: bool = True, **kw: Any) -> Reply:
        """An SSE reply, one chunk per event."""
        chunks = [sse([e], done=False) for e in events] + ([b"data: [DONE]\n\n"] if done else [])
        return cls(200, [("content-type", "text/event-stream")], chunks=chunks, gap_s=gap_s, **kw)

    @classmethod
    def ndjson(cls, objects: list[Any], *, gap_s: float = 0.0, **kw: Any) -> Reply:
        """An NDJSON reply (Ollama's native stream), one chunk per object."""
        chunks = [ndjson([o]) for o in objects]
        return cls(200, [("content-type", "application/x-ndjson")], chunks=chunks, gap_s=gap_s, **kw)


@dataclass
class Turn:
    """An assistant turn, sent streamed or not as the request asks.

    A request to Ollama's native ``/api/chat`` is answered in its form: NDJSON unless
    the request says ``"stream": false`` (Ollama streams by default), calls without ids.

    A request to a path ending in ``/responses`` gets the Responses form: a
    ``response`` object (``id`` ``resp_NNNN``, unique in the process), or its SSE
    events with ``event:`` lines and no ``[DONE]``; any other path gets a chat completion.

    Attributes:
        content: the answer text.
        tool_calls: ``[{"name", "arguments", "id"?}]`` (arguments a dict or raw text).
        reasoning: reasoning text (a ``reasoning`` output item in Responses form;
            ``reasoning_content`` in chat form).
        gap_s: seconds between streamed events.
    """

    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    gap_s: float = 0.0
    reasoning: str | None = None

    def reply_for(self, request: ReceivedRequest) -> Reply:
        try:
            body = request.json()
        except ValueError:
            body = {}
        model = body.get("model", "test-model") if isinstance(body, dict) else "test-model"
        stream = isinstance(body, dict) and bool(body.get("stream"))
        if request.path.rstrip("/").endswith("/api/chat"):
            if not isinstance(body, dict) or body.get("stream", True):
                return Reply.ndjson(ollama_chat_stream(self.content, self.tool_calls, model=model), gap_s=self.gap_s)
            return Reply.json(ollama_chat(self.content, self.tool_calls, model=model))
        if request.path.rstrip("/").endswith("/responses"):
            response_id = f"resp_{next(_RESPONSE_IDS):04d}"
            kw = {"model": model, "reasoning": self.reasoning, "response_id": response_id}
            if stream:
                events = responses_stream(self.content, self.tool_calls, **kw)
                return Reply(200, [("content-type", "text/event-stream")], chunks=sse_events(events), gap_s=self.gap_s)
            previous = body.get("previous_response_id") if isinstance(body, dict) else None
            return Reply.json(response_object(self.content, self.tool_calls, previous_response_id=previous, **kw))
        if self.reasoning is not None:
            return self._chat_with_reasoning(stream, model)
        if stream:
            return Reply.sse(chat_stream(self.content, self.tool_calls, model=model), gap_s=self.gap_s)
        return Reply.json(chat_completion(self.content, self.tool_calls, model=model))

    def _chat_with_reasoning(self, stream: bool, model: str) -> Reply:
        if stream:
            chunks = chat_stream(self.content, self.tool_calls, model=model)
            chunks.insert(1, {**chunks[0], "choices": [{"index": 0, "delta": {"reasoning_content": self.reasoning},
                                                        "finish_reason": None}]})
            return Reply.sse(chunks, gap_s=self.gap_s)
        body = chat_completion(self.content, self.tool_calls, model=model)
        body["choices"][0]["message"]["reasoning_content"] = self.reasoning
        return Reply.json(body)


Script = Reply | Turn
Handler = Callable[[ReceivedRequest], Script]


class _Broken(Exception):
    """Raised inside the ASGI app to make uvicorn drop the connection."""


class ScriptedUpstream:
    """An ASGI app answering from a queue of scripts (or a handler function).

    Args:
        replies: scripts answered in order.
        handler: called for a request when the queue is empty.
        default: answered when both are exhausted (a plain ``Turn("ok")``).
    """

    def __init__(
        self,
        replies: list[Script] | None = None,
        handler: Handler | None = None,
        default: Script | None = None,
    ) -> None:
        self._queue: deque[Script] = deque(replies or [])
        self.handler = handler
        self.default = default or Turn("ok")
        self.requests: list[ReceivedRequest] = []
        self.completed = 0
        self.disconnects = 0
        self._lock = threading.Lock()

    def push(self, *scripts: Script) -> None:
        """Queue more scripts."""
        with self._lock:
            self._queue.extend(scripts)

    def _next(self, request: ReceivedRequest) -> Reply:
        with self._lock:
            script = self._queue.popleft() if self._queue else None
        if script is None:
            script = self.handler(request) if self.handler else self.default
        return script.reply_for(request) if isinstance(script, Turn) else script

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = ReceivedRequest(
            scope["method"],
            scope["path"],
            scope.get("query_string", b"").decode(),
            {k.decode().lower(): v.decode() for k, v in scope["headers"]},
            body,
        )
        self.requests.append(request)
        watcher = asyncio.ensure_future(self._watch(receive))
        try:
            await self._send(self._next(request), send, watcher)
        finally:
            watcher.cancel()

    async def _watch(self, receive: Any) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        self.disconnects += 1

    async def _send(self, reply: Reply, send: Any, watcher: asyncio.Future[None]) -> None:
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        headers = [(k.encode(), v.encode()) for k, v in reply.headers]
        if reply.chunks is None and reply.break_after is None:
            headers.append((b"content-length", str(len(reply.body)).encode()))
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        chunks = reply.chunks if reply.chunks is not None else [reply.body]
        for i, chunk in enumerate(chunks):
            if reply.break_after is not None and i >= reply.break_after:
                raise _Broken("scripted connection break")
            if i and reply.gap_s:
                await asyncio.sleep(reply.gap_s)
            if i == 1 and reply.gate is not None:
                await asyncio.wait(
                    [asyncio.ensure_future(asyncio.to_thread(reply.gate.wait, 60)), watcher],
                    return_when=asyncio.FIRST_COMPLETED,
                )
            if watcher.done():
                return  # the client (the proxy) went away: stop like a real server
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        self.completed += 1
