"""The runner's use of the scorer: judge each attempt as it ends, score the run at the end.

A scoring failure never fails the run: the run is complete in the store and can be
scored later with ``probegate score RUN``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from probegate import scorer
from probegate.ids import child_path
from probegate.tasks.loader import Task, TaskSet



@dataclass(frozen=True)
class ScoreOutcome:
    """The scorer's answer for a run.

    Attributes:
        run_score: what ``scorer.score_run`` returned (``None`` when not scored).
        report_dir: the folder ``scorer.write_outputs`` wrote.
        report_path: the HTML report, when one was written.
        error: why the run was not scored.
    """

    run_score: Any = None
    report_dir: Path | None = None
    report_path: Path | None = None
    error: str | None = None


def score_and_write(
    engine: Engine, run_id: str, task_set: TaskSet, output_dir: Path, max_interop: float = scorer.DEFAULT_MAX_INTEROP
) -> ScoreOutcome:
    """Score a run with ``scorer.score_run`` and write ``output_dir/run_id`` with
    ``scorer.write_outputs``; ``max_interop`` is the share of interop attempts above
    which the run is an invalid environment.

    Returns:
        A :class:`ScoreOutcome`; never raises for a missing or failing scorer (the
        run stays in the store, scorable later).
    """
    try:
        out = child_path(output_dir, run_id)
        run_score = replace(scorer.score_run(engine, run_id, task_set.path), max_interop=max_interop)
        written = scorer.write_outputs(run_score, out)
    except Exception as exc:  # the run itself succeeded; say why scoring did not
        why = f"scoring failed ({type(exc).__name__}: {exc}); retry with `probegate score {run_id}`"
        return ScoreOutcome(error=why)
    report = written.get("report") if isinstance(written, dict) else None
    return ScoreOutcome(run_score, out, Path(report) if report else None)


class AttemptJudge:
    """Scores single attempts as they end (the progress bar's passed / failed).

    Args:
        engine: the run's store (the attempt's captures must be committed).
        run_id: the run.
        task_set: the task set (its folder is handed to the scorer).
    """

    def __init__(self, engine: Engine, run_id: str, task_set: TaskSet) -> None:
        self.engine, self.run_id, self.task_set_path = engine, run_id, task_set.path
        self._score = scorer.task_scorer()

    def passed(self, task: Task, attempt: int) -> bool | None:
        """Whether the attempt passed; ``None`` when it cannot be judged (nothing
        recorded, a scorer error: the final scoring will say)."""
        try:
            trajectory = scorer.reconstruct(self.engine, self.run_id, task.id, attempt, self.task_set_path)
            return bool(self._score(trajectory, task).passed)
        except Exception:  # judging is a progress hint; the final score is authoritative
            return None
