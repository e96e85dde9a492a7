"""The scorer's entry points over a store: rebuild and score whole runs.

This is the thin shell around the pure core: it loads rows (:mod:`probegate.scorer.rebuild.load`),
resolves the task set, and hands everything to :func:`probegate.scorer.rebuild.build.build_trajectory`
and the task scorer.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.engine import Engine

from probegate.errors import TaskSetError, UsageError
from probegate.scorer.rebuild.mcp_calls import proxy_calls
from probegate.scorer.rebuild.load import load_attempts, load_run, run_call_source
from probegate.scorer.report.metrics import AttemptResult
from probegate.scorer.rebuild.build import build_trajectory
from probegate.scorer.rebuild.rows import AttemptRows, RunInfo
from probegate.scorer.judge.task_score import TaskScorer, task_scorer
from probegate.scorer.report.summary import RunScore
from probegate.scorer.trajectory import CallSource, Trajectory
from probegate.store.models import ProbeCall
from probegate.tasks.loader import Task, TaskSet, load_task_set


def resolve_task_set(run: RunInfo, task_set: str | None) -> TaskSet:
    """The task set a run is scored against: ``task_set`` if given, else the snapshot
    the run stored of its tasks, else the set the run names.

    Raises:
        TaskSetError: the set cannot be found or is invalid.
    """
    snapshot = run.params.get("task_snapshot")
    if task_set is None and isinstance(snapshot, dict):
        return TaskSet.from_snapshot(snapshot)
    name = task_set or run.task_set
    if not name:
        raise TaskSetError(f"run {run.id!r} does not name its task set; pass --task-set")
    return load_task_set(name)


def _trajectory(rows: AttemptRows, run: RunInfo, task: Task | None, source: CallSource) -> Trajectory:
    return build_trajectory(
        rows,
        run,
        tools=task.tools if task else (),
        max_steps=task.max_steps if task else None,
        call_source=source,
    )


def reconstruct(engine: Engine, run_id: str, task_id: str, attempt: int = 0, task_set: str | None = None) -> Trajectory:
    """Rebuild one attempt's trajectory from the store.

    Args:
        engine: the capture store.
        run_id: the run.
        task_id: the task.
        attempt: the attempt number.
        task_set: the task set to read the task's tools from (default: the run's;
            when the run's cannot be loaded the trajectory is rebuilt without it).

    Raises:
        UsageError: no such run, or nothing recorded for that task attempt.
        TaskSetError: ``task_set`` was given and cannot be loaded.
        StoreError: the store cannot be read.
    """
    run = load_run(engine, run_id)
    rows = load_attempts(engine, run_id, task_id, attempt).get((task_id, attempt))
    if rows is None:
        raise UsageError(f"run {run_id!r} has no captures for task {task_id!r} attempt {attempt}")
    task: Task | None = None
    try:
        task = resolve_task_set(run, task_set).get(task_id)
    except TaskSetError:
        if task_set is not None:  # asked for by name: a broken or missing set is an error
            raise
    except KeyError:
        task = None
    return _trajectory(rows, run, task, run_call_source(engine, run_id))


def score_run(engine: Engine, run_id: str, task_set: str | None = None, scorer: TaskScorer | None = None) -> RunScore:
    """Rebuild and score every attempt of a run.

    Args:
        engine: the capture store.
        run_id: the run to score.
        task_set: task set name or path (default: the run's ``task_set``).
        scorer: the task scorer (default: :func:`probegate.scorer.judge.task_score.task_scorer`).

    Returns:
        The :class:`~probegate.scorer.report.summary.RunScore`; attempts of tasks the set lacks are
        listed in ``unknown_tasks`` and not scored.

    Raises:
        UsageError: no such run.
        TaskSetError: the task set cannot be loaded.
        StoreError: the store cannot be read.
    """
    run = load_run(engine, run_id)
    tasks = resolve_task_set(run, task_set)
    score = scorer or task_scorer()
    source = run_call_source(engine, run_id)
    known = {t.id: t for t in tasks.tasks}
    results: list[AttemptResult] = []
    unknown: set[str] = set()
    with _collector_paused():
        for (task_id, _attempt), rows in load_attempts(engine, run_id).items():
            task = known.get(task_id)
            if task is None:
                unknown.add(task_id)
                continue
            trajectory = _trajectory(rows, run, task, source)
            results.append(AttemptResult(task, trajectory, score(trajectory, task)))
    seen = {r.task_id for r in results}
    missing = tuple(sorted(t for t in known if t not in seen))
    return RunScore(run, tasks.name, tuple(results), missing, tuple(sorted(unknown)))


def mcp_proxy_calls(engine: Engine, run_id: str, task_id: str | None = None, attempt: int | None = None) -> list[ProbeCall]:
    """The tool calls an agent made to its own MCP servers through the recording proxy
    (``probegate serve --mcp-upstream``), as probe-call rows with door ``mcp-proxy``
    (never stored), by task, attempt and ``seq``.

    Raises:
        StoreError: the store cannot be read.
    """
    return [call for rows in load_attempts(engine, run_id, task_id, attempt).values() for call in proxy_calls(rows)]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a run is scored.

    Scoring allocates millions of short-lived containers while the whole run stays in
    memory, so full collections would re-walk it again and again: with the collector
    paused a large run scores about 1.8x faster (docs/benchmarks.md). Reference counting
    still frees everything acyclic meanwhile.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
