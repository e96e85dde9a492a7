"""A large synthetic run for the scorer benchmark, shaped like a real function-calling agent's.

Every task of a task set gets its reference plan and each applicable mutation
(:mod:`probegate.scorer.selftest.mutations`), padded at the front with read-only look-ups until the
attempt makes ``exchanges - 1`` calls (an agent that looks around before it acts).
Each such *template* is played once by the real :class:`probegate.scorer.selftest.scripted.ScriptedAgent`
through the real probe service into a scratch store, so its exchange, probe-call and
world-state rows are exactly what a live fc run leaves. The target store then gets
``attempts`` attempts, cycling through the templates, copied row by row with new ids
and attempt numbers in bulk ``INSERT``s (a few seconds per 100,000 exchanges).
"""

from __future__ import annotations

import itertools
import json
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlalchemy import Table, insert, select
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel

from probegate.store import CaptureWriter, Run, new_id, open_store, utcnow
from probegate.scorer.selftest.mutations import Plan, PlannedCall
from probegate.scorer.selftest.scripted import ScriptedAgent
from probegate.scorer.selftest.suite import read_only_tools, scripted_subagent, plans_for
from probegate.tasks.loader import Task, TaskSet, load_task_set

TEMPLATE_RUN = "template"
CHECK_RUN = "lookup-check"
#: The tables an attempt's rows live in (the Run row is written once per run).
TABLES = ("exchange", "probecall", "worldstate")
Rows = dict[str, list[dict[str, Any]]]  # table name -> rows of one attempt


@dataclass(frozen=True)
class Template:
    """One played attempt: its task, plan name and rows (keyed by table name)."""

    task_id: str
    plan: str
    rows: Rows

    @property
    def exchanges(self) -> int:
        """Exchange rows of this attempt."""
        return len(self.rows["exchange"])


def _schema_keys(tool: str) -> tuple[set[str], set[str]]:
    from probegate.probes.catalog import CATALOG

    params = CATALOG[tool].parameters
    return set(params.get("properties", {})), set(params.get("required", []))


def candidate_lookups(task: Task, reference: Plan, read_only: set[str]) -> list[PlannedCall]:
    """Read-only calls an agent could make while looking around: the reference's own
    read-only calls, then each offered read-only tool called with the arguments the
    task's expected actions supply (when they cover its required ones)."""
    known: dict[str, Any] = {}
    for action in task.expected_actions:
        known.update({k: v for k, v in action.args.items() if k not in known})
    found = [c for c in reference.calls if c.tool in read_only]
    for tool in (t for t in task.tools if t in read_only):
        props, required = _schema_keys(tool)
        args = {k: v for k, v in known.items() if k in props}
        if required <= set(args):
            found.append(PlannedCall(tool, args))
    unique: dict[str, PlannedCall] = {}
    for call in found:
        unique.setdefault(f"{call.tool} {json.dumps(call.args, sort_keys=True)}", call)
    return list(unique.values())


def working_lookups(service: Any, task: Task, candidates: list[PlannedCall]) -> list[PlannedCall]:
    """The candidates the probe answers with 200 in a fresh attempt of ``task``."""
    ok = []
    for n, call in enumerate(candidates):
        service.reset(CHECK_RUN, task.id, n, world=task.world, world_patch=task.world_patch or None, tools=task.tools)
        if service.call(CHECK_RUN, task.id, n, call.tool, json.dumps(call.args).encode()).status_code == 200:
            ok.append(call)
    return ok


def padded(plan: Plan, lookups: list[PlannedCall], calls: int) -> Plan:
    """``plan`` with look-ups in front (cycling, never the same call twice in a row,
    which the scorer would rightly call a loop) until it makes ``calls`` calls."""
    pads: list[PlannedCall] = []
    for call in itertools.islice(itertools.cycle(lookups), max(0, calls - len(plan.calls))):
        if pads and pads[-1] == call:
            break
        pads.append(call)
    if pads and plan.calls and pads[-1] == plan.calls[0]:
        pads.pop()
    return replace(plan, calls=tuple(pads) + plan.calls)


def _table(name: str) -> Table:
    return SQLModel.metadata.tables[name]


def _read_rows(engine: Engine, run_id: str) -> dict[tuple[str, int], Rows]:
    grouped: dict[tuple[str, int], Rows] = defaultdict(lambda: {name: [] for name in TABLES})
    with engine.connect() as conn:
        for name in TABLES:
            table = _table(name)
            for row in conn.execute(select(table).where(table.c.run_id == run_id)).mappings():
                grouped[(row["task_id"], row["attempt"])][name].append(dict(row))
    return grouped


