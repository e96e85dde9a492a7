"""Store upkeep: removing old runs and everything recorded under them."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from probegate.store.models import Exchange, ProbeCall, Run, WorldState, utcnow

_TABLES = (Exchange, ProbeCall, WorldState)


def runs_older_than(engine: Engine, days: float) -> list[str]:
    """Ids of runs created more than ``days`` ago, plus run ids that have no ``Run`` row
    (ad-hoc traffic) whose newest exchange is that old."""
    cutoff = utcnow() - timedelta(days=days)
    with Session(engine) as session:
        old = set(session.execute(select(Run.id).where(Run.created_at < cutoff)).scalars())
        known = set(session.execute(select(Run.id)).scalars())
        rows = session.execute(select(Exchange.run_id, Exchange.started_at)).all()
    newest: dict[str, object] = {}
    for run_id, started in rows:
        if run_id not in known and (run_id not in newest or started > newest[run_id]):  # type: ignore[operator]
            newest[run_id] = started
    old.update(run_id for run_id, started in newest.items() if started < cutoff)  # type: ignore[operator]
    return sorted(old)


def prune_runs(engine: Engine, run_ids: list[str]) -> dict[str, int]:
    """Delete the runs and every exchange, probe call and world state under them.

    Returns:
        Rows deleted per table.
    """
    counts: dict[str, int] = {}
    with Session(engine) as session:
        for table in (*_TABLES, Run):
            column = table.id if table is Run else table.run_id  # type: ignore[attr-defined]
            result = session.execute(delete(table).where(column.in_(run_ids)))
            counts[table.__tablename__] = result.rowcount or 0
        session.commit()
    return counts
