"""Portable runs: one compressed JSON-lines bundle per run.

Layout (gzip, one JSON object per line)::

    {"format": "probegate-bundle", "version": 1, "probegate": "0.1.0", "schema": "0002", "run": "RUN"}
    {"kind": "run", "row": {...}}                 # includes params.task_snapshot
    {"kind": "exchange", "row": {...}}            # bytes as {"__b64__": "..."}
    {"kind": "probe_call", "row": {...}}
    {"kind": "world_state", "row": {...}}
    {"kind": "end", "counts": {...}, "sha256": "<hex of every line above>"}

Import reads and checks the whole bundle before it writes anything (a truncated or
corrupted bundle is refused and nothing is half-imported), refuses a newer format
version, refuses unusable run and task ids (:mod:`probegate.ids`), scrubs every row
(a bundle from an older probegate may hold secrets), and never clashes with what the
target store holds: a run id that exists
is refused unless renamed (``--as``); exchange and probe-call ids that exist get
new ids.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import zlib
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel

from probegate.redact import SECRETS, Redactor
from probegate.errors import UsageError
from probegate.ids import RULE, valid_id, valid_task_id
from probegate.store.migrate import head_revision
from probegate.store.models import Exchange, ProbeCall, Run, WorldState, new_id
from probegate.store.redaction import redact_values

FORMAT = "probegate-bundle"
VERSION = 1
KINDS: dict[str, type[SQLModel]] = {
    "run": Run,
    "exchange": Exchange,
    "probe_call": ProbeCall,
    "world_state": WorldState,
}


class BundleError(UsageError):
    """A bundle that cannot be imported (newer, truncated, corrupted, clashing)."""


def _encode(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"__b64__": base64.b64encode(value).decode()}
    if isinstance(value, datetime):
        return {"__dt__": value.isoformat()}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and len(value) == 1:
        if "__b64__" in value:
            return base64.b64decode(value["__b64__"])
        if "__dt__" in value:
            return datetime.fromisoformat(value["__dt__"])
    return value


def _row_json(row: SQLModel, redactor: Redactor) -> dict[str, Any]:
    return {k: _encode(v) for k, v in redact_values(row.model_dump(), redactor).items()}


@dataclass(frozen=True)
class BundleSummary:
    """What an export wrote or an import loaded."""

    run: str
    counts: dict[str, int]
    path: Path | None = None


def export_run(
    engine: Engine,
    run_id: str,
    path: Path,
    *,
    task_snapshot: dict[str, Any] | None = None,
    redactor: Redactor = SECRETS,
) -> BundleSummary:
    """Write ``run_id`` and everything recorded under it to ``path``.

    Args:
        engine: the store.
        run_id: the run to export (exchanges recorded without a ``Run`` row, such as
            ``adhoc``, are exported with a minimal run row).
        path: the bundle file to write (gzip JSON lines).
        task_snapshot: a task set snapshot to store with the run when it has none.
        redactor: scrubs every row on the way out (secrets always, whatever the
            store holds; PII and the user's own patterns when asked).

    Raises:
        UsageError: nothing is recorded under ``run_id``.
    """
    from probegate import __version__

    with Session(engine) as session:
        run = session.get(Run, run_id)
        rows: dict[str, list[SQLModel]] = {
            kind: list(session.exec(select(model).where(model.run_id == run_id)).scalars())  # type: ignore[attr-defined]
            for kind, model in KINDS.items()
            if kind != "run"
        }
    if run is None and not any(rows.values()):
        raise UsageError(f"nothing is recorded under run {run_id!r}")
    run = run or Run(id=run_id, status="done")
    if task_snapshot is not None and not (run.params or {}).get("task_snapshot"):
        run = Run.model_validate({**run.model_dump(), "params": {**(run.params or {}), "task_snapshot": task_snapshot}})
    header = {"format": FORMAT, "version": VERSION, "probegate": __version__, "schema": head_revision(), "run": run_id}
    digest = hashlib.sha256()
    counts: Counter[str] = Counter()
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as out:
        def emit(obj: dict[str, Any]) -> None:
            line = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
            digest.update(line.encode())
            out.write(line)

        emit(header)
        emit({"kind": "run", "row": _row_json(run, redactor)})
        counts["run"] += 1
        for kind, items in rows.items():
            for row in items:
                emit({"kind": kind, "row": _row_json(row, redactor)})
                counts[kind] += 1
        out.write(json.dumps({"kind": "end", "counts": dict(counts), "sha256": digest.hexdigest()}) + "\n")
    return BundleSummary(run_id, dict(counts), path)


def read_bundle(path: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """Read and check a whole bundle; returns ``(header, [(kind, row), ...])``.

    Raises:
        BundleError: not a bundle, a newer format, truncated or corrupted.
    """
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            lines = fh.readlines()
    except FileNotFoundError:
        raise BundleError(f"no bundle at {path}") from None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise BundleError(f"{path} is truncated or not a probegate bundle ({exc})") from None
    if not lines:
        raise BundleError(f"{path} is empty")
    header = _json_line(path, lines[0], 1)
    if header.get("format") != FORMAT:
        raise BundleError(f"{path} is not a probegate bundle")
    version = header.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise BundleError(
            f"{path} has bundle format version {version}, newer than this probegate understands "
            f"({VERSION}); upgrade probegate to import it"
        )
    end = _json_line(path, lines[-1], len(lines))
    if end.get("kind") != "end":
        raise BundleError(f"{path} is truncated: its end record is missing")
    digest = hashlib.sha256("".join(lines[:-1]).encode()).hexdigest()
    if digest != end.get("sha256"):
        raise BundleError(f"{path} is corrupted: its checksum does not match")
    records = [_json_line(path, line, i) for i, line in enumerate(lines[1:-1], start=2)]
    items = [(r.get("kind", ""), {k: _decode(v) for k, v in (r.get("row") or {}).items()}) for r in records]
    counts = Counter(kind for kind, _ in items)
    if dict(counts) != end.get("counts") or any(kind not in KINDS for kind in counts):
        raise BundleError(f"{path} is corrupted: its records do not match its end record")
    return header, items


def _json_line(path: Path, line: str, number: int) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        raise BundleError(f"{path} is corrupted: line {number} is not JSON") from None
    if not isinstance(value, dict):
        raise BundleError(f"{path} is corrupted: line {number} is not a JSON object")
    return value


def import_bundle(engine: Engine, path: Path, *, rename: str | None = None) -> BundleSummary:
    """Load a bundle into ``engine``'s store, all or nothing.

    Args:
        engine: the target store (SQLite or PostgreSQL).
        path: the bundle.
        rename: import the run under this id instead (``--as``).

    Raises:
        BundleError: the bundle is unusable, or its run id already exists in the store.
    """
    header, items = read_bundle(path)
    run_id = rename or header.get("run")
    if not valid_id(run_id):
        raise BundleError(f"{path} names run {run_id!r}, which is not a usable run id ({RULE}); "
                          "import it under another id with --as NEW_ID")
    bad = sorted({str(row.get("task_id")) for kind, row in items if kind != "run" and not valid_task_id(row.get("task_id"))})
    if bad:
        raise BundleError(f"{path} holds task id(s) that are not usable ({RULE}): {', '.join(map(repr, bad[:5]))}")
    with Session(engine) as session:
        if session.get(Run, run_id) is not None:
            hint = "" if rename else " (import it under another id with --as NEW_ID)"
            raise BundleError(f"the store already holds run {run_id!r}{hint}")
        by_kind: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
        for kind, row in items:
            row = {**row, ("id" if kind == "run" else "run_id"): run_id}
            by_kind[kind].append(row)
        for kind in ("exchange", "probe_call"):
            _fresh_ids(session, KINDS[kind], by_kind[kind])
        for kind, model in KINDS.items():
            if by_kind[kind]:
                values = [redact_values(model.model_validate(row).model_dump()) for row in by_kind[kind]]
                session.execute(insert(model), values)
        session.commit()
    return BundleSummary(run_id, {k: len(v) for k, v in by_kind.items() if v})


def _fresh_ids(session: Session, model: type[SQLModel], rows: list[dict[str, Any]]) -> None:
    ids = [row["id"] for row in rows]
    taken: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        taken.update(session.exec(select(model.id).where(model.id.in_(chunk))).scalars())  # type: ignore[attr-defined]
    for row in rows:
        if row["id"] in taken:
            row["id"] = new_id()
