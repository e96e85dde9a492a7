"""Is a difference more than noise? Confidence intervals and the paired test (docs/metrics.md §11). Pure.

Thin wrappers over statsmodels and scipy, so the statistics are the libraries', not ours:

- a rate (reach, reach per tier or dimension) gets a Wilson score interval
  (``statsmodels.stats.proportion.proportion_confint(method="wilson")``);
- a mean over tasks (mean score) gets a percentile bootstrap over tasks
  (``scipy.stats.bootstrap``, a fixed seed so the same summaries give the same bytes);
- two runs on the same tasks get an exact McNemar test on per-task pass/fail
  (``statsmodels.stats.contingency_tables.mcnemar(exact=True)``): only the tasks whose
  verdict changed carry information, and the test asks whether the changes lean one way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Confidence level of every interval.
LEVEL = 0.95
#: A paired change with a p-value at or above this is within noise.
ALPHA = 0.05
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0

Interval = tuple[float, float]


def wilson(successes: int, n: int, level: float = LEVEL) -> Interval | None:
    """The Wilson score interval of ``successes`` out of ``n`` (``None`` for ``n == 0``).

    Raises:
        ValueError: ``successes`` outside 0..n.
    """
    if n == 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n (got {successes} of {n})")
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, n, alpha=1 - level, method="wilson")
    return max(0.0, float(low)), min(1.0, float(high))


def bootstrap_mean(values: Sequence[float], level: float = LEVEL) -> Interval | None:
    """A percentile bootstrap interval of the mean of ``values`` (one per task), seeded;
    ``None`` for no values, the value itself when they cannot vary."""
    if not values:
        return None
    if len(set(values)) == 1:
        return float(values[0]), float(values[0])
    import numpy as np
    from scipy.stats import bootstrap

    result = bootstrap(
        (np.asarray(values, dtype=float),), np.mean, confidence_level=level, n_resamples=BOOTSTRAP_RESAMPLES,
        method="percentile", random_state=np.random.default_rng(BOOTSTRAP_SEED),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


@dataclass(frozen=True)
class PairedTest:
    """Exact McNemar test on per-task pass/fail of two runs over the same tasks.

    Attributes:
        tasks: tasks both runs have.
        both: passed in both; neither: failed in both.
        fixed: failed in OLD, passed in NEW; broken: passed in OLD, failed in NEW.
        p_value: two-sided exact p-value (1.0 when no verdict changed).
    """

    tasks: int
    both: int
    neither: int
    fixed: int
    broken: int
    p_value: float

    @property
    def significant(self) -> bool:
        """The changes lean one way beyond chance (p < :data:`ALPHA`)."""
        return self.p_value < ALPHA

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form."""
        return {"test": "mcnemar_exact", "tasks": self.tasks, "both": self.both, "neither": self.neither,
                "fixed": self.fixed, "broken": self.broken, "p_value": self.p_value, "significant": self.significant}


def mcnemar_paired(old: dict[str, bool], new: dict[str, bool]) -> PairedTest | None:
    """McNemar over the tasks both runs have (``None`` when they share none).

    Args:
        old: task id -> passed, in the baseline.
        new: task id -> passed, in the candidate.
    """
    shared = sorted(set(old) & set(new))
    if not shared:
        return None
    both = sum(old[t] and new[t] for t in shared)
    neither = sum(not old[t] and not new[t] for t in shared)
    fixed = sum(not old[t] and new[t] for t in shared)
    broken = sum(old[t] and not new[t] for t in shared)
    if fixed + broken == 0:
        return PairedTest(len(shared), both, neither, fixed, broken, 1.0)
    from statsmodels.stats.contingency_tables import mcnemar

    result = mcnemar([[both, broken], [fixed, neither]], exact=True)
    return PairedTest(len(shared), both, neither, fixed, broken, min(1.0, float(result.pvalue)))


def task_passed(entry: dict[str, Any]) -> bool | None:
    """A task's verdict in a summary: passed when at least half its attempts passed
    (the median repeat; ``None`` without attempts)."""
    rate = entry.get("pass_rate")
    return None if rate is None else rate >= 0.5


def pass_map(summary: dict[str, Any], tier: str | None = None) -> dict[str, bool]:
    """Task id -> verdict of a summary's tasks (of one tier, when given)."""
    out = {}
    for tid, entry in (summary.get("tasks") or {}).items():
        verdict = task_passed(entry)
        if verdict is not None and (tier is None or entry.get("tier") == tier):
            out[tid] = verdict
    return out


def rate_interval(rate: float | None, n: int | None) -> Interval | None:
    """Wilson interval of a rate given over ``n`` attempts (the count is rounded back)."""
    if rate is None or not n:
        return None
    return wilson(round(rate * n), n)
