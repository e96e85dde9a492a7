"""The ``responses-via-chat`` rule on the wire: a Responses request forwarded as chat
completions, the answer translated back as it arrives.

The translations are pure (:mod:`probegate.gateway.compat.responses_via_chat`); this
module only wires them into the forwarder. What the exchange stores:

- ``path``: the route the client called (``/v1/responses``), so the row reassembles in
  the Responses dialect;
- ``request_original``: the client's Responses request; ``request_body``: the chat
  request sent upstream (after the other ``--compat`` rules), as for every shim;
- ``response_raw`` / ``sse_events`` / ``chunks``: the bytes the client received (the
  Responses answer), piece by piece;
- ``compat``: the translation's changes (route, dropped fields, ``stream_options``) and
  one ``{"rule": "responses-via-chat", "path": "(answer)", "upstream": {...}}`` entry with
  what the upstream sent: its path, status, content type, its body (a stream reassembled
  into one ``chat.completion``) and the wire flags of its turn.

An upstream answer that is not a 2xx chat completion (a 4xx/5xx error, a replay miss) is
relayed as it came. A replay of a translated exchange answers with the recorded
Responses bytes, relayed as they are.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import httpx

from probegate.gateway.capture import RecordedExchange, stream_format
from probegate.gateway.compat import responses_via_chat as rvc
from probegate.gateway.disconnect import pump_until_disconnect
from probegate.gateway.headers import response_headers_for_client
from probegate.gateway.replay import REPLAY_EXTENSION
from probegate.gateway.upstream import UpstreamFailure, classify
from probegate.urls import Target
from probegate.wire.sse import SSEParser

if TYPE_CHECKING:
    from probegate.gateway.forward import Forwarder, Receive, Send

#: Response headers that stop being true once the body is translated.
_BODY_HEADERS = {b"content-length", b"content-encoding", b"content-type"}


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000.0


def _client_headers(upstream: list[tuple[bytes, bytes]], content_type: bytes) -> list[tuple[bytes, bytes]]:
    kept = [(n, v) for n, v in upstream if n.lower() not in _BODY_HEADERS]
    return [*kept, (b"content-type", content_type)]


async def forward_via_chat(fwd: Forwarder, send: Send, receive: Receive, target: Target, rec: RecordedExchange,
                           headers: list[tuple[bytes, bytes]], t0: float) -> None:
    """Forward one ``POST .../responses`` as chat completions and answer in Responses form."""
    try:
        request = json.loads(rec.request_body)
    except ValueError:
        request = None
    if not isinstance(request, dict):
        await _refuse(fwd, send, rec, t0, rvc.Refused("(body)", "the request body is not a JSON object"))
        return
    try:
        chat, changes = rvc.to_chat(request)
    except rvc.Refused as refused:
        await _refuse(fwd, send, rec, t0, refused)
        return
    body = json.dumps(chat, ensure_ascii=False, separators=(",", ":")).encode()
    route = {"rule": rvc.NAME, "path": "(route)", "from": target.rest, "to": rvc.chat_path(target.rest)}
    more: list[dict[str, Any]] = []
    if fwd.rewrite is not None:
        body, found = fwd.rewrite(target, body, headers)
        more = list(found or [])
    rec.request_original, rec.request_body, rec.compat = rec.request_body, body, [route, *changes, *more]
    # the answer is translated, so it is asked for unencoded
    headers = [(n, v) for n, v in headers if n.lower() != b"accept-encoding"]
    pre_ms = _ms(t0)
    try:
        response = await fwd.send_upstream("POST", target, rec.query, headers, body, rest=route["to"])
    except UpstreamFailure as exc:
        rec.error = f"{exc.code}: {exc.message}"
        await fwd.answer_error(send, rec, t0, exc.status, exc.code, exc.message)
        return
    replayed = response.extensions.get(REPLAY_EXTENSION) or {}
    kind = stream_format(response.headers.get("content-type"))
    if replayed.get("translated") or response.status_code >= 300 or kind not in ("sse", None):
        what = rvc.REPLAYED if replayed.get("translated") else "relayed as it came"
        rec.compat.append(_upstream_note(route["to"], response, what))
        await fwd.relay(response, receive, send, rec, t0, pre_ms)
        return
    base = rec.id
    rec.upstream = {"rule": rvc.NAME, "path": route["to"], "status": response.status_code,
                    "content_type": response.headers.get("content-type"), "pieces": []}
    if kind == "sse":
        await _stream(fwd, response, receive, send, rec, t0, pre_ms, rvc.EventStream(request, base))
    else:
        await _whole(fwd, response, send, rec, t0, pre_ms, request, base)


def _upstream_note(path: str, response: httpx.Response, what: str) -> dict[str, Any]:
    return {"rule": rvc.NAME, "path": "(answer)", "from": response.status_code, "to": what,
            "upstream": {"path": path, "status": response.status_code,
                         "content_type": response.headers.get("content-type")}}


async def _refuse(fwd: Forwarder, send: Send, rec: RecordedExchange, t0: float, refused: rvc.Refused) -> None:
    rec.compat = [{"rule": rvc.NAME, "path": refused.param, "from": None, "to": "refused"}]
    rec.error = f"responses_via_chat_refused: {refused}"
    body = rvc.error_body(f"responses-via-chat: {refused.message}", code="unsupported_by_responses_via_chat",
                          param=refused.param)
    await fwd.answer_body(send, rec, t0, 400, body)


async def _whole(fwd: Forwarder, response: httpx.Response, send: Send, rec: RecordedExchange, t0: float,
                 pre_ms: float, request: dict[str, Any], base: str) -> None:
    raw = b""
    try:
        async for chunk in response.aiter_bytes():
            if rec.ttft_ms is None:
                rec.ttft_ms = _ms(t0)
            raw += chunk
    except (httpx.TransportError, OSError, TimeoutError) as exc:
        failure = classify(exc, fwd.config.timeout_s)
        rec.error = f"{failure.code}: {failure.message}"
        await fwd.answer_error(send, rec, t0, failure.status, failure.code, failure.message)
        return
    finally:
        await response.aclose()
    assert rec.upstream is not None
    rec.upstream["pieces"] = [raw]
    streamed = bool(request.get("stream"))  # asked for a stream, answered in one body: still a stream
    try:
        chat = json.loads(raw)
        chat = chat if isinstance(chat, dict) else {}
        if streamed:
            body = b"".join(rvc.encode_event(e) for e in rvc.events_from_chat(chat, request, base=base))
        else:
            body = json.dumps(rvc.response_from_chat(chat, request, base=base), ensure_ascii=False,
                              separators=(",", ":")).encode()
    except ValueError as exc:
        message = f"responses-via-chat: the upstream's answer is not a chat completion ({exc})"
        rec.error = f"upstream_not_chat: {message}"
        await fwd.answer_error(send, rec, t0, 502, "upstream_not_chat", message)
        return
    rec.status_code = response.status_code
    content_type = b"text/event-stream" if streamed else b"application/json"
    rec.response_headers = _client_headers(list(response.headers.raw), content_type)
    rec.overhead_ms = pre_ms
    out = response_headers_for_client(rec.response_headers) + [(b"content-length", str(len(body)).encode())]
    rec.response_headers = out
    await send({"type": "http.response.start", "status": response.status_code, "headers": out + fwd.own_headers(rec)})
    rec.pieces.append((_ms(t0), body))
    await fwd.finish(rec, t0)  # journaled before the last byte leaves, as for every exchange
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _stream(fwd: Forwarder, response: httpx.Response, receive: Receive, send: Send, rec: RecordedExchange,
                  t0: float, pre_ms: float, machine: rvc.EventStream) -> None:
    rec.status_code = response.status_code
    out = response_headers_for_client(_client_headers(list(response.headers.raw), b"text/event-stream"))
    rec.response_headers = out
    rec.overhead_ms = pre_ms
    await send({"type": "http.response.start", "status": response.status_code, "headers": out + fwd.own_headers(rec)})
    last = await pump_until_disconnect(_pump_events(fwd, response, send, rec, t0, machine), receive, response, rec)
    await fwd.finish(rec, t0)
    if rec.error is not None or last is None:
        return  # drop the connection: the client sees the break as it would without us
    await send({"type": "http.response.body", "body": last, "more_body": False})


async def _pump_events(fwd: Forwarder, response: httpx.Response, send: Send, rec: RecordedExchange, t0: float,
                       machine: rvc.EventStream) -> bytes | None:
    """Translate the upstream stream chunk by chunk; returns the last piece, held back
    until the exchange is journaled (``None`` when the upstream broke)."""
    parser = SSEParser()
    assert rec.upstream is not None
    upstream_pieces: list[bytes] = rec.upstream["pieces"]

    async def emit(events: list[dict[str, Any]]) -> None:
        if not events:
            return
        data = b"".join(rvc.encode_event(e) for e in events)
        t = _ms(t0)
        if rec.ttft_ms is None:
            rec.ttft_ms = t
        rec.pieces.append((t, data))
        await send({"type": "http.response.body", "body": data, "more_body": True})

    await emit(machine.start())
    try:
        async for chunk in response.aiter_bytes():
            upstream_pieces.append(chunk)
            for event in parser.feed(chunk):
                await emit(_translate(event.data, machine))
        for event in parser.close():
            await emit(_translate(event.data, machine))
    except (httpx.TransportError, OSError, TimeoutError) as exc:
        failure = classify(exc, fwd.config.timeout_s)
        rec.error = f"{failure.code} mid-response: {failure.message}"
        return None
    finally:
        await response.aclose()
    last = b"".join(rvc.encode_event(e) for e in machine.finish())
    rec.pieces.append((_ms(t0), last))
    return last


def _translate(data: str, machine: rvc.EventStream) -> list[dict[str, Any]]:
    """The events one upstream SSE data line makes (``[DONE]`` and non-JSON lines make none:
    the upstream record keeps them)."""
    if not data.strip() or data.strip() == "[DONE]":
        return []
    try:
        chunk = json.loads(data)
    except ValueError:
        return []
    return machine.feed(chunk) if isinstance(chunk, dict) else []
