"""Value normalisation (docs/metrics.md §3): exactly the documented rules, nothing fuzzy."""

from __future__ import annotations

import pytest

from probegate.scorer.judge.normalize import (
    call_key,
    date,
    email,
    normalize_value,
    number,
    phone,
    register_normalizer,
    same,
)

CASES = [
    ("  New   York ", None, "new york"),
    ("ＳＫＵ-１００１", None, "sku-1001"),
    ("1", None, 1),
    ("1.0", None, 1),
    (1.0, None, 1),
    ("2.50", None, 2.5),
    ("1,000", None, "1,000"),
    ("TRUE", None, True),
    ("NYC", "city", "new york"),
    ("NYC", "name", "nyc"),
    ("€", "currency", "eur"),
    ("Dana <Dana.Weber@Brightline.example>", "to", "dana.weber@brightline.example"),
    ("+49 (30) 5550-100", "phone", "+49305550100"),
    ("2025/03/17", "date", "2025-03-17"),
    ("17 March 2025", "due_date", "2025-03-17"),
    ("next friday", "date", "next friday"),
    ("reports//q3.md/", "path", "/reports/q3.md"),
    (["b", "A"], None, ["a", "b"]),
    ({"k": None, "v": " X "}, None, {"v": "x"}),
]


@pytest.mark.parametrize(("value", "param", "normal"), CASES)
def test_normalize_value(value: object, param: str | None, normal: object) -> None:
    assert normalize_value(value, None, param) == normal


def test_booleans_stay_apart_from_numbers() -> None:
    assert not same(normalize_value(True), normalize_value(1))
    assert same(normalize_value("1"), normalize_value(1.0))


@pytest.mark.parametrize(
    ("fn", "value", "out"),
    [
        (number, "x", "x"),
        (number, True, True),
        (email, "not an address", "not an address"),
        (phone, "123", "123"),
        (date, 20250317, 20250317),
    ],
)
def test_normalisers_leave_other_values_alone(fn, value, out) -> None:  # type: ignore[no-untyped-def]
    assert fn(value) == out


def test_registered_per_tool_normaliser_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    from probegate.scorer.judge import normalize

    monkeypatch.setattr(normalize, "_REGISTRY", {})
    register_normalizer("get_stock", "sku", lambda v: str(v).upper().removeprefix("SKU-"))
    assert normalize_value({"sku": "SKU-1001"}, "get_stock") == {"sku": "1001"}
    assert normalize_value({"sku": "SKU-1001"}, "other") == {"sku": "sku-1001"}


def test_call_key_ignores_case_and_order() -> None:
    assert call_key("t", {"a": "X", "b": [2, 1]}) == call_key("t", {"b": [1, 2], "a": "x"})
    assert call_key("t", {"a": 1}) != call_key("u", {"a": 1})
