"""Calculator and conversions: arithmetic, units, currencies (at the world's fixed rates)."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from probegate.probes.catalog import _schema as s
from probegate.probes.tool import ToolContext, ToolError, tool

DOMAIN = "calc"
LIMIT = 1e15
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


def _round(value: float, digits: int = 0) -> float:
    if type(digits) is not int or abs(digits) > 15:
        raise ToolError("bad_expression", "round() takes a whole number of digits between -15 and 15")
    return round(value, digits)


_FUNCS: dict[str, Callable[..., Any]] = {"round": _round, "min": min, "max": max, "abs": abs, "sqrt": math.sqrt}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
EXPRESSION_HINT = "use numbers, + - * / // % ** and parentheses, and round/min/max/abs/sqrt; write 15% as 0.15"


def _checked(value: Any) -> Any:
    if isinstance(value, complex):
        raise ToolError("math_error", "the expression has no real result")
    if (isinstance(value, float) and not math.isfinite(value)) or abs(value) > LIMIT:
        raise ToolError("too_large", f"the result exceeds {LIMIT:.0e}", "split the calculation into smaller steps")
    return value


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return _checked(node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ToolError("too_large", "exponents above 64 are not supported", "split the calculation")
        return _checked(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS and not node.keywords:
        return _checked(_FUNCS[node.func.id](*(_eval(a) for a in node.args)))
    raise ToolError("bad_expression", f"unsupported syntax: {ast.dump(node)[:80]}", EXPRESSION_HINT)


def evaluate(expression: str) -> int | float:
    """Evaluate arithmetic safely (no names, attributes or calls beyond round/min/max/abs/sqrt).

    Raises:
        ToolError: ``bad_expression``, ``math_error`` (division by zero, sqrt of a
            negative) or ``too_large`` (results beyond 1e15, exponents above 64).
    """
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ToolError("bad_expression", f"cannot parse {expression!r}: {type(exc).__name__}", EXPRESSION_HINT) from None
    try:
        value = _eval(tree.body)
    except (ZeroDivisionError, ValueError, OverflowError) as exc:
        raise ToolError("math_error", f"{expression!r}: {exc}", "check for division by zero or invalid inputs") from None
    except (TypeError, RecursionError) as exc:
        raise ToolError("bad_expression", f"{expression!r}: {exc}", EXPRESSION_HINT) from None
    return round(value, 10) if isinstance(value, float) else value


@tool(
    "calculate",
    DOMAIN,
    "Evaluate an arithmetic expression exactly, e.g. '(429 * 4 + 69 * 4) * 0.9'. "
    "Do NOT use it for unit or currency conversions (use convert_units / convert_currency).",
    s.params(["expression"], expression=s.string("Arithmetic expression.", minLength=1, maxLength=500)),
    returns="expression, result (number)",
)
def calculate(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return {"expression": args["expression"], "result": evaluate(args["expression"])}


#: unit -> (dimension, factor to the dimension's base unit); temperatures are special-cased.
UNITS: dict[str, tuple[str, float]] = {
    "mm": ("length", 0.001), "cm": ("length", 0.01), "m": ("length", 1.0), "km": ("length", 1000.0),
    "in": ("length", 0.0254), "ft": ("length", 0.3048), "yd": ("length", 0.9144), "mi": ("length", 1609.344),
    "g": ("mass", 0.001), "kg": ("mass", 1.0), "t": ("mass", 1000.0),
    "oz": ("mass", 0.028349523125), "lb": ("mass", 0.45359237),
    "ml": ("volume", 0.001), "l": ("volume", 1.0), "m3": ("volume", 1000.0),
    "gal": ("volume", 3.785411784), "floz": ("volume", 0.0295735295625),
    "C": ("temperature", 1.0), "F": ("temperature", 1.0), "K": ("temperature", 1.0),
}


def _to_kelvin(value: float, unit: str) -> float:
    return {"C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15, "K": value}[unit]


def _from_kelvin(value: float, unit: str) -> float:
    return {"C": value - 273.15, "F": (value - 273.15) * 9 / 5 + 32, "K": value}[unit]


def convert_value(value: float, source: str, target: str) -> float:
    """``value`` in ``source`` units expressed in ``target`` units (rounded to 6 decimals).

    Raises:
        ToolError: ``incompatible`` when the units measure different things.
    """
    (dim_a, fa), (dim_b, fb) = UNITS[source], UNITS[target]
    if dim_a != dim_b:
        raise ToolError("incompatible", f"cannot convert {dim_a} ({source}) to {dim_b} ({target})",
                        f"pick a target unit that measures {dim_a}")
    if dim_a == "temperature":
        return round(_from_kelvin(_to_kelvin(value, source), target), 6)
    return round(value * fa / fb, 6)


@tool(
    "convert_units",
    DOMAIN,
    "Convert a value between units of length, mass, volume or temperature (C, F, K). "
    "Do NOT use it for money (use convert_currency).",
    s.params(
        ["value", "from_unit", "to_unit"],
        value=s.number("The value to convert.", -1e12, 1e12),
        from_unit=s.enum(sorted(UNITS), "Unit of value."),
        to_unit=s.enum(sorted(UNITS), "Unit to convert to."),
    ),
    returns="value, from_unit, to_unit, result, dimension",
)
def convert_units(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    result = convert_value(args["value"], args["from_unit"], args["to_unit"])
    return {**args, "result": result, "dimension": UNITS[args["from_unit"]][0]}


@tool(
    "convert_currency",
    DOMAIN,
    "Convert an amount between currencies at today's reference rates. "
    "Do NOT use it for product prices in another currency (get_price takes a currency).",
    s.params(
        ["amount", "from_currency", "to_currency"],
        amount=s.number("Amount to convert.", 0, 1e12),
        from_currency=s.CURRENCY,
        to_currency=s.CURRENCY,
    ),
    returns="amount, from_currency, to_currency, rate, converted, rates_date",
)
def convert_currency(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    rates = ctx.state["currency_rates"]
    rate = rates[args["to_currency"]] / rates[args["from_currency"]]
    digits = 0 if args["to_currency"] == "JPY" else 2
    return {
        **args,
        "rate": round(rate, 6),
        "converted": round(args["amount"] * rate, digits),
        "rates_date": ctx.today.isoformat(),
    }


TOOLS = [calculate, convert_units, convert_currency]
