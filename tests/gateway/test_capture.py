"""Building Exchange rows from what the pass-through recorded (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from probegate.gateway.capture import RecordedExchange, stream_format


def _recorded(**kw) -> RecordedExchange:
    base = dict(id="X1", run_id="r", task_id="t", attempt=2, seq=5, started_at=datetime(2025, 1, 1, tzinfo=UTC),
                method="POST", path="/v1/chat/completions", query="a=1",
                request_headers=[(b"authorization", b"Bearer sk-secret-value-123456")], request_body=b'{"model": "m"}',
                status_code=200, response_headers=[(b"content-type", b"application/json")],
                pieces=[(1.0, b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]}')],
                latency_ms=3.0)
    base.update(kw)
    return RecordedExchange(**base)


def test_full_and_fallback_rows_share_identity() -> None:
    recorded = _recorded()
    [full] = recorded.to_rows()
    [fallback] = recorded.fallback_rows(ValueError("boom"))
    for name in ("id", "run_id", "task_id", "attempt", "seq", "path", "query", "status_code", "latency_ms",
                 "request_headers", "response_headers"):
        assert getattr(full, name) == getattr(fallback, name), name
    assert full.completion["assistant"]["content"] == "hi" and full.model == "m"
    assert fallback.error == "capture_build_failed: ValueError('boom')"
    assert fallback.request_raw == b'{"model": "m"}' and fallback.response_raw == recorded.pieces[0][1]
    assert full.request_headers["authorization"] == "Bearer [redacted]"


def test_payload_cap_truncates_and_flags() -> None:
    [row] = _recorded(payload_cap=10).to_rows()
    assert row.truncated and len(row.response_raw) == 10 and "payload_truncated" in row.flags
    assert row.completion["assistant"]["content"] == "hi"  # reassembled from the whole body


@pytest.mark.parametrize(
    ("content_type", "fmt"),
    [("text/event-stream; charset=utf-8", "sse"), ("application/x-ndjson", "ndjson"), ("application/json", None),
     (None, None)],
)
def test_stream_format(content_type, fmt) -> None:
    assert stream_format(content_type) == fmt
