"""Intervals and the paired test (docs/metrics.md §11): the libraries' statistics, wrapped."""

from __future__ import annotations

import pytest

from probegate.scorer.report.compare import TierChange
from probegate.scorer.report.stats import PairedTest, bootstrap_mean, mcnemar_paired, pass_map, rate_interval, wilson

WILSON = [
    # successes, n, (low, high): Wilson score intervals at 95 %
    (0, 36, (0.0, 0.096419)),
    (36, 36, (0.903581, 1.0)),
    (18, 36, (0.344743, 0.655257)),  # centre 0.5, half-width z/(1+z²/n)·sqrt(p(1-p)/n + z²/4n²)
    (1, 1, (0.206549, 1.0)),
]


@pytest.mark.parametrize(("k", "n", "expected"), WILSON)
def test_wilson(k: int, n: int, expected: tuple[float, float]) -> None:
    assert wilson(k, n) == pytest.approx(expected, abs=1e-6)


def test_wilson_edges() -> None:
    assert wilson(0, 0) is None and rate_interval(None, 3) is None
    assert rate_interval(0.5, 36) == wilson(18, 36)
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_bootstrap_over_tasks_is_seeded_and_brackets_the_mean() -> None:
    values = [0.0, 0.1, 0.25, 0.5, 1.0, 1.0, 0.0, 0.4]
    low, high = bootstrap_mean(values)
    assert low < sum(values) / len(values) < high and 0.0 <= low and high <= 1.0
    assert bootstrap_mean(values) == (low, high)  # the same summaries give the same bytes
    assert bootstrap_mean([0.5, 0.5]) == (0.5, 0.5) and bootstrap_mean([]) is None


MCNEMAR = [
    # old, new, fixed, broken, p (exact, two-sided binomial on the discordant tasks)
    ({"a": True, "b": True}, {"a": True, "b": True}, 0, 0, 1.0),
    ({"a": True}, {"a": False}, 0, 1, 1.0),
    ({t: True for t in "abcdef"}, {t: False for t in "abcdef"}, 0, 6, 0.03125),
    ({**{t: True for t in "abcde"}, "z": False}, {**{t: False for t in "abcde"}, "z": True}, 1, 5, 0.21875),
]


@pytest.mark.parametrize(("old", "new", "fixed", "broken", "p"), MCNEMAR)
def test_exact_mcnemar_on_per_task_verdicts(old: dict, new: dict, fixed: int, broken: int, p: float) -> None:
    test = mcnemar_paired(old, new)
    assert test is not None and (test.fixed, test.broken) == (fixed, broken)
    assert test.p_value == pytest.approx(p)


def test_mcnemar_needs_shared_tasks_and_pass_map_reads_the_median_repeat() -> None:
    assert mcnemar_paired({"a": True}, {"b": True}) is None
    summary = {"tasks": {"a": {"tier": "P0", "pass_rate": 0.5}, "b": {"tier": "P1", "pass_rate": 0.0}, "c": {"pass_rate": None}}}
    assert pass_map(summary) == {"a": True, "b": False} and pass_map(summary, "P1") == {"b": False}


NOISE = [
    # old, new, paired test, intervals, within noise
    ("one task lost: cannot tell", 1.0, 0.0, PairedTest(1, 0, 0, 0, 1, 1.0), None, True),
    ("six tasks lost the same way", 1.0, 0.0, PairedTest(6, 0, 0, 0, 6, 0.03125), None, False),
    ("no paired test, intervals overlap", 0.5, 0.4, None, ((0.3, 0.7), (0.25, 0.6)), True),
    ("no paired test, intervals apart", 0.9, 0.1, None, ((0.8, 0.97), (0.03, 0.25)), False),
    ("a gain is never a drop", 0.4, 0.6, PairedTest(5, 0, 0, 3, 0, 0.25), None, False),
]


@pytest.mark.parametrize(("case", "old", "new", "paired", "cis", "noise"), NOISE, ids=[c[0] for c in NOISE])
def test_a_drop_within_noise_is_named(case: str, old: float, new: float, paired: PairedTest | None, cis, noise: bool) -> None:  # type: ignore[no-untyped-def]
    old_ci, new_ci = cis or (None, None)
    change = TierChange("P0", old, new, new < 0.95 * old, old_ci, new_ci, paired)
    assert change.within_noise is noise, case
    assert change.to_json()["within_noise"] is noise