def play_templates(tasks: TaskSet, calls: int) -> list[Template]:
    """Play every task's reference and mutations, padded to ``calls`` calls, into a scratch store."""
    from probegate.probes.service import ProbeService

    read_only = read_only_tools()
    names: dict[tuple[str, int], str] = {}
    with tempfile.TemporaryDirectory(prefix="probegate-bench-") as tmp:
        engine = open_store(f"sqlite:///{Path(tmp) / 'templates.db'}")
        writer = CaptureWriter(engine).start()
        try:
            agent = ScriptedAgent(ProbeService(writer, subagent=scripted_subagent), writer)
            for task in tasks.tasks:
                plans = [p for p in plans_for(task, read_only) if p.skipped is None]
                lookups = working_lookups(agent.service, task, candidate_lookups(task, plans[0], read_only))
                for attempt, plan in enumerate(plans):
                    names[(task.id, attempt)] = plan.name
                    agent.play(TEMPLATE_RUN, task, attempt, padded(plan, lookups, calls))
            writer.flush()
        finally:
            writer.close()
        rows = _read_rows(engine, TEMPLATE_RUN)
        engine.dispose()
    return [Template(key[0], names.get(key, "?"), rows[key]) for key in sorted(rows)]


def copies(templates: list[Template], attempts: int, run_id: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(table, row)`` for ``attempts`` attempts cycling through ``templates``; each
    copy gets new ids, the run id and the next attempt number of its task."""
    next_attempt: dict[str, int] = defaultdict(int)
    for template in itertools.islice(itertools.cycle(templates), attempts):
        attempt = next_attempt[template.task_id]
        next_attempt[template.task_id] += 1
        for table, rows in template.rows.items():
            for row in rows:
                copy = {**row, "run_id": run_id, "attempt": attempt}
                if "id" in copy:
                    copy["id"] = new_id()
                yield table, copy


def insert_copies(engine: Engine, templates: list[Template], attempts: int, run_id: str, batch: int = 2000) -> dict[str, int]:
    """Bulk-insert the copies; returns rows written per table."""
    tables = {name: _table(name) for name in TABLES}
    counts: dict[str, int] = defaultdict(int)
    pending: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with engine.begin() as conn:
        for table, row in copies(templates, attempts, run_id):
            pending[table].append(row)
            if len(pending[table]) >= batch:
                conn.execute(insert(tables[table]), pending[table])
                counts[table] += len(pending.pop(table))
        for table, rows in pending.items():
            conn.execute(insert(tables[table]), rows)
            counts[table] += len(rows)
    return dict(counts)


def calibrated_templates(tasks: TaskSet, exchanges: int, tries: int = 4) -> list[Template]:
    """Templates whose mean exchange count is within a quarter exchange of ``exchanges``
    (or as close as ``tries`` rounds of padding get: short tasks offer few look-ups)."""
    calls = exchanges - 1
    templates = play_templates(tasks, calls)
    for _ in range(tries):
        mean = sum(t.exchanges for t in templates) / len(templates)
        if mean >= exchanges - 0.25:
            break
        calls += max(1, round(exchanges - mean))
        templates = play_templates(tasks, calls)
    return templates


def build_run(engine: Engine, attempts: int, exchanges: int = 10, task_set: str = "default",
              run_id: str = "bench") -> dict[str, Any]:
    """Write a synthetic run of ``attempts`` attempts of about ``exchanges`` exchanges each.

    Args:
        engine: the target store (the run must not exist in it yet).
        attempts: task attempts to write.
        exchanges: mean exchanges per attempt to aim at.
        task_set: the task set whose tasks are played (name or folder).
        run_id: the run id to write.

    Returns:
        ``{"templates", "attempts", "rows": {table: count}, "exchanges_per_template"}``.

    Raises:
        TaskSetError: the task set cannot be loaded.
    """
    tasks = load_task_set(task_set)
    templates = calibrated_templates(tasks, exchanges)
    with engine.begin() as conn:
        conn.execute(insert(_table("run")), [Run(id=run_id, task_set=task_set, harness="fc", model="synthetic",
                                                  status="done", created_at=utcnow()).model_dump()])
    counts = insert_copies(engine, templates, attempts, run_id)
    sizes = sorted(t.exchanges for t in templates)
    return {"templates": len(templates), "attempts": attempts, "rows": counts,
            "exchanges_per_template": {"min": sizes[0], "median": sizes[len(sizes) // 2], "max": sizes[-1]}}
