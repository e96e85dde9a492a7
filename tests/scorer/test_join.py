"""Joining steps to the probe calls they caused (the probe log is the ground truth)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probegate.scorer.rebuild.join import CallStep, ProbeMoment, attach_by_time, aware, join_calls, same_tool

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


@pytest.mark.parametrize(
    ("step_tool", "probe_tool", "same"),
    [
        ("get_weather", "get_weather", True),
        ("mcp_127_0_0_1_8700_r_run_t01_0_mcp_get_weather", "get_weather", True),  # CrewAI's MCP naming
        ("localhost_8700_r_run_t1_mcp_shop_check_stock", "check_stock", True),  # through --mcp-upstream shop
        ("check_get_weather", "get_weather", False),  # a suffix alone is another tool
        ("get_weather_mcp", "mcp", False),  # the prefix must carry mcp, not the name
        ("get_weather", "mcp_get_weather", False),
    ],
)
def test_same_tool(step_tool: str, probe_tool: str, same: bool) -> None:
    assert same_tool(step_tool, probe_tool) is same


def test_an_mcp_prefixed_step_joins_its_probe_call_by_arguments() -> None:
    name = "mcp_127_0_0_1_8700_r_run_t01_0_mcp_check_stock"
    steps = [CallStep(0, name, {"sku": "B"}, at(0), None)]
    probes = [ProbeMoment(0, "check_stock", {"sku": "A"}, at(1)), ProbeMoment(1, "check_stock", {"sku": "B"}, at(2))]
    assert join_calls(steps, probes) == {1: 0}


def test_a_renamed_step_joins_a_probe_call_of_its_window_with_equal_arguments() -> None:
    hashed = "mcp_127_0_0_1_57853_r_20261201_120044_crewai_mcp_c890_p_d03fc438"  # CrewAI cut the name
    steps = [CallStep(0, hashed, {"city": "Berlin"}, at(0), at(10)), CallStep(1, hashed, {"city": "Oslo"}, at(10), None)]
    probes = [ProbeMoment(0, "get_weather", {"city": "Berlin"}, at(1)), ProbeMoment(1, "get_weather", {"city": "Rome"}, at(11))]
    assert join_calls(steps, probes) == {0: 0}  # the second step's arguments differ: no join
