"""The capture spool: an append-only journal of built rows, so that a SIGKILL loses no answer.

The writer appends every capture's rows here as **one JSON line in one ``write()``**
before the submitting code goes on (the gateway submits before the last byte of its
answer leaves), then commits from its in-memory queue as before. ``write()`` puts the
line in the kernel's page cache, which survives the death of the process; ``fsync``
runs on a timer (every ``fsync_s``) off the hot path, so a power cut can cost the last
interval. A segment whose every line is committed is deleted (the current one is
truncated), so an idle spool is empty.

A writer holds an ``flock`` on each segment it owns; the kernel drops it when the
process dies, however it dies. At start a writer replays every segment nobody holds,
from the oldest, inserting rows whose primary key is not in the store yet (exchanges
and probe calls have ULID ids), so a replay after a crash, or twice, inserts nothing
twice. Rows the store refuses go to a ``.refused.spool`` segment, kept and tried
again at the next start. Several writers may share one directory.

Line format (version 1): ``{"v": 1, "rows": [{"table": NAME, "upsert": BOOL,
"values": {...}}]}``; bytes are ``{"$b64": "..."}``, datetimes ISO 8601 strings.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import logging
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy.engine import make_url
from sqlmodel import SQLModel

from probegate.store.models import Exchange, ProbeCall, Run, WorldState, new_id

log = logging.getLogger("probegate.store")

SPOOL_VERSION = 1
SUFFIX = ".spool"
REFUSED_SUFFIX = ".refused.spool"
TABLES: dict[str, type[SQLModel]] = {m.__tablename__: m for m in (Exchange, ProbeCall, Run, WorldState)}  # type: ignore[attr-defined,misc]


def default_spool_dir(store_url: str) -> Path | None:
    """Where a gateway on ``store_url`` keeps its spool when not told (pure).

    An SQLite file store keeps it beside the file (``probegate.db`` ->
    ``probegate.db-spool/``, as SQLite keeps ``-wal``); an in-memory store has none;
    any other store gets ``$XDG_STATE_HOME/probegate/spool/<hash of the URL>``
    (``~/.local/state`` when unset).
    """
    if store_url.startswith("sqlite"):
        path = make_url(store_url).database
        return None if not path or path == ":memory:" else Path(f"{path}-spool")
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "probegate" / "spool" / hashlib.sha256(store_url.encode()).hexdigest()[:16]


# -- encoding (pure) ----------------------------------------------------------------------
def _default(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"$b64": base64.b64encode(value).decode()}
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"cannot spool {type(value).__name__}")


def encode(rows: list[tuple[SQLModel, bool]]) -> bytes:
    """One spool line (ending in ``\\n``) for ``rows``: ``(row, upsert)`` pairs.

    Text that is not valid UTF-8 (a lone surrogate from a ``\\ud800`` escape in a
    body) is written with ASCII escapes instead of failing.
    """
    record = {"v": SPOOL_VERSION, "rows": [
        {"table": row.__tablename__, "upsert": upsert, "values": row.model_dump()}  # type: ignore[attr-defined]
        for row, upsert in rows
    ]}
    try:
        return orjson.dumps(record, default=_default) + b"\n"
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(record, default=_default).encode() + b"\n"


def _column_types(model: type[SQLModel]) -> dict[str, type]:
    kinds: dict[str, type] = {}
    for column in model.__table__.columns:  # type: ignore[attr-defined]
        kind = getattr(column.type, "impl_instance", column.type)  # a TypeDecorator's own type
        try:
            kinds[column.name] = kind.python_type
        except NotImplementedError:
            continue
    return kinds


_KINDS = {name: _column_types(model) for name, model in TABLES.items()}


def _value(kind: type | None, value: Any) -> Any:
    if kind is bytes and isinstance(value, dict) and "$b64" in value:
        return base64.b64decode(value["$b64"])
    if kind is datetime and isinstance(value, str):
        return datetime.fromisoformat(value)
    return value


def decode(line: bytes) -> list[tuple[SQLModel, bool]]:
    """The ``(row, upsert)`` pairs of one spool line.

    Raises:
        ValueError: the line is not a complete spool record of a known version
            (a torn last line after a power cut, or a newer probegate's spool).
    """
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        record = json.loads(line)  # raises ValueError; also reads lone-surrogate escapes
    if not isinstance(record, dict) or record.get("v") != SPOOL_VERSION:
        raise ValueError(f"not a version {SPOOL_VERSION} spool record")
    out: list[tuple[SQLModel, bool]] = []
    for item in record["rows"]:
        model = TABLES[item["table"]]
        kinds = _KINDS[item["table"]]
        values = {k: _value(kinds.get(k), v) for k, v in item["values"].items()}
        out.append((model(**values), bool(item["upsert"])))
    return out


# -- the files ------------------------------------------------------------------------------
@dataclass
class _Segment:
    number: int
    path: Path
    fd: int
    appended: int = 0
    committed: int = 0
    size: int = 0


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class Spool:
    """An append-only journal directory, one writer's segments in it (see the module doc).

    Args:
        directory: where segments live (created).
        segment_bytes: a segment is retired (and deleted once committed) past this size.
        fsync_s: how often (s) the timer thread fsyncs what was appended.

    Raises:
        OSError: the directory cannot be created or written (from :meth:`open`).
    """

    def __init__(self, directory: str | Path, *, segment_bytes: int = 8 << 20, fsync_s: float = 1.0) -> None:
        self.directory = Path(directory)
        self.segment_bytes = segment_bytes
        self.fsync_s = fsync_s
        self.syncs = 0  # fsync rounds that had something to sync
        self._segments: dict[int, _Segment] = {}
        self._current: _Segment | None = None
        self._refused: _Segment | None = None
        self._numbers = 0
        self._dirty = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------
    def open(self) -> Spool:
        """Create the directory and the first segment; start the fsync timer (idempotent)."""
        if self._current is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._current = self._new_segment(SUFFIX)
            self._timer = threading.Thread(target=self._tick, name="probegate-spool-fsync", daemon=True)
            self._timer.start()
        return self

    def close(self) -> None:
        """Stop the timer, fsync, delete the segments whose lines are all committed."""
        self._stop.set()
        if self._timer is not None:
            self._timer.join()
        try:
            self.sync()
        except OSError as exc:
            log.error("spool fsync failed: %r", exc)
        with self._lock:
            for seg in list(self._segments.values()):
                if seg is not self._refused and seg.committed >= seg.appended:
                    seg.path.unlink(missing_ok=True)
                os.close(seg.fd)
            self._segments.clear()
            self._current = self._refused = None

    def _new_segment(self, suffix: str) -> _Segment:
        # created under a hidden name and locked before it gets the name others scan for:
        # a writer starting now must never take a live segment for an orphan
        name = new_id()
        hidden = self.directory / f".{name}.tmp"
        fd = os.open(hidden, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        path = self.directory / f"{name}{suffix}"
        os.rename(hidden, path)
        self._numbers += 1
        seg = _Segment(self._numbers, path, fd)
        self._segments[seg.number] = seg
        self._dirty = True
        return seg

    # -- the hot path ---------------------------------------------------------------------
    def append(self, line: bytes) -> int:
        """Append one line with one ``write()`` (no fsync); returns its segment number.

        Raises:
            OSError: the write failed (disk full ...): the line is not journaled.
        """
        with self._lock:
            seg = self._current
            assert seg is not None, "Spool.open() was not called"
            _write_all(seg.fd, line)
            seg.appended += 1
            seg.size += len(line)
            self._dirty = True
            if seg.size >= self.segment_bytes:
                self._current = self._new_segment(SUFFIX)
            return seg.number

    def done(self, number: int, count: int = 1) -> None:
        """``count`` lines of segment ``number`` are committed to the store."""
        with self._lock:
            seg = self._segments.get(number)
            if seg is None:  # closed meanwhile (a writer that did not drain in time)
                return
            seg.committed += count
            self._collect()

    def _collect(self) -> None:
        # oldest first, and only in order: a replay then always replays a suffix of the
        # history, so an older world state can never overwrite a newer one
        for seg in sorted(self._segments.values(), key=lambda s: s.number):
            if seg is self._refused:
                continue
            if seg.committed < seg.appended:
                return
            if seg is self._current:
                if seg.size:
                    os.ftruncate(seg.fd, 0)  # O_APPEND: the next line goes to offset 0
                    seg.appended = seg.committed = seg.size = 0
                return
            seg.path.unlink(missing_ok=True)
            os.close(seg.fd)
            del self._segments[seg.number]

    def refuse(self, line: bytes) -> Path:
        """Keep a line the store refused; it is tried again at the next start."""
        with self._lock:
            if self._refused is None:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._refused = self._new_segment(REFUSED_SUFFIX)
            _write_all(self._refused.fd, line)
            self._refused.appended += 1
            self._dirty = True
            return self._refused.path

    # -- fsync on a timer -----------------------------------------------------------------
    def _tick(self) -> None:
        while not self._stop.wait(self.fsync_s):
            try:
                self.sync()
            except OSError as exc:  # the next tick tries again
                log.error("spool fsync failed: %r", exc)

    def sync(self) -> None:
        """fsync every segment and the directory if anything was appended since the last time."""
        with self._lock:
            if not self._dirty:
                return
            self._dirty = False
            fds = [os.dup(seg.fd) for seg in self._segments.values()]
        try:
            for fd in fds:
                os.fsync(fd)
            directory = os.open(self.directory, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)
            self.syncs += 1
        finally:
            for fd in fds:
                os.close(fd)

    # -- replay ---------------------------------------------------------------------------
    def orphans(self) -> Iterator[tuple[Path, list[bytes]]]:
        """The segments no live writer holds, oldest first, each as its lines.

        Each is locked while the caller handles it and deleted when the caller asks
        for the next one (or stops iterating normally); a caller that raises leaves
        it in place. Hidden half-created segments of dead writers are removed.
        """
        for hidden in self.directory.glob(".*.tmp"):
            with _locked(hidden) as fd:
                if fd is not None:
                    hidden.unlink(missing_ok=True)
        own = {seg.path for seg in self._segments.values()}
        for path in sorted(self.directory.glob(f"*{SUFFIX}"), key=lambda p: p.name):
            if path in own:
                continue
            with _locked(path) as fd:
                if fd is None:
                    continue  # a live writer's
                with os.fdopen(os.dup(fd), "rb") as fh:
                    lines = [line for line in fh.read().split(b"\n") if line.strip()]
                yield path, lines
                path.unlink(missing_ok=True)


class _locked:
    """Open ``path`` and take its flock without waiting; ``None`` when another holds it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None

    def __enter__(self) -> int | None:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        self.fd = fd
        return fd

    def __exit__(self, *_: object) -> None:
        if self.fd is not None:
            os.close(self.fd)
