"""Joining steps to the probe calls they caused (the probe log is the ground truth)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from probegate.scorer.rebuild.join import CallStep, ProbeMoment, attach_by_time, aware, join_calls

T = datetime(2025, 1, 1, tzinfo=UTC)


def at(s: int) -> datetime:
    return T + timedelta(seconds=s)


def test_a_call_that_never_ran_does_not_steal_a_later_probe_call() -> None:
    steps = [CallStep(0, "f", {"x": 1}, at(0), at(10)), CallStep(1, "f", {"x": 1}, at(10), None)]
    probes = [ProbeMoment(0, "f", {"x": 1}, at(12))]
    assert join_calls(steps, probes) == {0: 1}


def test_equal_arguments_are_preferred_within_the_window() -> None:
    steps = [CallStep(0, "f", {"x": 2}, at(0), None)]
    probes = [ProbeMoment(0, "f", {"x": 1}, at(1)), ProbeMoment(1, "f", {"x": 2}, at(2))]
    assert join_calls(steps, probes) == {1: 0}


def test_unclaimed_probe_calls_attach_to_the_last_step_before_them() -> None:
    probes = [ProbeMoment(0, "f", {}, at(5)), ProbeMoment(1, "g", {}, at(1)), ProbeMoment(2, "h", {}, None)]
    assert attach_by_time([(0, at(0)), (1, at(3))], probes, {}) == {0: 1, 1: 0}


def test_naive_datetimes_are_utc() -> None:
    assert aware(datetime(2025, 1, 1)) == T and aware(None) is None
