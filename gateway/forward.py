"""The pass-through: one raw ASGI handler that forwards a request and records it.

Body bytes go upstream unchanged; response bytes come back piece by piece as they
arrive (``aiter_raw``: no decompression, no re-serialisation, no buffering). The
only work on the hot path is appending ``(offset, bytes)`` to the recording and one
submit at the end, **before the last byte of the answer goes out**: with a spool the
writer builds the exchange's (redacted) row there and journals it with one ``write()``,
so a client that got its whole answer has its exchange on disk even if the gateway is
SIGKILLed next (a body with ``content-length`` keeps its last piece back until then; a
chunked body ends only with the final message). Committing happens in the writer thread.
"""

from __future__ import annotations

import itertools
import json
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from probegate.urls import Target
from probegate.gateway.capture import RecordedExchange, stream_format
from probegate.gateway.disconnect import pump_until_disconnect
from probegate.gateway.compat.responses_via_chat import is_responses_path
from probegate.gateway.headers import RawHeaders, header, request_headers_for_upstream, response_headers_for_client
from probegate.gateway.replay import REPLAY_EXTENSION, TARGET_EXTENSION
from probegate.gateway.upstream import UpstreamFailure, classify, upstream_url
from probegate.gateway.via_chat import forward_via_chat
from probegate.store.models import new_id, utcnow
from probegate.store.writer import CaptureWriter

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

DEFAULT_MAX_BODY = 32 * 1024 * 1024


class ClientDisconnected(Exception):
    """The client went away before the exchange finished."""


class RequestTooLarge(Exception):
    """The request body exceeded ``max_body``."""




@dataclass
class ForwardConfig:
    """Settings of the pass-through.

    Attributes:
        upstream: base URL of the model server.
        max_body: largest request body accepted (bytes); larger gets 413.
        timeout_s: longest wait for the upstream's next bytes (s); longer gets 504.
        connect_timeout_s: longest wait to connect (s).
        payload_cap: largest response body stored per exchange (bytes); ``None`` = all.
        mcp_upstreams: the agent's own MCP servers by name (``--mcp-upstream
            NAME=URL``): ``/mcp/{name}`` is forwarded to that URL as is.
        mcp_any_name: forward ``/mcp/{name}`` of names not in ``mcp_upstreams`` too
            (to the transport, as ``http://replay.invalid/mcp/{name}``): a replay
            answers recorded MCP servers that are no longer running.

    What is scrubbed from stored rows is the writer's business
    (:attr:`probegate.store.writer.CaptureWriter.redactor`); forwarded bytes never are.
    """

    upstream: str
    max_body: int = DEFAULT_MAX_BODY
    timeout_s: float = 600.0
    connect_timeout_s: float = 10.0
    payload_cap: int | None = None
    mcp_upstreams: dict[str, str] = field(default_factory=dict)
    mcp_any_name: bool = False


def openai_error(status: int, code: str, message: str) -> bytes:
    """An error body in the OpenAI shape ``{"error": {"message", "type", "code"}}``."""
    kind = "invalid_request_error" if status < 500 else "probegate_error"
    return json.dumps({"error": {"message": message, "type": kind, "code": code}}).encode()


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000.0


