"""The executor seam: what a run hands the part that runs its attempts.

An executor takes an :class:`AttemptPlan` (the run's settings, tasks, harness, store)
and a :class:`~probegate.runner.recording.Recorder`, runs every attempt somewhere,
hands each finished one to the recorder, and returns ``done`` or ``interrupted``.
The local executor runs them on a thread pool behind one in-process gateway; the
Celery executor enqueues one job per attempt for workers on any machine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from sqlalchemy.engine import Engine

from probegate.harnesses.base import Harness
from probegate.runner.recording import Recorder, RunEvents
from probegate.tasks.loader import Task

if TYPE_CHECKING:
    from probegate.runner.execute import RunConfig


@dataclass(frozen=True)
class AttemptPlan:
    """One run's attempts and everything needed to run them.

    Attributes:
        config: the run's options.
        tasks: the selected tasks.
        harness: the harness.
        run_id: the run.
        upstream: the model server's base URL (``None`` with an external gateway, or
            when distributed workers bring their own ``--model-endpoint``).
        engine: the run's store.
        ready: waits until the embedded model serves (``None`` otherwise).
    """

    config: RunConfig
    tasks: list[Task]
    harness: Harness
    run_id: str
    upstream: str | None
    engine: Engine
    ready: Callable[[], object] | None = None

    @property
    def work(self) -> list[tuple[Task, int]]:
        """Every ``(task, attempt)``, attempt-major: every task's attempt 0 first, so an
        interrupted run has the widest coverage."""
        return [(task, attempt) for attempt in range(self.config.repeats) for task in self.tasks]


class Executor(Protocol):
    """Runs a plan's attempts; returns ``done`` or ``interrupted`` (Ctrl-C)."""

    def drive(self, plan: AttemptPlan, recorder: Recorder, events: RunEvents) -> str: ...
