"""Aggregate metrics over attempts (docs/metrics.md §6-§8). Pure.

Small numeric helpers (pass^k, median, spread) and the per-group aggregations the
summary is built from. Every attempt counts in every figure, interop failures
included (docs/metrics.md §7); :func:`served` picks the attempts the model server
served properly, for the second, separately named figure.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import comb
from typing import Any

from probegate.scorer.judge.reach import DIMENSIONS
from probegate.scorer.judge.task_score import Score
from probegate.scorer.trajectory import Trajectory
from probegate.tasks.loader import Task


@dataclass(frozen=True)
class AttemptResult:
    """One scored attempt: its task, trajectory and score."""

    task: Task
    trajectory: Trajectory
    score: Score

    @property
    def task_id(self) -> str:
        """The task id."""
        return self.task.id

    @property
    def attempt(self) -> int:
        """The attempt number (the repeat index)."""
        return self.trajectory.attempt


def pass_hat_k(n: int, c: int, k: int) -> float:
    """τ-bench's pass^k = C(c, k) / C(n, k): the chance that k of n attempts, drawn
    without replacement, all pass.

    Raises:
        ValueError: ``k`` outside 1..n or ``c`` outside 0..n.
    """
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"pass^k needs 1 <= k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    return comb(c, k) / comb(n, k)


def mean(values: Iterable[float]) -> float | None:
    """Arithmetic mean, ``None`` for no values."""
    items = list(values)
    return sum(items) / len(items) if items else None


def rate(flags: Iterable[bool]) -> float | None:
    """Share of true values, ``None`` for none."""
    return mean(1.0 if f else 0.0 for f in flags)


def spread(values: Sequence[float]) -> dict[str, float | None]:
    """Median, max - min and population standard deviation of repeat-level figures."""
    if not values:
        return {"median": None, "range": None, "stdev": None, "min": None, "max": None}
    return {
        "median": statistics.median(values),
        "range": max(values) - min(values),
        "stdev": statistics.pstdev(values),
        "min": min(values),
        "max": max(values),
    }


def served(results: Iterable[AttemptResult]) -> list[AttemptResult]:
    """Attempts the model server served properly (no blocking interop fault)."""
    return [r for r in results if not r.score.interop]


def dimension_attempts(results: Sequence[AttemptResult]) -> dict[str, int]:
    """Per dimension: the attempts its reach is computed over (of tasks that list it)."""
    return {dim: sum(1 for r in results if dim in r.task.dimensions) for dim in DIMENSIONS}


def dimension_reach(results: Sequence[AttemptResult]) -> dict[str, float | None]:
    """Per dimension: over attempts of tasks that list it, the share where it holds."""
    out: dict[str, float | None] = {}
    for dim in DIMENSIONS:
        out[dim] = rate(r.score.dimensions.get(dim, False) for r in results if dim in r.task.dimensions)
    return out


def group_metrics(results: Sequence[AttemptResult]) -> dict[str, Any]:
    """Reach and tool-call figures of a group of scored attempts."""
    misuse = {k: sum(r.score.alignment.misuse()[k] for r in results) for k in ("wrong_tool", "wrong_args", "extra", "missing")}
    return {
        "attempts": len(results),
        "passed": sum(1 for r in results if r.score.passed),
        "reach": rate(r.score.passed for r in results),
        "score_mean": mean(r.score.value for r in results),
        "accuracy": mean(r.score.alignment.accuracy for r in results),
        "misuse_rate": mean(r.score.alignment.misuse_rate for r in results),
        "misuse": misuse,
        "recoveries": sum(len(r.score.alignment.recoveries) for r in results),
        "loops": sum(1 for r in results if r.trajectory.loop_detected),
        "max_steps_hit": sum(1 for r in results if r.trajectory.max_steps_hit),
        "path_depth": mean(r.score.depth / 4 for r in results),
        "by_dimension": dimension_reach(results),
        "dimension_attempts": dimension_attempts(results),
        "cost": cost(results),
    }


def repeat_metrics(results: Sequence[AttemptResult]) -> dict[str, Any]:
    """Stability over repeats: per-repeat reach, its median and spread, pass^k."""
    by_repeat: dict[int, list[AttemptResult]] = {}
    by_task: dict[str, list[AttemptResult]] = {}
    for r in results:
        by_repeat.setdefault(r.attempt, []).append(r)
        by_task.setdefault(r.task_id, []).append(r)
    per_repeat = {str(i): rate(x.score.passed for x in group) or 0.0 for i, group in sorted(by_repeat.items())}
    k_max = min((len(v) for v in by_task.values()), default=0)
    hat = {
        str(k): mean(pass_hat_k(len(v), sum(x.score.passed for x in v), k) for v in by_task.values())
        for k in range(1, k_max + 1)
    }
    return {
        "k": k_max,
        "per_repeat_reach": per_repeat,
        "pass_rate": mean(rate(x.score.passed for x in v) or 0.0 for v in by_task.values()),
        "pass_hat_k": hat,
        **{f"reach_{key}": value for key, value in spread(list(per_repeat.values())).items()},
    }


def cost(results: Sequence[AttemptResult]) -> dict[str, float | None]:
    """Mean model calls and tokens per attempt (what the agent spent; deterministic)."""
    return {
        "model_calls": mean(r.trajectory.usage.model_calls for r in results),
        "prompt_tokens": mean(r.trajectory.usage.prompt_tokens for r in results),
        "completion_tokens": mean(r.trajectory.usage.completion_tokens for r in results),
    }


def latency(results: Sequence[AttemptResult]) -> float | None:
    """Mean model latency (ms, summed over an attempt's exchanges) per attempt.

    Kept out of ``summary.json``: it is measured time, so a replay or a rerun of the
    same trajectories gives other values; ``timing.json`` holds it.
    """
    return mean(r.trajectory.usage.latency_ms for r in results)


def count(items: Iterable[str]) -> dict[str, int]:
    """Occurrences per item, keys sorted."""
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return dict(sorted(out.items()))
