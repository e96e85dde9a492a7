"""What the hot path records, and how it becomes an ``Exchange`` row off the hot path.

The pass-through only appends ``(offset ms, bytes)`` pieces to a
:class:`RecordedExchange`; decoding, SSE parsing and reassembly run in the writer
thread when :meth:`RecordedExchange.to_rows` is called, and so does redaction
(:func:`probegate.store.redaction.redact_row`, with the writer's redactor): the
queue holds the raw recording, the rows that leave it are scrubbed. With a capture
spool, ``to_rows`` runs in the writer's ``submit`` just before the answer's last byte
leaves, so it has to be cheap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from probegate.gateway.headers import RawHeaders, header, to_stored
from probegate.redact import SECRETS, Redactor
from probegate.store.models import Exchange
from probegate.store.redaction import redact_row, redact_values
from probegate.wire.decode import decode_body
from probegate.wire.reassemble import reassemble
from probegate.wire.sse import parse_stream


def stream_format(content_type: str | None) -> str | None:
    """``sse`` / ``ndjson`` for streaming content types, else ``None``."""
    ct = (content_type or "").lower()
    if "text/event-stream" in ct:
        return "sse"
    if "ndjson" in ct or "jsonl" in ct or "x-json-stream" in ct:
        return "ndjson"
    return None


def _parse_json(data: bytes) -> tuple[bool, Any]:
    if not data.strip():
        return False, None
    try:
        return True, json.loads(data)
    except ValueError:
        return False, None


@dataclass
class RecordedExchange:
    """One exchange as the pass-through saw it (raw, cheap to build).

    Offsets (``t_ms`` of pieces, ``ttft_ms``, ``latency_ms``) are ms since the request
    arrived at the gateway.
    """

    id: str
    run_id: str
    task_id: str
    attempt: int
    seq: int
    started_at: datetime
    method: str
    path: str
    query: str
    request_headers: RawHeaders
    request_body: bytes
    status_code: int | None = None
    response_headers: RawHeaders = field(default_factory=list)
    pieces: list[tuple[float, bytes]] = field(default_factory=list)
    ended_at: datetime | None = None
    ttft_ms: float | None = None
    latency_ms: float | None = None
    overhead_ms: float | None = None
    error: str | None = None
    payload_cap: int | None = None
    compat: list[dict[str, Any]] | None = None
    request_original: bytes | None = None
    #: what a translating rule (``responses-via-chat``) got from the upstream:
    #: ``{"rule", "path", "status", "content_type", "pieces": [bytes, ...]}``; recorded as
    #: one more ``compat`` entry (:meth:`upstream_change`), the pieces reassembled
    upstream: dict[str, Any] | None = None
    #: set by the writer to its own (:meth:`probegate.store.writer.CaptureWriter.rows_of`)
    redactor: Redactor = SECRETS

    def _request_fields(self) -> dict[str, Any]:
        ok, body = _parse_json(self.request_body)
        out: dict[str, Any] = {"request_body": body if ok else None}
        if not ok and self.request_body:
            out["request_raw"] = self.request_body
        if self.request_original is not None:
            _, original = _parse_json(self.request_original)
            out["request_original"] = original
        return out

    def to_rows(self) -> list[Exchange]:
        """Build the ``Exchange`` row: decode, parse the stream, reassemble the turn."""
        fields = self._request_fields()
        request = fields["request_body"]
        raw = b"".join(piece for _, piece in self.pieces)
        fmt = stream_format(header(self.response_headers, b"content-type"))
        decoded, decode_error = decode_body(raw, header(self.response_headers, b"content-encoding"))
        errors = [e for e in (self.error, decode_error) if e]
        sse_events = None
        if fmt is not None:
            pieces = self.pieces if decoded is raw else [(self.latency_ms or 0.0, decoded)]
            events, _ = parse_stream(pieces, fmt)
            sse_events = [e.to_json() for e in events]
            result = reassemble(path=self.path, request=request, events=events)
            response_body = result.response_body
        else:
            result = reassemble(path=self.path, request=request, body=decoded)
            ok, response_body = _parse_json(decoded)
            response_body = response_body if ok else None
        if result.error:
            errors.append(result.error)
        completion = result.completion
        usage = (completion or {}).get("usage") or {}
        flags = list((completion or {}).get("flags") or [])
        r = self.redactor
        if r and decoded is not raw and r.raw(decoded) != decoded:
            raw = decoded  # a secret inside a compressed body: keep a decoded, redacted copy
            flags.append("raw_decoded_for_redaction")
        model = request.get("model") if isinstance(request, dict) else None
        if model is None and isinstance(response_body, dict):
            model = response_body.get("model")
        values = redact_values({  # before the payload cap can cut a secret in two
            **self._identity(),
            "ttft_ms": self.ttft_ms,
            "overhead_ms": self.overhead_ms,
            "response_body": response_body,
            "response_raw": raw,
            "stream": fmt is not None,
            "stream_format": fmt,
            "sse_events": sse_events,
            "chunks": [[round(t, 3), len(p)] for t, p in self.pieces],
            "completion": completion,
            "flags": sorted(set(flags)),
            "error": "; ".join(errors) or None,
            "model": model if isinstance(model, str) else None,
            "prompt_tokens": usage.get("prompt_tokens"),
            "completion_tokens": usage.get("completion_tokens"),
            "compat": self.compat if self.upstream is None else [*(self.compat or []), self.upstream_change(request)],
            **fields,
        }, r)
        stored = values["response_raw"]
        if self.payload_cap is not None and len(stored) > self.payload_cap:
            values["response_raw"], values["truncated"] = stored[: self.payload_cap], True
            values["flags"] = sorted({*values["flags"], "payload_truncated"})
        # model_construct: the fields are ours and already typed; SQLModel's validating
        # constructor costs ~10x more, and with a spool this runs before the answer's last byte
        return [Exchange.model_construct(**values)]

    def upstream_change(self, request: Any) -> dict[str, Any]:
        """The compat entry for what the upstream of a translated exchange sent:
        ``{"rule", "path": "(answer)", "from", "to", "upstream": {"path", "status",
        "content_type", "bytes", "body", "flags"}}``; ``body`` is the upstream's JSON answer, a
        stream reassembled into one ``chat.completion`` (its raw chunks are not kept), and
        ``flags`` the wire anomalies of its turn."""
        up = self.upstream or {}
        raw = b"".join(up.get("pieces") or [])
        path = str(up.get("path") or "")
        fmt = stream_format(up.get("content_type"))
        if fmt is not None:
            events, _ = parse_stream([(None, raw)], fmt)
            result = reassemble(path=path, request=request, events=events)
            body: Any = result.response_body
        else:
            result = reassemble(path=path, request=request, body=raw)
            ok, body = _parse_json(raw)
            body = body if ok else raw.decode("utf-8", "replace")
        flags = (result.completion or {}).get("flags")
        return {"rule": up.get("rule"), "path": "(answer)", "from": f"{path} {'stream' if fmt else 'body'}",
                "to": "responses events" if fmt else "response",
                "upstream": {"path": path, "status": up.get("status"), "content_type": up.get("content_type"),
                             "bytes": len(raw), "body": body, "flags": flags}}

    def _identity(self) -> dict[str, Any]:
        """The fields every row of this exchange has, whatever else could be derived."""
        return {
            "id": self.id,
            "run_id": self.run_id,
            "task_id": self.task_id,
            "attempt": self.attempt,
            "seq": self.seq,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "latency_ms": self.latency_ms,
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "request_headers": to_stored(self.request_headers),
            "status_code": self.status_code,
            "response_headers": to_stored(self.response_headers),
        }

    def fallback_rows(self, exc: BaseException) -> list[Exchange]:
        """A minimal row with the raw bytes (scrubbed) when building the full row failed."""
        row = Exchange(
            **self._identity(),
            request_raw=self.request_body,
            response_raw=b"".join(p for _, p in self.pieces),
            error=f"capture_build_failed: {exc!r}" + (f"; {self.error}" if self.error else ""),
        )
        return [redact_row(row, self.redactor)]
