"""Reference plans and mutations (docs/metrics.md §10)."""

from __future__ import annotations

import pytest

from probegate.scorer.judge.answer import check_answer
from probegate.scorer.selftest.mutations import (
    MUTATIONS,
    mutate_value,
    mutations,
    reference_answer,
    reference_plan,
)
from probegate.tasks.loader import Task

VALUES = [
    ("jonas@globex.example", "xjonas@globex.example"),
    ("ORD-5002", "ORD-5003"),
    ("SKU-1009", "SKU-1000"),
    ("Berlin", "Berlin (changed)"),
    (5, 6),
    (2.5, 3.5),
    (True, False),
    (["a@x.example", "b"], ["xa@x.example", "b"]),
    ({"k": 1, "j": 2}, {"k": 2, "j": 2}),
    ([], ["x"]),
]


@pytest.mark.parametrize(("value", "wrong"), VALUES)
def test_mutate_value(value: object, wrong: object) -> None:
    assert mutate_value(value) == wrong


def _task(**extra: object) -> Task:
    base = {
        "id": "t", "tier": "P1", "category": "sequential", "dimensions": ["tool"], "prompt": {"en": "x"},
        "tools": ["a", "b"], "expected_actions": [{"tool": "a", "args": {"q": "x"}}], "trap": {"kind": "distractor", "note": "n"},
    }
    return Task.model_validate({**base, **extra})


ANSWERS = [
    {"contains": ["shipped", "ORD-5002"]},
    {"contains_any": [["delivered", "zugestellt"]], "not_contains": ["cancelled"]},
    {"number": {"value": 1234.5, "tolerance": 0.01}},
    {"number": {"value": 7}},
    {"json": {"status": "ok", "n": 2}},
    {"regex": r"TCK-\d{4}"},
    {"regex": r"^(yes|no)\b", "contains": ["no"]},
]


@pytest.mark.parametrize("expected", ANSWERS)
def test_reference_answer_satisfies_its_checks(expected: dict) -> None:
    task = _task(expected_answer=expected)
    answer = reference_answer(task)
    checks = check_answer(answer, task.expected_answer)
    assert all(c.ok for c in checks), (answer, [c.to_json() for c in checks])


def test_mutations_of_a_sequential_task(task_by_id: dict[str, Task]) -> None:
    task = task_by_id["email-jonas"]
    ref = reference_plan(task)
    assert [c.tool for c in ref.calls] == ["find_contact", "send_email"]
    plans = {p.name: p for p in mutations(task, ref, read_only_tools={"list_inbox", "find_contact"})}
    assert list(plans) == list(MUTATIONS)
    assert plans["wrong_argument"].calls[1].args["to"] == "xjonas.becker@globex.example"
    assert [c.tool for c in plans["missing_call"].calls] == ["find_contact"]
    assert [c.tool for c in plans["extra_call"].calls] == ["find_contact", "send_email", "list_inbox"]
    assert [c.tool for c in plans["duplicated_call"].calls] == ["find_contact", "send_email", "send_email"]
    assert plans["do_nothing"].calls == ()
    assert [c.tool for c in plans["fake_completion"].calls] == ["find_contact"] and "sent" in plans["fake_completion"].answer
    assert all(p.expect_labels and p.skipped is None for p in plans.values())


def test_mutations_that_cannot_apply_say_why(task_by_id: dict[str, Task]) -> None:
    superset = {p.name: p for p in mutations(task_by_id["order-superset"])}
    assert superset["extra_call"].skipped and "superset" in superset["extra_call"].skipped
    no_args = {p.name: p for p in mutations(_task(expected_actions=[{"tool": "a"}]))}
    assert no_args["wrong_argument"].skipped
    read_only_subset = {p.name: p for p in mutations(_task(order="subset"))}
    assert read_only_subset["missing_call"].skipped
