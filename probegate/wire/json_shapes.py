"""Defensive reads of decoded JSON whose shape nobody promised.

Request bodies are whatever the client sent, and stored rows may have been damaged
by hand or by an older tool, so a key that should hold an array can hold a number.
These helpers read such values without ever raising.
"""

from __future__ import annotations

from typing import Any


def items(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else ``[]`` (``None``, numbers, strings, objects)."""
    return value if isinstance(value, list) else []


def field_items(obj: Any, key: str) -> list[Any]:
    """``obj[key]`` when ``obj`` is an object and that value is an array, else ``[]``."""
    return items(obj.get(key)) if isinstance(obj, dict) else []


def mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else ``{}``."""
    return value if isinstance(value, dict) else {}
