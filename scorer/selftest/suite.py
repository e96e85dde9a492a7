"""The grader self-test: every task's reference must pass, every mutation must fail
with the right label (docs/metrics.md §10).

Plans are played through the real probes into a temporary SQLite store, then scored
from that store by :func:`probegate.scorer.pipeline.score_run`, the same path a live run takes.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from probegate.store import CaptureWriter, new_id, open_store
from probegate.scorer.pipeline import score_run
from probegate.scorer.selftest.mutations import Plan, mutations, reference_plan
from probegate.scorer.selftest.scripted import ScriptedAgent
from probegate.tasks.loader import Task, TaskSet, load_task_set

RUN_ID = "selftest"


@dataclass(frozen=True)
class SelftestCase:
    """The verdict on one plan of one task.

    Attributes:
        task_id: the task.
        plan: ``reference`` or the mutation name.
        ok: the grader behaved (reference passed; mutation failed with an expected label).
        value: the score (``None`` when skipped).
        labels: the labels the grader gave.
        expected: labels one of which was required (mutations).
        problem: what went wrong when not ``ok``.
        skipped: why the mutation does not apply.
    """

    task_id: str
    plan: str
    ok: bool
    value: float | None = None
    labels: tuple[str, ...] = ()
    expected: tuple[str, ...] = ()
    problem: str | None = None
    skipped: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form."""
        return {
            "task": self.task_id,
            "plan": self.plan,
            "ok": self.ok,
            "value": self.value,
            "labels": list(self.labels),
            "expected": list(self.expected),
            "problem": self.problem,
            "skipped": self.skipped,
        }


@dataclass(frozen=True)
class SelftestReport:
    """Every case of a self-test run."""

    task_set: str
    cases: tuple[SelftestCase, ...]
    run_id: str | None = None

    @property
    def ok(self) -> bool:
        """Every case behaved."""
        return all(c.ok for c in self.cases)

    def failures(self) -> list[SelftestCase]:
        """The cases that did not behave."""
        return [c for c in self.cases if not c.ok]

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form."""
        ran = [c for c in self.cases if c.skipped is None]
        return {
            "task_set": self.task_set,
            "run_id": self.run_id,
            "ok": self.ok,
            "cases": len(ran),
            "skipped": len(self.cases) - len(ran),
            "failures": [c.to_json() for c in self.failures()],
            "results": [c.to_json() for c in self.cases],
        }


def plans_for(task: Task, read_only_tools: set[str]) -> list[Plan]:
    """The reference plan of ``task`` followed by its mutations."""
    reference = reference_plan(task)
    return [reference, *mutations(task, reference, read_only_tools)]


def _problem(plan: Plan, value: float, passed: bool, labels: list[str], explanation: str) -> str | None:
    if plan.name == "reference":
        return None if passed and value == 1.0 else f"the reference scored {value:.3f}: {explanation}"
    if value >= 1.0 or passed:
        return f"the mutation scored {value:.3f}: the grader missed it"
    if not set(labels) & plan.expect_labels:
        return f"labelled {labels or 'nothing'}, expected one of {sorted(plan.expect_labels)}"
    return None


def _verdict(task: Task, plan: Plan, value: float, passed: bool, labels: list[str], explanation: str) -> SelftestCase:
    problem = _problem(plan, value, passed, labels, explanation)
    return SelftestCase(
        task.id, plan.name, ok=problem is None, value=value, labels=tuple(labels),
        expected=tuple(sorted(plan.expect_labels)), problem=problem,
    )


def read_only_tools() -> set[str]:
    """Names of the catalogue's tools that change nothing (no side effect, not blocking)."""
    from probegate.probes.catalog import CATALOG

    return {name for name, tool in CATALOG.items() if tool.side_effect is None and not tool.blocking}


def scripted_subagent(request: Any) -> str:
    """The self-test's sub-agent: it accepts every delegated sub-task and reports back,
    so a reference ``delegate`` call succeeds (a failed delegation must not pass)."""
    return f"Done: {getattr(request, 'instruction', '')}"


def _play_all(engine: Engine, run_id: str, tasks: TaskSet) -> dict[tuple[str, int], tuple[Task, Plan]]:
    from probegate.probes.service import ProbeService

    read_only = read_only_tools()
    writer = CaptureWriter(engine).start()
    planned: dict[tuple[str, int], tuple[Task, Plan]] = {}
    try:
        agent = ScriptedAgent(ProbeService(writer, subagent=scripted_subagent), writer)
        agent.start_run(run_id, tasks.path, harness="selftest", model="reference")
        for task in tasks.tasks:
            for attempt, plan in enumerate(plans_for(task, read_only)):
                planned[(task.id, attempt)] = (task, plan)
                if plan.skipped is None:
                    agent.play(run_id, task, attempt, plan)
        writer.flush()
    finally:
        writer.close()
    return planned


def _judge(engine: Engine, run_id: str, tasks: TaskSet, planned: dict[tuple[str, int], tuple[Task, Plan]]) -> list[SelftestCase]:
    scored = score_run(engine, run_id, tasks.path)
    cases = []
    for (task_id, attempt), (task, plan) in planned.items():
        if plan.skipped is not None:
            cases.append(SelftestCase(task_id, plan.name, ok=True, skipped=plan.skipped))
            continue
        score = scored.result(task_id, attempt).score
        cases.append(_verdict(task, plan, score.value, score.passed, score.labels, score.explanation))
    return cases


def run_selftest(task_set: str = "default", store: str | None = None) -> SelftestReport:
    """Play and score every task's reference and mutations.

    Args:
        task_set: a task set name or folder.
        store: a store URL to play into (run id ``selftest-<ulid>``, kept for
            ``probegate trace``); default: a temporary SQLite store, deleted afterwards.

    Returns:
        The :class:`SelftestReport` (its ``run_id`` names the run played).

    Raises:
        TaskSetError: the task set cannot be loaded.
        StoreError: the store cannot be opened.
    """
    tasks = load_task_set(task_set)
    if store is not None:
        run_id = f"{RUN_ID}-{new_id()}"
        engine = open_store(store)
        try:
            cases = _judge(engine, run_id, tasks, _play_all(engine, run_id, tasks))
        finally:
            engine.dispose()
        return SelftestReport(tasks.name, tuple(cases), run_id)
    with tempfile.TemporaryDirectory() as tmp:
        engine = open_store(f"sqlite:///{Path(tmp) / 'selftest.db'}")
        try:
            cases = _judge(engine, RUN_ID, tasks, _play_all(engine, RUN_ID, tasks))
        finally:
            engine.dispose()
    return SelftestReport(tasks.name, tuple(cases), None)
