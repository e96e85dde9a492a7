"""Normalisation used by lookups, fault matching and outcome checks."""

from __future__ import annotations

from typing import Any

import pytest

from probegate.probes.normalize import as_list, contains, norm_email, norm_id, norm_path, norm_text, same_value


@pytest.mark.parametrize(
    ("fn", "value", "expected"),
    [
        (norm_text, "  Q3   Report\n", "q3 report"),
        (norm_text, "STRASSE", "strasse"),
        (norm_email, " Jonas.Becker@Globex.example ", "jonas.becker@globex.example"),
        (norm_id, " sku-1001", "SKU-1001"),
        (norm_path, "reports//weekly.md/", "/reports/weekly.md"),
        (norm_path, "/", "/"),
    ],
)
def test_normalisers(fn: Any, value: str, expected: str) -> None:
    assert fn(value) == expected


@pytest.mark.parametrize(
    ("haystack", "needle", "expected"),
    [("Update on ORD-5002", "ord-5002", True), ("a  b", "A B", True), ("abc", "abd", False)],
)
def test_contains(haystack: str, needle: str, expected: bool) -> None:
    assert contains(haystack, needle) is expected


@pytest.mark.parametrize(("value", "expected"), [(None, []), ("a", ["a"]), (["a", "b"], ["a", "b"]), (("x",), ["x"])])
def test_as_list(value: Any, expected: list[Any]) -> None:
    assert as_list(value) == expected


@pytest.mark.parametrize(
    ("expected", "actual", "same"),
    [
        ("Berlin", " berlin ", True),
        (1, 1.0, True),
        (True, 1, False),
        ([1, "A"], [1.0, "a"], True),
        ([1], [1, 2], False),
        ("1", 1, False),
        (None, None, True),
    ],
)
def test_same_value(expected: Any, actual: Any, same: bool) -> None:
    assert same_value(expected, actual) is same
