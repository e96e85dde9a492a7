"""The store benchmark's captures are what the gateway records, and every one is written."""

from __future__ import annotations

import pytest

from bench import store
from bench.stores import pg_unavailable, temp_store


@pytest.mark.parametrize(("shape", "events"), [("plain", None), ("stream", 201)])
def test_recordings_build_rows_like_the_gateway(shape: str, events: int | None) -> None:
    (row,) = store.recording(shape, 7).to_rows()
    assert row.seq == 7 and row.status_code == 200 and row.error is None
    assert row.stream is (shape == "stream")
    assert (len(row.sse_events) if row.sse_events is not None else None) == events
    assert row.completion["assistant"]["content"].startswith("probegate measures" if shape == "plain" else "tok0 tok1")
    assert "sk-bench" not in row.request_headers["authorization"]
    assert 900 < len(store.REQUEST) < 1400


def test_measure_writes_every_capture_on_sqlite() -> None:
    with temp_store("sqlite") as url:
        result = store.measure(url, "sqlite", "stream", 12)
    assert (result.captures, result.written, result.spilled, result.writer_errors) == (12, 12, 0, 0)
    assert result.per_second > 0


@pytest.mark.postgres
def test_measure_writes_every_capture_on_postgres() -> None:
    reason = pg_unavailable(store.PG_DEFAULT)
    assert reason is None, reason
    with temp_store("postgres") as url:
        result = store.measure(url, "postgres", "plain", 20)
    assert (result.written, result.spilled) == (20, 0)
