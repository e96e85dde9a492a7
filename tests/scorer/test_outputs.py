"""summary.json, scores.csv and trace files: shapes, stability, stale files."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from probegate.scorer.report.metrics import AttemptResult
from probegate.scorer.report.outputs import CSV_COLUMNS, write_outputs
from probegate.scorer.rebuild.rows import RunInfo
from probegate.scorer.judge.task_score import task_scorer
from probegate.scorer.report.summary import RunScore, stable
from probegate.scorer.trajectory import TRACE_VERSION, Trajectory
from probegate.tasks.loader import Task
from tests.scorer.rowkit import AttemptBuilder, play


def _run_score(task_by_id: dict[str, Task], attempts: int) -> RunScore:
    score = task_scorer()
    task = task_by_id["weather-berlin"]
    results = []
    for attempt in range(attempts):
        calls = [("get_weather", {"city": "Berlin"})] if attempt % 2 == 0 else []
        t = play(task, calls, "It is cloudy.", builder=AttemptBuilder(task=task.id, attempt=attempt))
        results.append(AttemptResult(task, t, score(t, task)))
    return RunScore(RunInfo("r1", "tasks", "fc", "m"), "tasks", tuple(results), missing_tasks=("email-jonas",))


def test_files_and_shapes(task_by_id: dict[str, Task], tmp_path: Path) -> None:
    paths = write_outputs(_run_score(task_by_id, 3), tmp_path / "r1")
    summary = json.loads(paths["summary"].read_text())
    assert summary["version"] == 2 and list(summary) == sorted(summary)
    assert summary["headline"] == {"attempts": 3, "passed": 2, "reach": 1.0, "repeats": 3, "tasks": 1, "interop_attempts": 0,
                                   "served_attempts": 3, "reach_served": 0.666667, "valid": True, "invalid_reason": None}
    assert summary["validity"] == {"valid": True, "attempts": 3, "interop_attempts": 0, "interop_share": 0.0, "max_interop": 0.1, "reason": None}
    assert summary["coverage"] == {"missing_tasks": ["email-jonas"], "unknown_tasks": []}
    assert summary["tasks"]["weather-berlin"]["pass_hat_k"] == {"1": 0.666667, "2": 0.333333, "3": 0.0}
    assert summary["failures"]["stages"] == {"first_action": 1}
    rows = list(csv.DictReader(io.StringIO(paths["scores"].read_text())))
    assert tuple(rows[0]) == CSV_COLUMNS and [r["passed"] for r in rows] == ["1", "0", "1"]
    assert rows[1]["labels"] == "fake_completion;premature_finish" and rows[1]["stage"] == "first_action"
    trace = json.loads((paths["traces"] / "weather-berlin-1.json").read_text())
    assert set(trace) == {"version", "task", "trajectory", "score"}
    assert trace["task"]["expected_actions"][0]["tool"] == "get_weather"
    assert Trajectory.model_validate(trace["trajectory"]).version == TRACE_VERSION
    assert trace["score"]["attributions"][0]["rule"] == "fake_completion.unsupported_answer"


def test_stale_traces_are_removed(task_by_id: dict[str, Task], tmp_path: Path) -> None:
    write_outputs(_run_score(task_by_id, 3), tmp_path / "r1")
    paths = write_outputs(_run_score(task_by_id, 1), tmp_path / "r1")
    assert sorted(p.name for p in paths["traces"].iterdir()) == ["weather-berlin-0.json"]


def test_stable_rounds_and_sorts() -> None:
    assert stable({"b": 1 / 3, "a": [-0.0000001, {"z": 1, "y": 2}]}) == {"a": [0.0, {"y": 2, "z": 1}], "b": 0.333333}
