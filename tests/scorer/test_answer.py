"""Final-answer checks (docs/metrics.md §5)."""

from __future__ import annotations

import pytest

from probegate.scorer.judge.answer import check_answer, json_subset, numbers_in
from probegate.tasks.loader import ExpectedAnswer

CASES = [
    # expected, answer, ok
    ({"contains": ["Shipped"]}, "The order has shipped.", True),
    ({"contains": ["shipped", "ORD-5002"]}, "The order has shipped.", False),
    ({"contains_any": [["delivered", "zugestellt"]]}, "Es wurde zugestellt.", True),
    ({"contains_any": [["a1"], ["b2"]]}, "a1 only", False),
    ({"not_contains": ["Munich"]}, "Berlin is cloudy", True),
    ({"not_contains": ["munich"]}, "Not Munich", False),
    ({"regex": r"TCK-\d{4}"}, "created tck-3008", True),
    ({"regex": r"TCK-\d{4}"}, "created a ticket", False),
    ({"number": {"value": 1234.5, "tolerance": 0.1}}, "Total: 1,234.5 EUR", True),
    ({"number": {"value": 5, "tolerance": 0.5}}, "It is 6 degrees", False),
    ({"number": {"value": -3}}, "low of -3 C", True),
    ({"json": {"status": "Shipped"}}, 'Result: {"status": "shipped", "id": 2}', True),
    ({"json": {"status": "shipped"}}, "Result: status shipped", False),
]


@pytest.mark.parametrize(("expected", "answer", "ok"), CASES)
def test_answer_checks(expected: dict, answer: str, ok: bool) -> None:
    checks = check_answer(answer, ExpectedAnswer.model_validate(expected))
    assert all(c.ok for c in checks) is ok, [c.to_json() for c in checks]


def test_no_answer_fails_and_no_expectation_needs_any_answer() -> None:
    assert [c.ok for c in check_answer(None, None)] == [False]
    assert [c.ok for c in check_answer("  ", ExpectedAnswer(contains=["x"]))] == [False]
    assert [c.ok for c in check_answer("ok", None)] == [True]


def test_invalid_regex_is_a_failed_check_not_a_crash() -> None:
    checks = check_answer("x", ExpectedAnswer.model_validate({"regex": "(unclosed"}))
    assert not checks[0].ok and "invalid pattern" in checks[0].evidence


def test_numbers_and_json_subset() -> None:
    assert numbers_in("3 items at 1,299.00 and .5") == [3.0, 1299.0, 0.5]
    assert json_subset({"a": {"b": 1}}, {"a": {"b": 1.0, "c": 2}})
    assert not json_subset({"a": True}, {"a": 1})


SPAM = " ".join(str(n) for n in range(2001)) + " 2025-03-17 2025-03-18 2025-04-01 2025-06-30 2025-03-11 2025-03-15 cloudy"
GROUNDING = [
    # expected, trap, answer, failing check (None: every check holds)
    ({"number": {"value": 2148, "tolerance": 0.01}}, "2268", "The price is 2148 EUR (not 2268).", "answer.trap"),
    ({"number": {"value": 2148, "tolerance": 0.01}}, "2268", "The price is 2148 EUR.", None),
    ({"contains": ["18.3"]}, "9.4", "International grew 18.3 %, domestic 19.45 %.", None),
    ({"contains": ["18.3"]}, "9.4", "International grew 18.3 %, not 9.4 %.", "answer.trap"),
    (None, "09:00", "Booked 10:00 to 11:00; 09:00 was taken.", "answer.trap"),
    ({"number": {"value": 6, "tolerance": 0.5}}, None, SPAM, "answer.hedge"),
    ({"contains": ["2025-03-18"]}, None, "It may arrive 2025-03-16, 2025-03-17, 2025-03-18, 2025-03-19, 2025-03-20 or 2025-03-21.", "answer.hedge"),
    ({"contains": ["TCK-3001", "TCK-3007"]}, None, "Open: " + ", ".join(f"TCK-30{n:02d}" for n in range(20)), "answer.hedge"),
    ({"contains": ["TCK-3001", "TCK-3007"]}, None, "High-priority open tickets: TCK-3001 (ORD-5002, late) and TCK-3007 (wrong lamps).", None),
    ({"number": {"value": 4636, "tolerance": 0.01}}, None,
     "40 chairs (SKU-1011) at 79.00 = 3,160.00 EUR; 40 lamps (SKU-1008) at 36.90 = 1,476.00 EUR; total 4,636.00 EUR, "
     "within your 5,000 EUR budget; valid until 2025-03-31.", None),
]


@pytest.mark.parametrize(("expected", "trap", "answer", "failing"), GROUNDING)
def test_a_trap_value_or_a_hedge_fails_the_answer(expected: dict | None, trap: str | None, answer: str, failing: str | None) -> None:
    checks = check_answer(answer, ExpectedAnswer.model_validate(expected) if expected else None, trap)
    assert [c.name for c in checks if not c.ok] == ([failing] if failing else [])
