"""The background writer: batches, back-pressure, drain on close, nothing lost."""

from __future__ import annotations

import asyncio
import json
import threading

from sqlalchemy import func, text
from sqlmodel import Session, SQLModel, select

from probegate.store import CaptureWriter, Exchange, ProbeCall, Upsert, WorldState, open_store


def _count(engine, model) -> int:
    with Session(engine) as session:
        return session.exec(select(func.count()).select_from(model)).one()


def test_batches_and_drains_on_close(engine) -> None:
    writer = CaptureWriter(engine, batch=50).start()
    for i in range(500):
        writer.submit_blocking(Exchange(run_id="r", task_id="t", seq=i))
    writer.close()
    assert _count(engine, Exchange) == 500
    assert writer.stats.written == 500 and writer.stats.batches <= 500 and writer.stats.errors == 0


def test_back_pressure_never_drops(engine) -> None:
    writer = CaptureWriter(engine, maxsize=2, batch=1)

    async def produce() -> None:
        for i in range(60):
            await writer.submit(ProbeCall(run_id="r", task_id="t", seq=i, tool="x"))

    # the writer starts only after the queue is full: producers must wait, not drop
    starter = threading.Timer(0.2, writer.start)
    starter.start()
    asyncio.run(produce())
    writer.close()
    assert _count(engine, ProbeCall) == 60
    assert writer.stats.queued == 60


def test_upsert_replaces_world_state(engine) -> None:
    writer = CaptureWriter(engine).start()
    for n in range(3):
        writer.submit_blocking(Upsert(WorldState(run_id="r", task_id="t", attempt=0, state={"n": n})))
    writer.close()
    with Session(engine) as session:
        rows = session.exec(select(WorldState)).all()
    assert [r.state for r in rows] == [{"n": 2}]


class _Broken:
    def to_rows(self):
        raise ValueError("bug in row building")

    def fallback_rows(self, exc):
        return [Exchange(run_id="r", task_id="fallback", error=f"capture_build_failed: {exc!r}")]


def test_row_building_bug_keeps_a_fallback_row(engine) -> None:
    writer = CaptureWriter(engine).start()
    writer.submit_blocking(_Broken())
    writer.close()
    with Session(engine) as session:
        row = session.exec(select(Exchange)).one()
    assert row.task_id == "fallback" and "bug in row building" in row.error
    assert writer.stats.errors == 1


def test_refused_rows_are_spilled_not_lost(tmp_path) -> None:
    engine = open_store(f"sqlite:///{tmp_path / 's.db'}")
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE probecall"))
    spool = tmp_path / "spool"
    writer = CaptureWriter(engine, spool=spool).start()
    writer.submit_blocking(ProbeCall(run_id="r", task_id="t", tool="send_email", raw_args='{"to": "a@b.c"}'))
    writer.close()
    assert writer.stats.spilled == 1 and writer.stats.errors >= 1
    (kept,) = spool.glob("*.refused.spool")
    record = json.loads(kept.read_text().splitlines()[0])
    assert record["rows"][0]["table"] == "probecall" and record["rows"][0]["values"]["tool"] == "send_email"
    # once the store takes it again, the next writer on that spool stores it
    SQLModel.metadata.create_all(engine, tables=[ProbeCall.__table__])
    again = CaptureWriter(engine, spool=spool).start()
    again.close()
    assert again.stats.replayed == 1 and _count(engine, ProbeCall) == 1
    assert not list(spool.glob("*.spool"))


def test_nul_characters_are_stored_on_both_stores(engine) -> None:
    writer = CaptureWriter(engine).start()
    writer.submit_blocking(ProbeCall(run_id="r", task_id="t", tool="x", raw_args="a\x00b",
                                     args={"k\x00": ["v\x00"]}, result={"error": "bad \x00"}))
    writer.submit_blocking(Upsert(WorldState(run_id="r", task_id="t", state={"s": "\x00"})))
    writer.submit_blocking(Exchange(run_id="r", task_id="t", request_raw=b"\x00raw", error="e\x00"))
    writer.close()
    assert writer.stats.spilled == 0 and writer.stats.errors == 0
    with Session(engine) as session:
        call = session.exec(select(ProbeCall)).one()
        exchange = session.exec(select(Exchange)).one()
    assert call.raw_args in ("a\x00b", "a\ufffdb")
    assert exchange.request_raw == b"\x00raw"


KEY = "sk-proj-SECRETabcdefghijklmnop"


def test_rows_are_scrubbed_before_they_are_queued(engine) -> None:
    """A plain row or an upsert is scrubbed in ``submit*``, so nothing queued (or spooled,
    or spilled) holds a secret; a capture's rows are scrubbed where they are built."""
    from probegate.gateway.capture import RecordedExchange
    from probegate.redact import MARK, make_redactor
    from probegate.store import new_id, utcnow

    writer = CaptureWriter(engine, redactor=make_redactor(pii=True))  # not started: items stay queued
    writer.submit_blocking(ProbeCall(run_id="r", task_id="t", tool="send_email", raw_args=f'{{"to": "a@b.example", "k": "{KEY}"}}'))
    writer.submit_nowait(Upsert(WorldState(run_id="r", task_id="t", state={"outbox": [{"to": "a@b.example", "body": KEY}]})))
    queued = list(writer._queue.queue)
    assert len(queued) == 2
    dumped = json.dumps([queued[0].model_dump(mode="json"), queued[1].row.model_dump(mode="json")])
    assert "SECRET" not in dumped and "b.example" not in dumped and MARK in dumped

    capture = RecordedExchange(id=new_id(), run_id="r", task_id="t", attempt=0, seq=0, started_at=utcnow(), method="POST",
                               path="/v1/chat/completions", query=f"key={KEY}",
                               request_headers=[(b"x-goog-api-key", b"goog-SECRET")], request_body=b'{"a": "x@y.example"}')
    (row,) = writer.rows_of(capture)
    assert "SECRET" not in json.dumps(row.model_dump(mode="json")) and row.request_body == {"a": MARK}
    writer.start()
    writer.close()
    assert _count(engine, ProbeCall) == 1 and _count(engine, WorldState) == 1
