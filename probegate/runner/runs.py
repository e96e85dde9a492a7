"""The runner's writes to the capture store: the ``Run`` row and its status.

The runner only writes (insert, then updates by primary key); it never reads
captures. Both writes are scrubbed (:mod:`probegate.store.redaction`), as every stored row is. Each attempt's harness outcome (stop reason, error, final answer) goes
into ``Run.params["outcomes"]["<task>/<attempt>"]`` as it finishes, so a crashed or
interrupted run still says how far each attempt got, and the scorer can see what
no wire shows (a sandbox stop, a timeout, the printed answer of ``code``).
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from probegate.ids import check_id
from probegate.errors import UsageError
from probegate.store.models import Run, utcnow
from probegate.store.redaction import redact_row, redact_values

RunStatus = str  # running | done | interrupted | failed


def harness_slug(harness: str) -> str:
    """A short, URL-safe form of a harness name (``cmd:"python a.py"`` -> ``cmd``)."""
    head = harness.split(":", 1)[0]
    return re.sub(r"[^A-Za-z0-9]+", "-", head).strip("-").lower() or "harness"


def new_run_id(harness: str, now: datetime | None = None, short: str | None = None) -> str:
    """A run id like ``20250101-120000-fc-3f9a``: UTC time, harness, 4 random hex digits."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{harness_slug(harness)}-{short or secrets.token_hex(2)}"


def check_run_id(run_id: str) -> str:
    """``run_id`` if it can travel in a URL.

    Raises:
        UsageError: it cannot.
    """
    return check_id(run_id, "run", "--run-id")


def create_run(
    engine: Engine,
    run_id: str,
    *,
    task_set: str,
    harness: str,
    model: str,
    upstream: str | None,
    params: dict[str, Any],
) -> None:
    """Insert the ``Run`` row with status ``running`` (and this probegate's version).

    Raises:
        UsageError: a run with this id already exists.
    """
    from probegate import __version__

    row = redact_row(Run(
        id=run_id,
        task_set=task_set,
        harness=harness,
        model=model,
        upstream=upstream,
        params=params,
        status="running",
        probegate_version=__version__,
    ))
    try:
        with Session(engine) as session:
            session.add(row)
            session.commit()
    except IntegrityError as exc:
        raise UsageError(f"run {run_id!r} already exists in the store: choose another --run-id") from exc


def finish_run(engine: Engine, run_id: str, status: RunStatus) -> None:
    """Set the run's final status (``done``, ``interrupted``, ``failed``) and ``finished_at``."""
    update_run(engine, run_id, status=status, finished_at=utcnow())


def update_run(engine: Engine, run_id: str, **values: Any) -> None:
    """Set columns of the run (``status``, ``params``) by primary key, scrubbed like every
    stored row (the final answers in ``params["outcomes"]`` may quote a secret)."""
    with Session(engine) as session:
        session.execute(update(Run).where(Run.id == run_id).values(**redact_values(values)))  # type: ignore[arg-type]
        session.commit()
