"""The grader self-test over the test task set and over the default task set (CI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from probegate.scorer.pipeline import reconstruct
from probegate.scorer.selftest.mutations import Plan
from probegate.scorer.selftest.suite import SelftestCase, _verdict, run_selftest
from probegate.tasks.loader import TASKS_DIR as BUILTIN_TASKS
from tests.scorer.rowkit import TASKS_DIR


def test_selftest_passes_on_every_order_mode_and_trap() -> None:
    report = run_selftest(str(TASKS_DIR))
    assert report.ok, [c.to_json() for c in report.failures()]
    ran = [c for c in report.cases if c.skipped is None]
    assert {c.plan for c in ran} == {"reference", "wrong_argument", "missing_call", "extra_call", "duplicated_call", "do_nothing", "fake_completion"}
    assert all(c.value == 1.0 for c in ran if c.plan == "reference")
    assert all(c.value is not None and c.value < 1.0 and set(c.labels) & set(c.expected) for c in ran if c.plan != "reference")
    assert report.to_json()["skipped"] == 1


def test_selftest_into_a_store_can_be_traced(sqlite_url: str) -> None:
    from probegate.store import open_store

    report = run_selftest(str(TASKS_DIR), sqlite_url)
    assert report.ok and report.run_id and report.run_id.startswith("selftest-")
    engine: Engine = open_store(sqlite_url)
    try:
        trajectory = reconstruct(engine, report.run_id, "email-jonas", 0)
    finally:
        engine.dispose()
    assert [s.tool_name for s in trajectory.steps] == ["find_contact", "send_email", None]


def test_verdicts_catch_a_lenient_grader() -> None:
    task = type("T", (), {"id": "t"})()
    plan = Plan("extra_call", expect_labels=frozenset({"intent_miss"}))
    missed = _verdict(task, plan, 1.0, True, [], "passed")  # type: ignore[arg-type]
    wrong_label = _verdict(task, plan, 0.5, False, ["param_error"], "failed")  # type: ignore[arg-type]
    bad_reference = _verdict(task, Plan("reference"), 0.5, False, ["param_error"], "failed: x")  # type: ignore[arg-type]
    assert [c.ok for c in (missed, wrong_label, bad_reference)] == [False, False, False]
    assert "missed" in (missed.problem or "") and "expected one of" in (wrong_label.problem or "")
    assert isinstance(bad_reference, SelftestCase) and "reference scored 0.500" in (bad_reference.problem or "")


@pytest.mark.skipif(not any(Path(BUILTIN_TASKS, "default").glob("*.yaml")), reason="the default task set has no tasks yet")
def test_selftest_over_the_whole_default_task_set() -> None:
    report = run_selftest("default")
    assert report.ok, "\n".join(f"{c.task_id} {c.plan}: {c.problem}" for c in report.failures())
