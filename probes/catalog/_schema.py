"""Small builders for the tools' JSON Schemas, so each catalogue entry reads like a signature.

Formats are probegate's own (see :mod:`probegate.probes.validate`): ``date`` is ``YYYY-MM-DD``,
``time`` is a 24-hour ``HH:MM``, ``email`` is ``name@domain.tld``.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]


def params(required: list[str] | None = None, **properties: Schema) -> Schema:
    """An arguments object: the given properties, ``required`` ones, no other keys."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required or []),
        "additionalProperties": False,
    }


def string(description: str, **extra: Any) -> Schema:
    """A string property."""
    return {"type": "string", "description": description, **extra}


def text(description: str, max_length: int = 20_000) -> Schema:
    """A non-empty free-text string."""
    return string(description, minLength=1, maxLength=max_length)


def ident(description: str, pattern: str) -> Schema:
    """An entity id such as ``SKU-1001`` (case-insensitive pattern)."""
    return string(description, pattern=pattern)


def email(description: str) -> Schema:
    """An email address."""
    return string(description, format="email")


def date(description: str) -> Schema:
    """A calendar date ``YYYY-MM-DD``."""
    return string(description, format="date")


def time(description: str) -> Schema:
    """A 24-hour time ``HH:MM``."""
    return string(description, format="time")


def enum(values: list[str], description: str) -> Schema:
    """One of ``values``."""
    return {"type": "string", "enum": values, "description": description}


def integer(description: str, minimum: int | None = None, maximum: int | None = None) -> Schema:
    """An integer, optionally bounded."""
    out: Schema = {"type": "integer", "description": description}
    if minimum is not None:
        out["minimum"] = minimum
    if maximum is not None:
        out["maximum"] = maximum
    return out


def number(description: str, minimum: float | None = None, maximum: float | None = None) -> Schema:
    """A number, optionally bounded."""
    out: Schema = {"type": "number", "description": description}
    if minimum is not None:
        out["minimum"] = minimum
    if maximum is not None:
        out["maximum"] = maximum
    return out


def boolean(description: str) -> Schema:
    """A boolean."""
    return {"type": "boolean", "description": description}


def array(items: Schema, description: str, max_items: int = 20) -> Schema:
    """A list of ``items`` (no duplicates)."""
    return {"type": "array", "items": items, "description": description, "maxItems": max_items, "uniqueItems": True}


SKU = ident("Product SKU, e.g. SKU-1001.", r"^[Ss][Kk][Uu]-[0-9]{4}$")
ORDER_ID = ident("Customer order id, e.g. ORD-5001.", r"^[Oo][Rr][Dd]-[0-9]{4}$")
CUSTOMER_ID = ident("Customer id, e.g. CUST-1001.", r"^[Cc][Uu][Ss][Tt]-[0-9]{4}$")
TICKET_ID = ident("Support ticket id, e.g. TCK-3001.", r"^[Tt][Cc][Kk]-[0-9]{4}$")
PRIORITY = enum(["low", "normal", "high", "urgent"], "Ticket priority.")
CURRENCY = enum(["EUR", "USD", "GBP", "CHF", "JPY", "SGD", "AUD", "CNY"], "ISO 4217 currency code.")
WAREHOUSE = enum(["Berlin", "Hamburg"], "Warehouse.")
PATH = string(
    "Workspace path starting with '/', e.g. /reports/weekly.md.",
    pattern=r"^/[A-Za-z0-9._/-]{1,200}$",
)
