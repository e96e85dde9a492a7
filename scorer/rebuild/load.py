"""Reading a run's rows from the capture store: the scorer's only I/O with the database.

Large columns the scorer never reads (raw bytes, SSE events, chunk timings,
headers) are deferred, so loading a long run stays cheap on PostgreSQL too. When a
stored value cannot be decoded (SQLite holds any text in a JSON or date column),
the rows are read again value by value (:mod:`probegate.scorer.rebuild.salvage`) and the problems
travel with them as warnings.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import and_
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import defer
from sqlmodel import Session, col, select

from probegate.errors import StoreError, UsageError
from probegate.store.models import Exchange, ProbeCall, Run, WorldState
from probegate.scorer.rebuild.mcp_calls import PROXY_PREFIX
from probegate.scorer.rebuild.rows import AttemptRows, RunInfo
from probegate.scorer.rebuild.salvage import salvage
from probegate.scorer.trajectory import CallSource

_DEFERRED: tuple[Any, ...] = (
    Exchange.request_raw,
    Exchange.response_raw,
    Exchange.sse_events,
    Exchange.chunks,
    Exchange.request_original,
)

Key = tuple[str, int]


def _run_info(run: Run, warnings: tuple[str, ...] = ()) -> RunInfo:
    params = run.params if isinstance(run.params, dict) else {}
    if run.params is not None and not isinstance(run.params, dict):
        warnings += (f"run {run.id}: params is not an object",)
    try:
        wall_s = (run.finished_at - run.created_at).total_seconds() if run.finished_at and run.created_at else None
    except TypeError:  # naive against aware, from a hand-edited row
        wall_s = None
    return RunInfo(run.id, run.task_set, run.harness, run.model, run.status, params, warnings, wall_s)


def load_run(engine: Engine, run_id: str) -> RunInfo:
    """The run's fields.

    Raises:
        UsageError: there is no such run and no capture for it.
        StoreError: the store cannot be read.
    """
    try:
        with Session(engine) as session:
            try:
                run = session.get(Run, run_id)
            except ValueError:  # a value SQLite holds but the ORM cannot decode
                session.rollback()
                runs, problems = salvage(session, Run, Run.id == run_id)
                return _run_info(runs[0], tuple(p for _, p in problems))
            if run is not None:
                return _run_info(run)
            seen = session.exec(select(Exchange.id).where(Exchange.run_id == run_id).limit(1)).first()
            seen = seen or session.exec(select(ProbeCall.id).where(ProbeCall.run_id == run_id).limit(1)).first()
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot read run {run_id!r} from the store: {exc}") from exc
    if seen is None:
        raise UsageError(f"no run {run_id!r} in this store (pass --store; `probegate captures list` shows what it holds)")
    return RunInfo(run_id)


def load_attempts(engine: Engine, run_id: str, task_id: str | None = None, attempt: int | None = None) -> dict[Key, AttemptRows]:
    """Every attempt of a run (or one task / attempt), keyed by ``(task_id, attempt)``.

    Attempts are the union of what the store holds: exchanges, probe calls and world
    states. Rows are sorted by ``seq``; rows marked superseded are not read.

    Raises:
        StoreError: the store cannot be read.
    """
    try:
        with Session(engine) as session:
            try:
                grouped = _read(session, run_id, task_id, attempt)
            except ValueError:  # a value SQLite holds but the ORM cannot decode: read value by value
                session.rollback()
                grouped = _salvaged(session, run_id, task_id, attempt)
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot read the captures of run {run_id!r}: {exc}") from exc
    return {
        key: AttemptRows(run_id, key[0], key[1], tuple(v["exchanges"]), tuple(v["probe_calls"]), v["state"], v["world"],
                         tuple(v["warnings"]))
        for key, v in sorted(grouped.items())
    }


def _groups() -> defaultdict[Key, dict[str, Any]]:
    return defaultdict(lambda: {"exchanges": [], "probe_calls": [], "world": None, "state": None, "warnings": []})


def _read(session: Session, run_id: str, task_id: str | None, attempt: int | None) -> dict[Key, dict[str, Any]]:
    grouped = _groups()
    proxied = col(Exchange.path).startswith(PROXY_PREFIX)
    exchanges = select(Exchange).options(*(defer(c) for c in _DEFERRED)).where(~proxied)
    # the MCP proxy's exchanges keep their SSE events: the tool results are in them
    proxy = select(Exchange).options(*(defer(c) for c in _DEFERRED if c is not Exchange.sse_events)).where(proxied)
    for query in (exchanges, proxy):
        for ex in session.exec(_where(query, Exchange, run_id, task_id, attempt)):
            grouped[(ex.task_id, ex.attempt)]["exchanges"].append(ex)
    for group in grouped.values():  # as SQL orders them: numbers first, then anything a damaged store holds
        group["exchanges"].sort(key=lambda row: (0, row.seq, "") if isinstance(row.seq, int) else (1, 0, str(row.seq)))
    for call in session.exec(_where(select(ProbeCall), ProbeCall, run_id, task_id, attempt).order_by(col(ProbeCall.seq))):
        grouped[(call.task_id, call.attempt)]["probe_calls"].append(call)
    for ws in session.exec(_where(select(WorldState), WorldState, run_id, task_id, attempt)):
        grouped[(ws.task_id, ws.attempt)].update(world=ws.world, state=ws.state)
    return grouped


def _salvaged(session: Session, run_id: str, task_id: str | None, attempt: int | None) -> dict[Key, dict[str, Any]]:
    grouped = _groups()
    for model, key in ((Exchange, "exchanges"), (ProbeCall, "probe_calls"), (WorldState, None)):
        rows, problems = salvage(session, model, _where(True, model, run_id, task_id, attempt))
        for row in rows:
            group = grouped[(row.task_id, row.attempt)]
            if key is None:
                group.update(world=row.world, state=row.state)
            else:
                group[key].append(row)
        for row, problem in problems:
            grouped[(row.task_id, row.attempt)]["warnings"].append(problem)
    for group in grouped.values():  # the order the normal read gives
        for key in ("exchanges", "probe_calls"):
            group[key].sort(key=lambda row: row.seq if isinstance(row.seq, int) else 0)
    return grouped


def _where(query: Any, table: Any, run_id: str, task_id: str | None, attempt: int | None) -> Any:
    """``query`` filtered to the run (and task, attempt); ``query=True`` gives the bare condition.

    Exchanges and probe calls of a delivery that was superseded (its worker was lost and
    the attempt ran again) are left out, so the attempt counts once."""
    conditions = [table.run_id == run_id]
    if hasattr(table, "superseded"):
        conditions.append(table.superseded.is_not(True))
    if task_id is not None:
        conditions.append(table.task_id == task_id)
    if attempt is not None:
        conditions.append(table.attempt == attempt)
    return and_(*conditions) if query is True else query.where(*conditions)


def run_call_source(engine: Engine, run_id: str) -> CallSource:
    """Where a run's actual calls come from (:data:`~probegate.scorer.trajectory.CallSource`).

    ``probes`` when a probe call is recorded; else ``mcp-proxy`` when the agent's
    traffic went through the MCP recording proxy (``/mcp/{name}`` exchanges); else
    ``probes`` when a world state was (the attempts were reset, so calls would have
    reached probes); else ``steps``.
    """
    with Session(engine) as session:
        if session.exec(select(ProbeCall.id).where(ProbeCall.run_id == run_id).limit(1)).first() is not None:
            return "probes"
        proxied = select(Exchange.id).where(Exchange.run_id == run_id, col(Exchange.path).startswith(PROXY_PREFIX))
        if session.exec(proxied.limit(1)).first() is not None:
            return "mcp-proxy"
    return "probes" if run_uses_probes(engine, run_id) else "steps"


def run_uses_probes(engine: Engine, run_id: str) -> bool:
    """Whether the run used probes: a probe call or a world state (written on every
    attempt reset) is recorded. Only runs without either are scored from step calls,
    so an agent that never managed to call a tool gets no credit for calls it wrote.
    """
    with Session(engine) as session:
        if session.exec(select(ProbeCall.id).where(ProbeCall.run_id == run_id).limit(1)).first() is not None:
            return True
        return session.exec(select(WorldState.task_id).where(WorldState.run_id == run_id).limit(1)).first() is not None
