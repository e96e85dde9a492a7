"""The background capture writer: a bounded queue drained by one thread in batches.

The gateway's hot path only enqueues; it never waits on the database. When the
queue is full, :meth:`CaptureWriter.submit` waits for room (back-pressure) instead of
dropping a capture. A batch that the database refuses is retried row by row; a row
that still cannot be written is appended to the spill file (JSON lines) so that
nothing is lost silently, and the failure is counted in :attr:`CaptureWriter.stats`.

Nothing reaches the queue, the spill file or the store unredacted: a plain row or an
upsert is scrubbed by :func:`~probegate.store.redaction.redact_row` when it is
submitted (before it is queued); a :class:`Capture` builds its rows in the writer
thread and :meth:`CaptureWriter.rows_of` scrubs them as they are built (a capture
that redacts its own rows, such as the gateway's ``RecordedExchange``, is handed the
writer's redactor instead, so its stream and raw body are scrubbed before a payload
cap cuts them).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from sqlalchemy import insert
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel

from probegate.redact import SECRETS, Redactor
from probegate.store.redaction import redact_row

log = logging.getLogger("probegate.store")

_STOP = object()


@runtime_checkable
class Capture(Protocol):
    """Anything the writer accepts besides a plain row: it builds its rows off the hot path.

    A capture with a ``redactor`` attribute scrubs its own rows with it (the writer
    sets it to its own before building); the rows of any other capture are scrubbed
    by the writer.
    """

    def to_rows(self) -> list[SQLModel]: ...


@dataclass
class Upsert:
    """A row that replaces an existing row with the same primary key."""

    row: SQLModel


@dataclass
class WriterStats:
    """Counters reported by ``GET /probegate/health``."""

    queued: int = 0
    written: int = 0
    batches: int = 0
    errors: int = 0
    spilled: int = 0
    last_error: str | None = None
    started_at: float = field(default_factory=time.time)


def _same(value: Any) -> Any:
    return value


def _without_nul(value: Any) -> Any:
    """PostgreSQL text and JSONB cannot hold U+0000: store it as U+FFFD.

    Byte columns (``request_raw``, ``response_raw``) keep the exact bytes.
    """
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_nul(v) for v in value]
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"__bytes__": base64.b64encode(value).decode()}
    if isinstance(value, datetime):
        return value.isoformat()
    return value


class CaptureWriter:
    """Writes captures to the store from a background thread, in batches.

    Args:
        engine: the store engine.
        maxsize: queue bound (items); a full queue applies back-pressure.
        batch: most rows committed in one transaction.
        spill_path: JSON-lines file for rows the database refused.
        linger_s: after the first capture of a batch, wait this long (s) for more, so
            a steady trickle is committed in a few transactions instead of one each
            (each commit costs CPU that competes with the event loop for the GIL).
        redactor: what is scrubbed from every row (default: secrets; it always
            includes them, see :func:`probegate.redact.make_redactor`).
    """

    def __init__(
        self,
        engine: Engine,
        *,
        maxsize: int = 10_000,
        batch: int = 256,
        spill_path: str | Path | None = None,
        linger_s: float = 0.05,
        redactor: Redactor = SECRETS,
    ) -> None:
        self.engine = engine
        self.redactor = redactor
        self.batch = batch
        self.linger_s = linger_s
        self.spill_path = Path(spill_path) if spill_path else Path("probegate-spill.jsonl")
        self.stats = WriterStats()
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=maxsize)
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> CaptureWriter:
        """Start the writer thread (idempotent)."""
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="probegate-writer", daemon=True)
            self._thread.start()
        return self

    def close(self, timeout: float | None = 60.0) -> None:
        """Drain every queued capture, then stop the thread."""
        if self._thread is None:
            return
        self._queue.put(_STOP)
        self._thread.join(timeout)
        self._thread = None

    def flush(self) -> None:
        """Block until every capture queued so far is committed (or spilled)."""
        self._queue.join()

    @property
    def depth(self) -> int:
        """Captures waiting in the queue."""
        return self._queue.qsize()

    @property
    def pending(self) -> int:
        """Captures accepted but not yet committed (queued or in the batch being written)."""
        return self._queue.unfinished_tasks

    # -- producers ---------------------------------------------------------------
    def prepared(self, item: SQLModel | Capture | Upsert) -> SQLModel | Capture | Upsert:
        """What is queued for ``item``: a row or upsert scrubbed, a capture as it is."""
        if isinstance(item, Upsert):
            return Upsert(redact_row(item.row, self.redactor))
        if isinstance(item, SQLModel):
            return redact_row(item, self.redactor)
        return item

    def submit_nowait(self, item: SQLModel | Capture | Upsert) -> bool:
        """Enqueue without waiting (rows are scrubbed first); ``False`` when the queue is full."""
        return self._put_nowait(self.prepared(item))

    async def submit(self, item: SQLModel | Capture | Upsert) -> None:
        """Enqueue from the event loop; waits for room when the queue is full."""
        item = self.prepared(item)
        if not self._put_nowait(item):
            await asyncio.to_thread(self._queue.put, item)
            self.stats.queued += 1

    def submit_blocking(self, item: SQLModel | Capture | Upsert) -> None:
        """Enqueue from a plain thread; waits for room when the queue is full."""
        self._queue.put(self.prepared(item))
        self.stats.queued += 1

    def _put_nowait(self, item: SQLModel | Capture | Upsert) -> bool:
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            return False
        self.stats.queued += 1
        return True

    def rows_of(self, item: Capture) -> list[SQLModel]:
        """The scrubbed rows of a capture (where a capture's rows are built).

        Raises:
            Exception: whatever building the rows raised.
        """
        if hasattr(item, "redactor"):
            setattr(item, "redactor", self.redactor)  # it scrubs its own rows, before any payload cap
            return list(item.to_rows())
        return [redact_row(row, self.redactor) for row in item.to_rows()]

    # -- consumer ----------------------------------------------------------------
    def _run(self) -> None:
        stopping = False
        while not stopping:
            items = [self._queue.get()]
            deadline = time.monotonic() + self.linger_s
            while len(items) < self.batch and items[-1] is not _STOP:
                remaining = deadline - time.monotonic()
                try:
                    if remaining > 0:
                        items.append(self._queue.get(timeout=remaining))
                    else:
                        items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if any(item is _STOP for item in items):
                stopping = True
                items = [item for item in items if item is not _STOP]
            try:
                self._write([row for item in items for row in self._rows(item)])
            finally:
                for _ in range(len(items) + (1 if stopping else 0)):
                    self._queue.task_done()
        # anything enqueued after the stop marker is still written
        rest = []
        while True:
            try:
                rest.append(self._queue.get_nowait())
            except queue.Empty:
                break
        if rest:
            self._write([row for item in rest for row in self._rows(item)])
            for _ in rest:
                self._queue.task_done()

    def _rows(self, item: Any) -> list[SQLModel | Upsert]:
        if isinstance(item, (SQLModel, Upsert)):
            return [item]  # scrubbed when submitted
        try:
            return list(self.rows_of(item))
        except Exception as exc:  # a bug in row building must not lose the capture
            log.exception("building capture rows failed")
            self._note_error(f"building rows failed: {exc!r}")
            fallback = getattr(item, "fallback_rows", None)
            return [redact_row(row, self.redactor) for row in fallback(exc)] if fallback else []

    def _write(self, rows: list[SQLModel | Upsert]) -> None:
        if not rows:
            return
        try:
            self._commit(rows)
        except Exception as exc:
            self._note_error(f"batch commit failed: {exc!r}")
            for row in rows:
                self._write_one(row)
            return
        self.stats.written += len(rows)
        self.stats.batches += 1

    def _write_one(self, row: SQLModel | Upsert) -> None:
        for delay in (0.05, 0.2, 1.0):
            try:
                self._commit([row])
            except Exception as exc:
                self._note_error(f"row commit failed: {exc!r}")
                time.sleep(delay)
            else:
                self.stats.written += 1
                return
        self._spill(row)

    def _commit(self, rows: list[SQLModel | Upsert]) -> None:
        inserts: dict[type[SQLModel], list[dict[str, Any]]] = {}
        clean = _without_nul if self.engine.dialect.name == "postgresql" else _same
        with Session(self.engine, expire_on_commit=False) as session:
            for row in rows:
                if isinstance(row, Upsert):
                    self._flush_inserts(session, inserts)
                    model = type(row.row)
                    session.merge(model.model_validate(clean(row.row.model_dump())))
                else:
                    inserts.setdefault(type(row), []).append(clean(row.model_dump()))
            self._flush_inserts(session, inserts)
            session.commit()

    @staticmethod
    def _flush_inserts(session: Session, inserts: dict[type[SQLModel], list[dict[str, Any]]]) -> None:
        # one executemany per table: far cheaper than the ORM's unit of work per row;
        # flushed before an upsert so the store sees captures in the order they came
        for model, values in inserts.items():
            session.execute(insert(model), values)
        inserts.clear()

    def _spill(self, row: SQLModel | Upsert) -> None:
        target = row.row if isinstance(row, Upsert) else row
        record = {"table": type(target).__tablename__}
        record.update({k: _jsonable(v) for k, v in target.model_dump().items()})
        with self.spill_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, default=str) + "\n")
        self.stats.spilled += 1
        log.error("a capture could not be stored and was written to %s", self.spill_path)

    def _note_error(self, message: str) -> None:
        self.stats.errors += 1
        self.stats.last_error = message
