"""Tool schemas shown as text and as Python stubs."""

from __future__ import annotations

from typing import Any

import pytest

from probegate.harnesses.schemas import (
    describe_tools,
    parameter_order,
    python_signature,
    python_type,
    schemas_of,
)

STOCK = {
    "type": "function",
    "function": {
        "name": "check_stock",
        "description": "Units in stock for a SKU.",
        "parameters": {
            "type": "object",
            "properties": {
                "warehouse": {"type": "string", "enum": ["berlin", "lyon"], "description": "Only this warehouse."},
                "sku": {"type": "string", "description": "The SKU."},
            },
            "required": ["sku"],
        },
    },
}


@pytest.mark.parametrize(
    ("schema", "annotation"),
    [
        ({"type": "string"}, "str"),
        ({"type": "integer"}, "int"),
        ({"type": "number"}, "float"),
        ({"type": "boolean"}, "bool"),
        ({"type": "object"}, "dict"),
        ({"type": "array", "items": {"type": "string"}}, "list[str]"),
        ({"type": ["string", "null"]}, "str | None"),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, "int | str"),
        ({"enum": ["a", "b"]}, "Literal['a', 'b']"),
        ({}, "Any"),
        (None, "Any"),
    ],
)
def test_python_type(schema: dict[str, Any] | None, annotation: str) -> None:
    assert python_type(schema) == annotation


def test_python_signature_puts_required_first() -> None:
    assert python_signature(STOCK) == (
        "def check_stock(sku: str, warehouse: Literal['berlin', 'lyon'] | None = None) -> dict:\n"
        '    """Units in stock for a SKU.\n'
        "    sku: The SKU.\n"
        '    warehouse: Only this warehouse."""'
    )


def test_parameter_order_and_lookups() -> None:
    assert parameter_order(STOCK["function"]["parameters"]) == ["sku", "warehouse"]
    assert list(schemas_of([STOCK])) == ["check_stock"]
    assert describe_tools([STOCK]).startswith("check_stock: Units in stock for a SKU.\n  parameters: {")
