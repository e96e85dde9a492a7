"""Deterministic fault injection."""

from __future__ import annotations

from typing import Any

import pytest

from probegate.probes.faults import fire_fault


def fired_codes(faults: list[dict[str, Any]], calls: list[tuple[str, dict[str, Any]]]) -> list[str | None]:
    state = {"faults": faults}
    out = []
    for tool, args in calls:
        err = fire_fault(state, tool, args)
        out.append(err.code if err else None)
    return out


BERLIN = ("get_weather", {"city": "Berlin"})
PARIS = ("get_weather", {"city": "Paris"})


@pytest.mark.parametrize(
    ("faults", "calls", "expected"),
    [
        ([{"tool": "get_weather"}], [BERLIN, BERLIN], ["unavailable", None]),
        ([{"tool": "get_weather", "times": 2, "code": "timeout"}], [BERLIN, PARIS, BERLIN], ["timeout", "timeout", None]),
        ([{"tool": "get_weather", "when": {"city": "berlin "}}], [PARIS, BERLIN, BERLIN], [None, "unavailable", None]),
        ([{"tool": "get_weather", "times": "always"}], [BERLIN] * 4, ["unavailable"] * 4),
        ([{"tool": "get_time"}], [BERLIN], [None]),
        ([{"tool": "get_weather", "when": {"units": "celsius"}}], [BERLIN], [None]),
        ([{"tool": "get_weather", "when": {"city": "Paris"}}, {"tool": "get_weather", "code": "second"}],
         [PARIS, PARIS, PARIS], ["unavailable", "second", None]),
    ],
)
def test_fault_schedule(faults: list[dict[str, Any]], calls: list[tuple[str, dict[str, Any]]], expected: list[Any]) -> None:
    assert fired_codes(faults, calls) == expected


def test_fault_message_hint_and_counter() -> None:
    state = {"faults": [{"tool": "get_weather", "error": "weather service timed out", "hint": "try again"}]}
    err = fire_fault(state, *BERLIN)
    assert err is not None
    assert err.body("actionable") == {"error": "unavailable", "message": "weather service timed out", "hint": "try again"}
    assert err.body("plain") == {"error": "unavailable", "message": "weather service timed out"}
    assert state["faults"][0]["fired"] == 1


def test_no_faults_entry() -> None:
    assert fire_fault({}, *BERLIN) is None