@dataclass
class Forwarder:
    """Forwards model requests upstream and hands each exchange to the writer."""

    config: ForwardConfig
    transport: httpx.AsyncBaseTransport
    writer: CaptureWriter
    rewrite: Callable[[Target, bytes, RawHeaders], tuple[bytes, list[dict[str, Any]] | None]] | None = None
    #: ``responses-via-chat`` is on: ``POST .../responses`` goes upstream as chat completions
    #: (:mod:`probegate.gateway.via_chat`)
    responses_via_chat: bool = False
    _seq: defaultdict[tuple[str, str, int], itertools.count[int]] = field(
        default_factory=lambda: defaultdict(itertools.count)
    )
    #: exchanges being forwarded right now (a client may hold its whole answer
    #: a moment before the exchange is handed to the writer)
    inflight: int = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send, target: Target) -> None:
        self.inflight += 1
        try:
            await self._forward(scope, receive, send, target)
        finally:
            self.inflight -= 1

    def recording(self, scope: Scope, target: Target) -> RecordedExchange:
        """A new recording of the request in ``scope`` (the attempt's next ``seq``)."""
        return RecordedExchange(
            id=new_id(),
            run_id=target.run,
            task_id=target.task,
            attempt=target.attempt,
            seq=next(self._seq[(target.run, target.task, target.attempt)]),
            started_at=utcnow(),
            method=scope["method"],
            path=target.rest,
            query=scope.get("query_string", b"").decode("latin-1"),
            request_headers=list(scope.get("headers", [])),
            request_body=b"",
            payload_cap=self.config.payload_cap,
        )

    async def _forward(self, scope: Scope, receive: Receive, send: Send, target: Target) -> None:
        t0 = time.perf_counter()
        rec = self.recording(scope, target)
        try:
            rec.request_body = await self.read_body(receive)
        except RequestTooLarge as exc:
            rec.error = f"request_too_large: {exc}"
            await self.answer_error(send, rec, t0, 413, "request_too_large", str(exc))
            return
        except ClientDisconnected:
            rec.error = "client_disconnected"
            await self.finish(rec, t0)
            return
        if target.kind == "mcp_proxy" and self._mcp_url(target, "") is None:
            known = ", ".join(sorted(self.config.mcp_upstreams)) or "none (probegate serve --mcp-upstream NAME=URL)"
            message = f"no MCP upstream named {target.rest.rsplit('/', 1)[-1]!r}; known: {known}"
            await self.answer_error(send, rec, t0, 404, "unknown_mcp_upstream", message)
            return
        if target.problem is not None:  # an unusable id or path: refused, recorded
            rec.error = target.problem
            code, _, message = target.problem.partition(": ")
            await self.answer_error(send, rec, t0, 400, code, message)
            return
        body = rec.request_body
        headers = request_headers_for_upstream(rec.request_headers)
        if self.responses_via_chat and scope["method"] == "POST" and target.kind == "model" \
                and is_responses_path(target.rest):
            await forward_via_chat(self, send, receive, target, rec, headers, t0)
            return
        if self.rewrite is not None and scope["method"] == "POST" and target.kind == "model":
            new_body, changes = self.rewrite(target, body, headers)
            if changes:
                rec.request_original, rec.compat, body = body, changes, new_body
                rec.request_body = new_body
        pre_ms = _ms(t0)
        try:
            response = await self.send_upstream(scope["method"], target, rec.query, headers, body)
        except UpstreamFailure as exc:
            rec.error = f"{exc.code}: {exc.message}"
            await self.answer_error(send, rec, t0, exc.status, exc.code, exc.message)
            return
        await self.relay(response, receive, send, rec, t0, pre_ms)

    # -- request side -----------------------------------------------------------------
    async def read_body(self, receive: Receive) -> bytes:
        """The whole request body.

        Raises:
            RequestTooLarge: it is larger than ``max_body``.
            ClientDisconnected: the client left first.
        """
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientDisconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.config.max_body:
                raise RequestTooLarge(
                    f"request body is larger than the gateway's limit of {self.config.max_body} "
                    "bytes (--max-body)"
                )
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts)

    async def send_upstream(
        self, method: str, target: Target, query: str, headers: RawHeaders, body: bytes, *, rest: str | None = None
    ) -> httpx.Response:
        """Send the request upstream (to ``rest`` instead of ``target.rest`` when given;
        a replay transport still sees ``target``); returns the unread response.

        Raises:
            UpstreamFailure: the upstream cannot be reached or did not answer in time.
        """
        try:
            url = self._mcp_url(target, query) if target.kind == "mcp_proxy" else None
            url = url or upstream_url(self.config.upstream, rest or target.rest, query)
            request = httpx.Request(method, url, headers=headers, content=body or None)
        except httpx.InvalidURL as exc:  # a query or header httpx will not send
            raise UpstreamFailure(400, "bad_request", f"cannot forward this request: {exc}") from exc
        timeout = httpx.Timeout(self.config.timeout_s, connect=self.config.connect_timeout_s)
        request.extensions["timeout"] = timeout.as_dict()
        request.extensions[TARGET_EXTENSION] = target  # for transports that answer by task (replay)
        try:
            return await self.transport.handle_async_request(request)
        except (httpx.TransportError, OSError, TimeoutError) as exc:
            raise classify(exc, self.config.timeout_s) from exc

    def _mcp_url(self, target: Target, query: str) -> str | None:
        """The URL of the named MCP upstream (``None``: no such name)."""
        name = target.rest.rsplit("/", 1)[-1]
        base = self.config.mcp_upstreams.get(name)
        if base is None and self.config.mcp_any_name:
            base = f"http://replay.invalid/mcp/{name}"
        if base is None:
            return None
        return base + (("&" if "?" in base else "?") + query if query else "")

    # -- response side ------------------------------------------------------------------
    async def relay(
        self,
        response: httpx.Response,
        receive: Receive,
        send: Send,
        rec: RecordedExchange,
        t0: float,
        pre_ms: float,
    ) -> None:
        """Relay the response; ``overhead_ms`` is the gateway's own time before the
        upstream was asked (``pre_ms``) plus its time from the upstream's headers to ours."""
        t_headers = time.perf_counter()
        replayed = response.extensions.get(REPLAY_EXTENSION)
        if replayed is not None:
            rec.compat = [*(rec.compat or []), replayed]
            if replayed.get("miss"):
                rec.error = "replay_miss"
        rec.status_code = response.status_code
        rec.response_headers = list(response.headers.raw)
        out_headers = response_headers_for_client(rec.response_headers)
        rec.overhead_ms = pre_ms + _ms(t_headers)
        await send(
            {
                "type": "http.response.start",
                "status": response.status_code,
                "headers": out_headers + self.own_headers(rec),
            }
        )
        is_stream = stream_format(header(rec.response_headers, b"content-type")) is not None
        if is_stream:
            last = await self._pump_watching(response, receive, send, rec, t0)
        else:
            last = await self._pump(response, send, rec, t0)
        await self.finish(rec, t0)  # journaled (with a spool) before the last byte leaves
        if rec.error is not None and rec.error != "replay_miss":
            # The upstream broke after the response started (or the client left).
            # Returning without the final message makes the server drop the
            # connection, so the client sees the break as it would without us,
            # not a cleanly finished but truncated body.
            return
        await send({"type": "http.response.body", "body": last, "more_body": False})

    def own_headers(self, rec: RecordedExchange) -> RawHeaders:
        """The gateway's own response headers: the exchange id and its overhead (ms)."""
        return [
            (b"x-probegate-exchange-id", rec.id.encode()),
            (b"x-probegate-overhead-ms", f"{rec.overhead_ms:.3f}".encode()),
        ]

    async def _pump(self, response: httpx.Response, send: Send, rec: RecordedExchange, t0: float) -> bytes:
        """Relay the body; returns the piece held back: the one that completes a
        declared ``content-length`` (the client would have its whole answer with it)."""
        length = _content_length(rec.response_headers)
        received = 0
        try:
            async for chunk in response.aiter_raw():
                t = _ms(t0)
                if rec.ttft_ms is None:
                    rec.ttft_ms = t
                rec.pieces.append((t, chunk))
                received += len(chunk)
                if length is not None and received >= length:
                    return chunk
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except (httpx.TransportError, OSError, TimeoutError) as exc:
            failure = classify(exc, self.config.timeout_s)
            rec.error = f"{failure.code} mid-response: {failure.message}"
        finally:
            await response.aclose()
        return b""

    async def _pump_watching(
        self, response: httpx.Response, receive: Receive, send: Send, rec: RecordedExchange, t0: float
    ) -> bytes:
        """Pump a stream while watching for the client going away; on disconnect the
        upstream request is cancelled and the partial exchange kept."""
        relayed = await pump_until_disconnect(self._pump(response, send, rec, t0), receive, response, rec)
        return b"" if relayed is None else relayed

    async def answer_error(
        self, send: Send, rec: RecordedExchange, t0: float, status: int, code: str, message: str
    ) -> None:
        """Answer (and record) an error the gateway itself gives, in the OpenAI shape."""
        await self.answer_body(send, rec, t0, status, openai_error(status, code, message))

    async def answer_body(self, send: Send, rec: RecordedExchange, t0: float, status: int, body: bytes) -> None:
        """Answer (and record) a JSON body the gateway itself gives."""
        rec.status_code = status
        rec.response_headers = [(b"content-type", b"application/json")]
        rec.overhead_ms = _ms(t0)
        rec.pieces.append((_ms(t0), body))
        await self.finish(rec, t0)
        headers = rec.response_headers + [(b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers + self.own_headers(rec)})
        await send({"type": "http.response.body", "body": body, "more_body": False})

    async def finish(self, rec: RecordedExchange, t0: float) -> None:
        """Close the recording (latency in ms since ``t0``) and hand it to the writer."""
        rec.latency_ms = _ms(t0)
        rec.ended_at = utcnow()
        await self.writer.submit(rec)


def _content_length(headers: RawHeaders) -> int | None:
    value = header(headers, b"content-length")
    if value is None or not value.strip().isdigit():
        return None
    return int(value)
