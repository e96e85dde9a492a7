"""Aggregate metrics: pass^k, spread, group figures (docs/metrics.md §7-§8)."""

from __future__ import annotations

from math import comb

import pytest

from probegate.scorer.report.metrics import (
    AttemptResult,
    group_metrics,
    pass_hat_k,
    repeat_metrics,
    spread,
)
from probegate.scorer.judge.task_score import task_scorer
from probegate.tasks.loader import Task
from tests.scorer.rowkit import AttemptBuilder, play

PASS_HAT = [
    (4, 4, 1, 1.0),
    (4, 4, 4, 1.0),
    (4, 2, 1, 0.5),
    (4, 2, 2, comb(2, 2) / comb(4, 2)),
    (4, 2, 3, 0.0),
    (5, 0, 1, 0.0),
    (1, 1, 1, 1.0),
]


@pytest.mark.parametrize(("n", "c", "k", "value"), PASS_HAT)
def test_pass_hat_k(n: int, c: int, k: int, value: float) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(value)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 1, 0), (3, 1, 4), (3, 4, 1)])
def test_pass_hat_k_refuses_impossible_inputs(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


def test_spread() -> None:
    assert spread([0.5, 1.0, 0.75]) == {"median": 0.75, "range": 0.5, "stdev": pytest.approx(0.2041241), "min": 0.5, "max": 1.0}
    assert spread([])["median"] is None


def _results(task_by_id: dict[str, Task]) -> list[AttemptResult]:
    score = task_scorer()
    task = task_by_id["weather-berlin"]
    out = []
    for attempt, calls in enumerate([[("get_weather", {"city": "Berlin"})], [], [("get_weather", {"city": "Berlin"})]]):
        t = play(task, calls, "cloudy", builder=AttemptBuilder(task=task.id, attempt=attempt))
        out.append(AttemptResult(task, t, score(t, task)))
    return out


def test_repeat_metrics_median_is_the_headline(task_by_id: dict[str, Task]) -> None:
    m = repeat_metrics(_results(task_by_id))
    assert m["k"] == 3 and m["per_repeat_reach"] == {"0": 1.0, "1": 0.0, "2": 1.0}
    assert m["reach_median"] == 1.0 and m["reach_range"] == 1.0
    assert m["pass_hat_k"] == {"1": pytest.approx(2 / 3), "2": pytest.approx(1 / 3), "3": 0.0}


def test_group_metrics(task_by_id: dict[str, Task]) -> None:
    g = group_metrics(_results(task_by_id))
    assert g["attempts"] == 3 and g["passed"] == 2 and g["reach"] == pytest.approx(2 / 3)
    assert g["misuse"] == {"wrong_tool": 0, "wrong_args": 0, "extra": 0, "missing": 1}
    assert g["by_dimension"]["tool"] == pytest.approx(2 / 3) and g["by_dimension"]["path"] is None
