"""The calculator's safe evaluator and the conversions (pure)."""

from __future__ import annotations

import pytest

from probegate.probes.catalog.calc import convert_value, evaluate
from probegate.probes.tool import ToolError


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("1 + 2 * 3", 7),
        ("(429 * 4 + 69 * 4) * 0.9", 1792.8),
        ("0.1 + 0.2", 0.3),
        ("2 ** 10", 1024),
        ("-3 // 2", -2),
        ("7 % 4", 3),
        ("round(10 / 3, 2)", 3.33),
        ("max(3, 9, 4) - min(2, 8)", 7),
        ("abs(-2.5) + sqrt(16)", 6.5),
        ("  12  ", 12),
    ],
)
def test_evaluate(expression: str, value: float) -> None:
    assert evaluate(expression) == value


@pytest.mark.parametrize(
    ("expression", "code"),
    [
        ("1 / 0", "math_error"),
        ("5 % 0", "math_error"),
        ("sqrt(-1)", "math_error"),
        ("(-8) ** 0.5", "math_error"),
        ("10 ** 100", "too_large"),
        ("9 ** 99", "too_large"),
        ("1e300 * 1e300", "too_large"),
        ("round(1.5, 10 ** 9)", "bad_expression"),
        ("200 * 15%", "bad_expression"),
        ("2 ^ 3", "bad_expression"),
        ("x + 1", "bad_expression"),
        ("__import__('os').system('true')", "bad_expression"),
        ("(1).real", "bad_expression"),
        ("min()", "bad_expression"),
        ("True + 1", "bad_expression"),
        ("'a' * 3", "bad_expression"),
        ("(" * 300 + "1" + ")" * 300, "bad_expression"),
        ("1\x00", "bad_expression"),
    ],
)
def test_evaluate_refuses(expression: str, code: str) -> None:
    with pytest.raises(ToolError) as info:
        evaluate(expression)
    assert info.value.code == code


@pytest.mark.parametrize(
    ("value", "source", "target", "result"),
    [
        (1, "km", "m", 1000.0),
        (12, "in", "cm", 30.48),
        (1, "lb", "kg", 0.453592),
        (1, "gal", "l", 3.785412),
        (100, "C", "F", 212.0),
        (0, "K", "C", -273.15),
        (-40, "F", "C", -40.0),
    ],
)
def test_convert_value(value: float, source: str, target: str, result: float) -> None:
    assert convert_value(value, source, target) == result


def test_convert_between_dimensions_is_refused() -> None:
    with pytest.raises(ToolError) as info:
        convert_value(1, "kg", "l")
    assert info.value.code == "incompatible" and "pick a target unit that measures mass" == info.value.hint
