"""The capture spool: lines round-trip, segments go once committed, a dead writer's
lines are replayed once (rows already stored are skipped), a live writer's never are."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from datetime import UTC, datetime

import pytest
from sqlalchemy import func
from sqlmodel import Session, select

from probegate.store import CaptureWriter, Exchange, ProbeCall, WorldState
from probegate.store.spool import Spool, decode, default_spool_dir, encode

AT = datetime(2026, 12, 1, 11, 0, 0, 123456, tzinfo=UTC)


def _count(engine, model) -> int:
    with Session(engine) as session:
        return session.exec(select(func.count()).select_from(model)).one()


@pytest.mark.parametrize(
    "row, upsert",
    [
        (Exchange(id="01A", run_id="r", task_id="t", started_at=AT, request_raw=b"\x00\xff raw",
                  response_raw=b"", completion={"assistant": {"content": "ok"}}, flags=["x"]), False),
        (Exchange(id="01B", run_id="r", task_id="t", started_at=AT, request_body={"s": "lone \ud800 surrogate"},
                  error="nul \x00 inside"), False),
        (ProbeCall(id="01C", run_id="r", task_id="t", at=AT, tool="send_email", args={"to": "a@b.c"}), False),
        (WorldState(run_id="r", task_id="t", attempt=2, updated_at=AT, state={"n": [1, 2.5, None]}), True),
    ],
    ids=["bytes-and-datetime", "surrogate-and-nul", "probe-call", "world-state-upsert"],
)
def test_a_line_round_trips(row, upsert) -> None:
    line = encode([(row, upsert)])
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    ((back, back_upsert),) = decode(line)
    assert type(back) is type(row) and back_upsert is upsert
    assert back.model_dump() == row.model_dump()


@pytest.mark.parametrize("line", [b'{"v": 1, "rows": [{"table": "exch', b"", b'{"v": 99, "rows": []}', b"[]"],
                         ids=["torn", "empty", "newer-version", "not-a-record"])
def test_an_unreadable_line_is_refused(line) -> None:
    with pytest.raises(ValueError):
        decode(line)


@pytest.mark.parametrize(
    "url, expected",
    [
        ("sqlite:///runs/x.db", "runs/x.db-spool"),
        ("sqlite:////abs/probegate.db", "/abs/probegate.db-spool"),
        ("sqlite:///:memory:", None),
        ("sqlite://", None),
    ],
)
def test_default_spool_dir_of_sqlite_stores(url, expected) -> None:
    found = default_spool_dir(url)
    assert (str(found) if found else None) == expected


def test_default_spool_dir_of_server_stores_is_per_store(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    a = default_spool_dir("postgresql+psycopg://h/a")
    b = default_spool_dir("postgresql+psycopg://h/b")
    assert a != b and a.parent == tmp_path / "probegate" / "spool"


def test_committed_segments_are_deleted(engine, tmp_path) -> None:
    spool = Spool(tmp_path / "spool", segment_bytes=2000)  # rotates every few lines
    writer = CaptureWriter(engine, spool=spool, batch=7).start()
    for i in range(200):
        writer.submit_blocking(Exchange(run_id="r", task_id="t", seq=i, response_raw=b"x" * 100))
    writer.flush()
    live = [p for p in spool.directory.glob("*.spool")]
    assert len(live) == 1 and live[0].stat().st_size == 0, "only the current segment, empty"
    writer.close()
    assert not list(spool.directory.glob("*.spool")) and _count(engine, Exchange) == 200


def test_the_fsync_timer_runs(tmp_path) -> None:
    spool = Spool(tmp_path / "spool", fsync_s=0.05).open()
    spool.append(b'{"v": 1, "rows": []}\n')
    deadline = time.monotonic() + 30
    while spool.syncs == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    spool.close()
    assert spool.syncs >= 1


CRASH = """
import os, signal, sys
from probegate.store import CaptureWriter, Exchange, ProbeCall, Upsert, WorldState, open_store
engine = open_store(sys.argv[1])
writer = CaptureWriter(engine, spool=sys.argv[2]).start()
for i in range(5):  # committed before the crash, and still journaled: replayed and skipped
    writer.submit_blocking(Exchange(id=f"01COMMITTED{i:015d}", run_id="r", task_id="t", seq=i))
writer.flush()
writer.spool.done = lambda *a: None  # leave them in the spool, as a kill before the upkeep would
for i in range(5):
    writer.submit_blocking(Exchange(id=f"01COMMITTED{i:015d}", run_id="r", task_id="t", seq=i))
writer.flush()
writer._queue.put(None)  # the writer thread now dies on this; nothing after is committed
for i in range(20):
    writer.submit_blocking(Exchange(run_id="r", task_id="t", seq=100 + i))
writer.submit_blocking(ProbeCall(run_id="r", task_id="t", tool="send_email"))
writer.submit_blocking(Upsert(WorldState(run_id="r", task_id="t", state={"n": 1})))
writer.submit_blocking(Upsert(WorldState(run_id="r", task_id="t", state={"n": 2})))
print("journaled", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_writers_spool_is_replayed_once(store_url, engine, tmp_path) -> None:
    spool = tmp_path / "spool"
    child = subprocess.run([sys.executable, "-c", CRASH, store_url, str(spool)], capture_output=True, timeout=120)
    assert child.returncode == -signal.SIGKILL and b"journaled" in child.stdout, child.stderr.decode()[-2000:]
    assert _count(engine, Exchange) == 5 and _count(engine, ProbeCall) == 0
    writer = CaptureWriter(engine, spool=spool).start()
    writer.close()
    assert writer.stats.spilled == 0 and writer.stats.errors == 0, writer.stats
    assert _count(engine, Exchange) == 25 and _count(engine, ProbeCall) == 1
    with Session(engine) as session:
        assert [w.state for w in session.exec(select(WorldState)).all()] == [{"n": 2}]
    assert not list(spool.glob("*.spool"))
    again = CaptureWriter(engine, spool=spool).start()  # nothing left to replay
    again.close()
    assert again.stats.replayed == 0 and _count(engine, Exchange) == 25


def test_a_live_writers_segments_are_not_replayed(engine, tmp_path) -> None:
    spool = tmp_path / "spool"
    live = CaptureWriter(engine, spool=spool)
    live.spool.open()  # journaling, its thread not started: nothing is committed yet
    live.submit_blocking(Exchange(run_id="r", task_id="t"))
    other = CaptureWriter(engine, spool=spool).start()
    other.close()
    assert other.stats.replayed == 0 and _count(engine, Exchange) == 0
    live.start()
    live.close()
    assert _count(engine, Exchange) == 1 and not list(spool.glob("*.spool"))
