"""Store upkeep: prune by age or by run, everything under the run goes."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta

from sqlalchemy import func
from sqlmodel import Session, select

from probegate.store import CaptureWriter, Exchange, ProbeCall, Run, WorldState, utcnow
from probegate.store.prune import prune_runs, runs_older_than


def _fill(engine) -> None:
    old = utcnow() - timedelta(days=40)
    writer = CaptureWriter(engine).start()
    writer.submit_blocking(Run(id="old", created_at=old))
    writer.submit_blocking(Run(id="new"))
    for run, at in (("old", old), ("new", utcnow()), ("adhoc", old), ("adhoc-new", utcnow())):
        writer.submit_blocking(Exchange(run_id=run, task_id="t", started_at=at))
        writer.submit_blocking(ProbeCall(run_id=run, task_id="t", tool="x", at=at))
    writer.submit_blocking(WorldState(run_id="old", task_id="t", state={}))
    writer.close()


def _runs(engine) -> set[str]:
    with Session(engine) as session:
        return set(session.exec(select(Exchange.run_id)).all()) | set(session.exec(select(Run.id)).all())


def test_older_than_includes_runless_traffic(engine) -> None:
    _fill(engine)
    assert runs_older_than(engine, 30) == ["adhoc", "old"]
    counts = prune_runs(engine, ["adhoc", "old"])
    assert counts == {"exchange": 2, "probecall": 2, "worldstate": 1, "run": 1}
    assert _runs(engine) == {"new", "adhoc-new"}


def test_prune_cli(sqlite_url: str) -> None:
    from probegate.store import open_store

    engine = open_store(sqlite_url)
    _fill(engine)
    base = [sys.executable, "-m", "probegate", "store", "prune", "--store", sqlite_url]
    both = subprocess.run([*base, "--older-than", "1", "--run", "x"], capture_output=True, text=True)
    assert both.returncode == 2 and "exactly one of" in both.stderr
    done = subprocess.run([*base, "--run", "new", "--yes"], capture_output=True, text=True)
    assert done.returncode == 0 and "1 run" in done.stdout
    with Session(engine) as session:
        assert session.exec(select(func.count()).select_from(Exchange).where(Exchange.run_id == "new")).one() == 0
    assert "old" in _runs(engine)
