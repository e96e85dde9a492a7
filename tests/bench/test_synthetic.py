"""The scorer benchmark's synthetic run: padded plans, realistic rows, every attempt scored."""

from __future__ import annotations

from typing import Any

import pytest

from bench.stores import temp_store
from bench.synthetic import build_run, candidate_lookups, padded
from probegate.store import open_store
from probegate.scorer import score_run
from probegate.scorer.selftest.mutations import Plan, PlannedCall
from probegate.tasks.loader import load_task_set

A, B, X = PlannedCall("get_order", {"order_id": "ORD-1"}), PlannedCall("list_orders", {}), PlannedCall("cancel_order", {})


@pytest.mark.parametrize(
    ("calls", "lookups", "target", "expected"),
    [
        ((X,), [A, B], 5, (A, B, A, B, X)),
        ((X,), [A], 5, (A, X)),  # one look-up is never repeated back to back
        ((A,), [A, B], 3, (A, B, A)),  # the last pad is not the plan's first call
        ((X, X, X), [A, B], 2, (X, X, X)),  # longer plans keep their length
        ((X,), [], 4, (X,)),
    ],
)
def test_padded(calls: tuple[PlannedCall, ...], lookups: list[PlannedCall], target: int, expected: tuple[PlannedCall, ...]) -> None:
    assert padded(Plan("reference", calls), lookups, target).calls == expected


def test_candidate_lookups_borrow_the_expected_arguments() -> None:
    from probegate.scorer.selftest.mutations import reference_plan
    from probegate.scorer.selftest.suite import read_only_tools

    task = load_task_set("default").get("p0-cancel-ord-5005")
    found = candidate_lookups(task, reference_plan(task), read_only_tools())
    assert PlannedCall("get_order", {"order_id": "ORD-5005"}) in found
    assert all(c.tool != "cancel_order" for c in found)


def test_build_run_writes_scorable_attempts() -> None:
    with temp_store("sqlite") as url:
        engine = open_store(url)
        built: dict[str, Any] = build_run(engine, 50, exchanges=4)
        scored = score_run(engine, "bench")
        engine.dispose()
    assert built["rows"]["worldstate"] == 50 and len(scored.results) == 50
    assert 50 < built["rows"]["exchange"] <= 6 * 50
    assert built["rows"]["probecall"] > 0
    assert any(r.score.passed for r in scored.results) and not all(r.score.passed for r in scored.results)
