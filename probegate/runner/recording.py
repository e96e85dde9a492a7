"""What the runner does with a finished attempt, whichever executor ran it.

The coordinator (the process that ran ``probegate run``) is the only writer of the
run's ``params``: each finished attempt is stored there, judged, stored again with
its verdict, and shown. Executors call :meth:`Recorder.record` from the thread that
drives them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from sqlalchemy.engine import Engine

from probegate.runner.attempt import AttemptOutcome
from probegate.runner.runs import update_run
from probegate.runner.scoring import AttemptJudge, ScoreOutcome
from probegate.tasks.loader import Task


class RunEvents(Protocol):
    """What the runner tells its display (the CLI's progress view, :mod:`probegate.cli.progress`)."""

    def run_started(self, run_id: str, total: int) -> None: ...
    def attempt_started(self, task_id: str, attempt: int) -> None: ...
    def attempt_finished(self, outcome: AttemptOutcome) -> None: ...


class SilentEvents:
    """A :class:`RunEvents` that shows nothing."""

    def run_started(self, run_id: str, total: int) -> None:
        """Ignored."""

    def attempt_started(self, task_id: str, attempt: int) -> None:
        """Ignored."""

    def attempt_finished(self, outcome: AttemptOutcome) -> None:
        """Ignored."""


@dataclass
class RunReport:
    """What a run did.

    Attributes:
        run_id: the run.
        status: ``done``, ``interrupted`` or ``failed``.
        outcomes: every finished attempt, in finishing order.
        score: the scorer's result (and report path), or why there is none.
    """

    run_id: str
    status: str
    outcomes: list[AttemptOutcome] = field(default_factory=list)
    score: ScoreOutcome | None = None


def _nothing_to_drain() -> None:
    return None


@dataclass
class Recorder:
    """Records finished attempts (one thread only): judged, stored in the run's params, shown.

    ``drain`` waits until the attempt's captures are committed (the local gateway's
    writer); a distributed worker commits them before it reports the attempt done.
    """

    engine: Engine
    run_id: str
    params: dict[str, Any]
    judge: AttemptJudge
    events: RunEvents
    report: RunReport
    drain: Callable[[], object] = _nothing_to_drain

    def record(self, task: Task, outcome: AttemptOutcome, *, judge: bool = True) -> None:
        """Store, judge (unless ``judge`` is false), store the verdict, show."""
        # stored before judging: an answer given off the wire (code, cmd:) is part of
        # what the scorer reads
        self._store(outcome)
        if judge:
            self.drain()
            outcome = replace(outcome, passed=self.judge.passed(task, outcome.attempt))
            self._store(outcome)
        self.report.outcomes.append(outcome)
        self.events.attempt_finished(outcome)

    def _store(self, outcome: AttemptOutcome) -> None:
        self.params["outcomes"][outcome.key] = outcome.to_json()
        update_run(self.engine, self.run_id, params={**self.params, "outcomes": dict(self.params["outcomes"])})
