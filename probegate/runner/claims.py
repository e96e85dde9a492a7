"""Attempt claims: how the workers of a distributed run share its attempts through the store.

A broker delivers each attempt at least once; the store makes it count once. Before
running an attempt a worker *claims* it (:func:`claim`): the first delivery inserts
the ``AttemptClaim`` row, a later one (the first worker was lost: SIGKILL, a lost
machine, a visibility timeout) raises its ``generation`` and marks the exchanges and
probe calls already stored for the attempt ``superseded``, which the scorer skips.
A finished or errored attempt is never claimed again, and an attempt delivered
more than ``max_tries`` times is recorded as an error (poisoned) instead of run.
Only the claim's current generation may record the outcome (:func:`finish`).

The coordinator reads the claims (:func:`finished_claims`) to show progress and to
know when the last attempt has ended.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from probegate.store.models import AttemptClaim, Exchange, ProbeCall, Run, utcnow

#: Deliveries an attempt gets before it is recorded as an error instead of run again.
MAX_TRIES = 3


@dataclass(frozen=True)
class Claim:
    """A delivery's right to run one attempt.

    Attributes:
        run_id, task_id, attempt: the attempt.
        generation: this delivery's number (1 for the first).
    """

    run_id: str
    task_id: str
    attempt: int
    generation: int


def poisoned_outcome(tries: int) -> dict[str, Any]:
    """The outcome JSON of an attempt given up after ``tries`` deliveries (pure)."""
    error = f"the attempt was delivered {tries} times without finishing (its worker was lost each time): given up"
    return {"final_answer": None, "stop": "error", "error": error, "steps": 0, "seconds": 0.0, "passed": None}


def claim(
    engine: Engine, run_id: str, task_id: str, attempt: int, worker: str, max_tries: int = MAX_TRIES
) -> Claim | None:
    """Claim an attempt for this delivery.

    Returns:
        The :class:`Claim` to run it under, or ``None`` when it must not run: the run
        is no longer ``running`` (interrupted), the attempt already ended, or this
        delivery is past ``max_tries`` (then the attempt is recorded as an error).
    """
    for _ in range(2):  # a concurrent first claim of the same attempt: read it again
        try:
            return _claim(engine, run_id, task_id, attempt, worker, max_tries)
        except IntegrityError:
            continue
    return None


def _claim(engine: Engine, run_id: str, task_id: str, attempt: int, worker: str, max_tries: int) -> Claim | None:
    with Session(engine) as session:
        run = session.get(Run, run_id)
        if run is None or run.status != "running":
            return None
        row = session.exec(
            select(AttemptClaim)
            .where(AttemptClaim.run_id == run_id, AttemptClaim.task_id == task_id, AttemptClaim.attempt == attempt)
            .with_for_update()
        ).first()
        if row is None:
            session.add(AttemptClaim(run_id=run_id, task_id=task_id, attempt=attempt, worker=worker))
            session.commit()
            return Claim(run_id, task_id, attempt, 1)
        if row.status != "running":
            return None
        generation = row.generation + 1
        for table in (Exchange, ProbeCall):
            session.execute(
                update(table)
                .where(col(table.run_id) == run_id, col(table.task_id) == task_id, col(table.attempt) == attempt)
                .values(superseded=True)
            )
        row.generation, row.worker, row.started_at = generation, worker, utcnow()
        if generation > max_tries:
            row.status, row.outcome, row.finished_at = "error", poisoned_outcome(generation - 1), utcnow()
        session.add(row)
        session.commit()
        return Claim(run_id, task_id, attempt, generation) if generation <= max_tries else None


def finish(engine: Engine, claim_: Claim, outcome: dict[str, Any], status: str = "done") -> bool:
    """Record the attempt's outcome, if ``claim_`` is still the attempt's current delivery.

    Returns:
        Whether it was recorded (``False``: a later delivery took the attempt over).
    """
    with Session(engine) as session:
        result = session.execute(
            update(AttemptClaim)
            .where(
                col(AttemptClaim.run_id) == claim_.run_id,
                col(AttemptClaim.task_id) == claim_.task_id,
                col(AttemptClaim.attempt) == claim_.attempt,
                col(AttemptClaim.generation) == claim_.generation,
                col(AttemptClaim.status) == "running",
            )
            .values(status=status, outcome=outcome, finished_at=utcnow())
        )
        session.commit()
        return bool(result.rowcount)  # type: ignore[attr-defined]


def claims(engine: Engine, run_id: str) -> list[AttemptClaim]:
    """Every claim of the run (the coordinator's view of its attempts)."""
    with Session(engine) as session:
        return list(session.exec(select(AttemptClaim).where(AttemptClaim.run_id == run_id)))


def give_up(engine: Engine, run_id: str, task_id: str, attempt: int, error: str) -> None:
    """Record an attempt that has not ended as an error (its job failed every retry,
    perhaps before it could be claimed)."""
    outcome = {"final_answer": None, "stop": "error", "error": error, "steps": 0, "seconds": 0.0, "passed": None}
    with Session(engine) as session:
        row = session.get(AttemptClaim, (run_id, task_id, attempt))
        if row is None:
            row = AttemptClaim(run_id=run_id, task_id=task_id, attempt=attempt)
        elif row.status != "running":
            return
        row.status, row.outcome, row.finished_at = "error", outcome, utcnow()
        session.add(row)
        session.commit()
