"""Reading the probe log and world states back from the capture store."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from probegate.store.models import ProbeCall, WorldState


def read_probe_calls(engine: Engine, run: str, task: str | None = None, attempt: int | None = None) -> list[ProbeCall]:
    """A run's probe calls (optionally one task / attempt), by task, attempt and ``seq``."""
    query = select(ProbeCall).where(ProbeCall.run_id == run)
    if task is not None:
        query = query.where(ProbeCall.task_id == task)
    if attempt is not None:
        query = query.where(ProbeCall.attempt == attempt)
    query = query.order_by(col(ProbeCall.task_id), col(ProbeCall.attempt), col(ProbeCall.seq), col(ProbeCall.id))
    with Session(engine) as session:
        return list(session.exec(query).all())


def read_world_state(engine: Engine, run: str, task: str, attempt: int = 0) -> WorldState | None:
    """The stored world state of one attempt, or ``None``."""
    with Session(engine) as session:
        return session.get(WorldState, (run, task, attempt))
