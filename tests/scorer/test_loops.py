"""Loop detection (docs/metrics.md §6)."""

from __future__ import annotations

import pytest

from probegate.scorer.judge.loops import detect_loop, duplicates
from probegate.scorer.judge.matching import ActualCall


def C(i: int, tool: str = "t", status: str = "ok", **args: object) -> ActualCall:
    return ActualCall(i, tool, dict(args), status)


CASES = [
    ("same ok call twice in a row", [C(0, x=1), C(1, x=1)], ("repeat_ok", [0, 1])),
    ("normalised arguments count as the same", [C(0, x="A "), C(1, x="a")], ("repeat_ok", [0, 1])),
    ("two identical failures are a retry", [C(0, "t", "error", x=1), C(1, "t", "error", x=1)], None),
    ("three identical failures are a loop", [C(i, "t", "error", x=1) for i in range(3)], ("repeat_failure", [0, 1, 2])),
    ("failure then success is a recovery", [C(0, "t", "error", x=1), C(1, x=1)], None),
    ("different arguments are progress", [C(0, x=1), C(1, x=2), C(2, x=3)], None),
    ("not in a row", [C(0, x=1), C(1, "u"), C(2, x=1)], None),
]


@pytest.mark.parametrize(("rule", "calls", "loop"), CASES, ids=[c[0] for c in CASES])
def test_detect_loop(rule: str, calls: list[ActualCall], loop: tuple | None) -> None:
    found = detect_loop(calls)
    assert (None if found is None else (found.rule, found.call_indexes)) == loop, rule


def test_duplicates_point_at_the_first_call() -> None:
    assert duplicates([C(0, x=1), C(1, "u"), C(2, x=1), C(3, x=1)]) == {2: 0, 3: 0}
