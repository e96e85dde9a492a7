"""The background capture writer: a bounded queue drained by one thread in batches.

The gateway's hot path only enqueues; it never waits on the database. When the
queue is full, :meth:`CaptureWriter.submit` waits for room (back-pressure) instead of
dropping a capture. With a spool (:mod:`probegate.store.spool`) every capture is
built into its rows and journaled there, one line with one ``write()``, before
``submit`` returns; the writer deletes journaled lines once committed and replays the
spool of a dead writer when it starts. A batch that the database refuses is retried
row by row; a row that still cannot be written is kept in the spool's refused segment
(tried again at the next start), so nothing is lost silently, and the failure is
counted in :attr:`CaptureWriter.stats`.

Nothing reaches the queue, the spool or the store unredacted: a plain row or an
upsert is scrubbed by :func:`~probegate.store.redaction.redact_row` when it is
submitted (before it is journaled and queued); a :class:`Capture`'s rows are scrubbed
by :meth:`CaptureWriter.rows_of` as they are built (a capture that redacts its own
rows, such as the gateway's ``RecordedExchange``, is handed the writer's redactor
instead, so its stream and raw body are scrubbed before a payload cap cuts them).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from sqlalchemy import insert
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel

from probegate.redact import SECRETS, Redactor
from probegate.store.redaction import redact_row
from probegate.store.spool import Spool, decode, encode

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
class _Journaled:
    """Rows built on the submitting side and journaled in spool segment ``segment``."""

    rows: list[SQLModel | Upsert]
    segment: int


@dataclass
class WriterStats:
    """Counters reported by ``GET /probegate/health``."""

    queued: int = 0
    written: int = 0
    batches: int = 0
    errors: int = 0
    spilled: int = 0
    replayed: int = 0
    spool_errors: int = 0
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


def _pairs(rows: list[SQLModel | Upsert]) -> list[tuple[SQLModel, bool]]:
    return [(r.row, True) if isinstance(r, Upsert) else (r, False) for r in rows]


def _unpairs(pairs: list[tuple[SQLModel, bool]]) -> list[SQLModel | Upsert]:
    return [Upsert(row) if upsert else row for row, upsert in pairs]


class CaptureWriter:
    """Writes captures to the store from a background thread, in batches.

    Args:
        engine: the store engine.
        maxsize: queue bound (items); a full queue applies back-pressure.
        batch: most rows committed in one transaction.
        spool: directory of the capture spool (:mod:`probegate.store.spool`). With it,
            ``submit`` builds each capture's rows and journals them before returning,
            and :meth:`start` replays what a dead writer left there. Without it,
            captures wait in memory until committed (a SIGKILL loses the queue), and
            rows the database refuses go to ``probegate-spool`` in the working directory.
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
        spool: str | Path | Spool | None = None,
        linger_s: float = 0.05,
        redactor: Redactor = SECRETS,
    ) -> None:
        self.engine = engine
        self.redactor = redactor
        self.batch = batch
        self.linger_s = linger_s
        self.spool = Spool(spool) if isinstance(spool, (str, Path)) else spool
        self._refusals: Spool | None = self.spool
        self.stats = WriterStats()
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=maxsize)
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> CaptureWriter:
        """Replay the spool's orphaned segments (with a spool), then start the writer
        thread (idempotent).

        Raises:
            OSError: the spool directory cannot be created or written.
        """
        if self.spool is not None and self._thread is None:
            self.spool.open()
            self._replay()
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
        if self.spool is not None:
            self.spool.close()

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
        """Scrub, journal (with a spool) and enqueue without waiting; ``False`` when the queue
        is full (then nothing was journaled)."""
        if self._queue.full():
            return False
        entry = self._journal(self.prepared(item))
        try:
            self._queue.put_nowait(entry)
        except queue.Full:  # another producer took the room meanwhile: the caller submits again
            self._release([entry])
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

    async def submit(self, item: SQLModel | Capture | Upsert) -> None:
        """Journal (with a spool) and enqueue from the event loop; waits for room when the
        queue is full. With a spool the rows are built and written to the spool here,
        so when this returns a SIGKILL no longer loses the capture."""
        entry = self._journal(self.prepared(item))
        try:
            self._queue.put_nowait(entry)
        except queue.Full:
            await asyncio.to_thread(self._queue.put, entry)
        self.stats.queued += 1

    def submit_blocking(self, item: SQLModel | Capture | Upsert) -> None:
        """Journal (with a spool) and enqueue from a plain thread; waits for room when
        the queue is full."""
        self._queue.put(self._journal(self.prepared(item)))
        self.stats.queued += 1

    def _journal(self, item: SQLModel | Capture | Upsert) -> Any:
        if self.spool is None:
            return item
        rows = self._rows(item)
        try:
            return _Journaled(rows, self.spool.append(encode(_pairs(rows))))
        except (OSError, ValueError, TypeError) as exc:  # disk full ...: still stored, not crash-safe
            self.stats.spool_errors += 1
            self._note_error(f"spool write failed: {exc!r}")
            log.error("a capture could not be written to the spool %s: %r", self.spool.directory, exc)
            return rows

    def _replay(self) -> None:
        """Commit what dead writers left in the spool; rows already stored are skipped."""
        assert self.spool is not None
        for path, lines in self.spool.orphans():
            rows: list[SQLModel | Upsert] = []
            for line in lines:
                try:
                    rows.extend(_unpairs(decode(line)))
                except (ValueError, KeyError, TypeError) as exc:  # a torn last line was never answered
                    log.warning("skipped an unreadable line in %s: %r", path, exc)
            for start in range(0, len(rows), self.batch):
                self._write(rows[start:start + self.batch], replay=True)
            self.stats.replayed += len(rows)
            if rows:
                log.warning("replayed %d row(s) from %s", len(rows), path)

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
                self._release(items)
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
            self._release(rest)
            for _ in rest:
                self._queue.task_done()

    def _release(self, items: list[Any]) -> None:
        """Tell the spool which journaled lines are now committed (or kept as refused)."""
        if self.spool is None:
            return
        for item in items:
            if isinstance(item, _Journaled):
                try:
                    self.spool.done(item.segment)
                except OSError as exc:
                    self._note_error(f"spool upkeep failed: {exc!r}")

    def _rows(self, item: Any) -> list[SQLModel | Upsert]:
        if isinstance(item, _Journaled):
            return item.rows
        if isinstance(item, list):
            return item
        if isinstance(item, (SQLModel, Upsert)):
            return [item]  # scrubbed when submitted
        try:
            return list(self.rows_of(item))
        except Exception as exc:  # a bug in row building must not lose the capture
            log.exception("building capture rows failed")
            self._note_error(f"building rows failed: {exc!r}")
            fallback = getattr(item, "fallback_rows", None)
            return [redact_row(row, self.redactor) for row in fallback(exc)] if fallback else []

    def _write(self, rows: list[SQLModel | Upsert], replay: bool = False) -> None:
        if not rows:
            return
        try:
            self._commit(rows, replay)
        except Exception as exc:
            self._note_error(f"batch commit failed: {exc!r}")
            for row in rows:
                self._write_one(row, replay)
            return
        self.stats.written += len(rows)
        self.stats.batches += 1

    def _write_one(self, row: SQLModel | Upsert, replay: bool = False) -> None:
        # a replay runs before the gateway answers: a row the store refuses then is
        # kept for the next start at once, not after a second of retries
        for delay in (0.0,) if replay else (0.05, 0.2, 1.0):
            try:
                self._commit([row], replay)
            except Exception as exc:
                self._note_error(f"row commit failed: {exc!r}")
                time.sleep(delay)
            else:
                self.stats.written += 1
                return
        self._spill(row)

    def _commit(self, rows: list[SQLModel | Upsert], replay: bool = False) -> None:
        inserts: dict[type[SQLModel], list[dict[str, Any]]] = {}
        clean = _without_nul if self.engine.dialect.name == "postgresql" else _same
        with Session(self.engine, expire_on_commit=False) as session:
            for row in rows:
                if isinstance(row, Upsert):
                    self._flush_inserts(session, inserts, replay)
                    model = type(row.row)
                    session.merge(model.model_validate(clean(row.row.model_dump())))
                else:
                    inserts.setdefault(type(row), []).append(clean(row.model_dump()))
            self._flush_inserts(session, inserts, replay)
            session.commit()

    def _flush_inserts(
        self, session: Session, inserts: dict[type[SQLModel], list[dict[str, Any]]], replay: bool
    ) -> None:
        # one executemany per table: far cheaper than the ORM's unit of work per row;
        # flushed before an upsert so the store sees captures in the order they came.
        # A replay skips rows already stored (committed before the crash).
        for model, values in inserts.items():
            session.execute(self._insert(model) if replay else insert(model), values)
        inserts.clear()

    def _insert(self, model: type[SQLModel]) -> Any:
        dialect = {"sqlite": sqlite, "postgresql": postgresql}.get(self.engine.dialect.name)
        if dialect is None:
            raise NotImplementedError(f"spool replay into {self.engine.dialect.name} stores")
        return dialect.insert(model).on_conflict_do_nothing()

    def _spill(self, row: SQLModel | Upsert) -> None:
        if self._refusals is None:
            self._refusals = Spool("probegate-spool")
        path = self._refusals.refuse(encode(_pairs([row])))
        self.stats.spilled += 1
        log.error("a capture could not be stored and was kept in %s (tried again at the next start)", path)

    def _note_error(self, message: str) -> None:
        self.stats.errors += 1
        self.stats.last_error = message
