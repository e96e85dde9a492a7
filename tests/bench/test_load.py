"""Percentiles of the load generator (pure)."""

from __future__ import annotations

import math

import pytest

from bench.load import Latency, percentile


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [([1.0], 0.5, 1.0), ([1.0, 3.0], 0.5, 2.0), ([3.0, 1.0, 2.0], 0.5, 2.0), ([1.0, 2.0, 3.0, 4.0, 5.0], 0.9, 4.6),
     ([5.0, 1.0], 0.0, 1.0), ([5.0, 1.0], 1.0, 5.0)],
)
def test_percentile(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_percentile_of_nothing_is_nan() -> None:
    assert math.isnan(percentile([], 0.5))


def test_latency_summary() -> None:
    lat = Latency.of([float(i) for i in range(1, 101)], 1, 2)
    assert (lat.n, lat.p50, lat.errors) == (100, 50.5, 2)
