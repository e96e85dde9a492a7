"""Recording exchanges the gateway answers itself (the probes' MCP door).

Services mounted beside the gateway (``probegate.runner.compose`` mounts the probes'
MCP door at ``.../mcp``) answer in-process, but their exchanges are captured exactly
like forwarded model exchanges: the same :class:`~probegate.gateway.capture.RecordedExchange`,
the attempt's same ``seq`` counter, the same redaction, the same writer. The request
body is read first (the gateway's ``--max-body`` applies), handed to the inner app
in one piece, and every response piece is recorded as it is sent, so an SSE answer
is stored byte for byte with its timing. A client that leaves mid-stream is seen
through ``receive`` (the inner app hears it too) and the partial exchange is kept.
"""

from __future__ import annotations

import time
from collections.abc import MutableMapping
from typing import Any

from probegate.gateway.capture import RecordedExchange
from probegate.gateway.forward import (
    ASGIApp,
    ClientDisconnected,
    Forwarder,
    Receive,
    RequestTooLarge,
    Scope,
    Send,
)
from probegate.urls import Target


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000.0


class LocalRecorder:
    """Serves a request with an in-process ASGI app and records the exchange.

    Args:
        forwarder: whose writer, redaction, body limit and ``seq`` counters to share.
    """

    def __init__(self, forwarder: Forwarder) -> None:
        self.forwarder = forwarder

    async def __call__(self, scope: Scope, receive: Receive, send: Send, target: Target, app: ASGIApp) -> None:
        self.forwarder.inflight += 1  # the health route's ``pending``: a run waits for it to drain
        try:
            await self._serve(scope, receive, send, target, app)
        finally:
            self.forwarder.inflight -= 1

    async def _serve(self, scope: Scope, receive: Receive, send: Send, target: Target, app: ASGIApp) -> None:
        t0 = time.perf_counter()
        rec = self.forwarder.recording(scope, target)
        try:
            rec.request_body = await self.forwarder.read_body(receive)
        except RequestTooLarge as exc:
            rec.error = f"request_too_large: {exc}"
            await self.forwarder.answer_error(send, rec, t0, 413, "request_too_large", str(exc))
            return
        except ClientDisconnected:
            rec.error = "client_disconnected"
            await self.forwarder.finish(rec, t0)
            return
        sent = [False]  # whether the response's last piece went out
        try:
            await app(scope, _replaying(rec, receive, sent), _recording(rec, send, t0, sent))
        except BaseException as exc:
            rec.error = rec.error or f"local_app_failed: {type(exc).__name__}: {exc}"
            raise
        finally:
            await self.forwarder.finish(rec, t0)


def _replaying(rec: RecordedExchange, receive: Receive, sent: list[bool]) -> Receive:
    """A ``receive`` that gives the body already read, then the client's own messages;
    a disconnect before the response is complete marks the exchange ``client_disconnected``."""
    given = False

    async def inner() -> MutableMapping[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": rec.request_body, "more_body": False}
        message = await receive()
        if message["type"] == "http.disconnect" and not sent[0]:
            rec.error = rec.error or "client_disconnected"
        return message

    return inner


def _recording(rec: RecordedExchange, send: Send, t0: float, sent: list[bool]) -> Send:
    """A ``send`` that records the status, headers and every body piece, then sends them."""

    async def inner(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            sent[0] = True
        if message["type"] == "http.response.start":
            rec.status_code = message["status"]
            rec.response_headers = list(message.get("headers", []))
            rec.overhead_ms = _ms(t0)
            message = {**message, "headers": [*rec.response_headers, (b"x-probegate-exchange-id", rec.id.encode())]}
        elif message["type"] == "http.response.body" and message.get("body"):
            t = _ms(t0)
            if rec.ttft_ms is None:
                rec.ttft_ms = t
            rec.pieces.append((t, bytes(message["body"])))
        await send(message)

    return inner
