"""What the scorer takes from the run itself: the task snapshot and reported answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from probegate.errors import TaskSetError
from probegate.scorer.pipeline import resolve_task_set
from probegate.scorer.rebuild.build import _with_reported_answer
from probegate.scorer.rebuild.rows import RunInfo
from probegate.scorer.trajectory import Trajectory
from probegate.tasks.loader import TaskSet, load_task_set

TASKS = str(Path(__file__).resolve().parents[1] / "harnesses" / "tasks")


def test_snapshot_roundtrip_and_precedence() -> None:
    task_set = load_task_set(TASKS)
    snapshot = task_set.snapshot(task_set.tasks[:1])
    rebuilt = TaskSet.from_snapshot(snapshot)
    assert rebuilt.tasks == task_set.tasks[:1]
    run = RunInfo("r", task_set="/gone/away", params={"task_snapshot": snapshot})
    assert resolve_task_set(run, None).tasks == task_set.tasks[:1]  # files not needed
    assert resolve_task_set(run, TASKS).tasks == task_set.tasks  # an explicit set wins


def test_invalid_snapshot_is_a_task_set_error() -> None:
    with pytest.raises(TaskSetError, match="task snapshot is invalid"):
        TaskSet.from_snapshot({"tasks": [{"id": "x"}]})


@pytest.mark.parametrize(
    ("wire", "outcomes", "answer", "source"),
    [
        ("print(42)", {"t/0": {"final_answer": "42"}}, "42", "harness"),
        ("The answer is 42.", {}, "The answer is 42.", "wire"),
        ("same", {"t/0": {"final_answer": "same"}}, "same", "wire"),
        ("wire text", {"t/0": {"final_answer": "  "}}, "wire text", "wire"),
        (None, {"t/1": {"final_answer": "other attempt"}}, None, "wire"),
    ],
)
def test_reported_answer(wire, outcomes, answer, source) -> None:
    trajectory = Trajectory(run_id="r", task_id="t", attempt=0, final_answer=wire)
    result = _with_reported_answer(trajectory, {"outcomes": outcomes})
    assert (result.final_answer, result.answer_source) == (answer, source)


def test_shims_come_from_the_exchanges_compat_records() -> None:
    from probegate.store.models import Exchange
    from probegate.scorer.rebuild.build import _record

    ex = Exchange(run_id="r", task_id="t", seq=0, compat=[
        {"rule": "null-content", "path": "messages[1].content"}, {"rule": "replay", "source": "X"},
        {"rule": "null-content", "path": "messages[3].content"}, {"rule": "cap-max-length"}])
    assert _record(ex, 0, {}).shims == ["cap-max-length", "null-content"]
    assert _record(Exchange(run_id="r", task_id="t"), 0, {}).shims == []
