"""Normalising values before they are compared (pure).

Tools look entities up case-insensitively (``sku-1001`` finds ``SKU-1001``), and
outcome checks compare the arguments of a side effect after the same
normalisation, so ``Jonas.Becker@Globex.example `` and ``jonas.becker@globex.example``
are one address and ``"Q3  report"`` contains ``"q3 report"``.
"""

from __future__ import annotations

import re
from typing import Any

_SPACE = re.compile(r"\s+")


def norm_text(value: Any) -> str:
    """Case-folded text with runs of whitespace collapsed to one space and trimmed."""
    return _SPACE.sub(" ", str(value)).strip().casefold()


def norm_email(value: Any) -> str:
    """An email address trimmed and lower-cased (``" A@B.example"`` -> ``"a@b.example"``)."""
    return str(value).strip().lower()


def norm_id(value: Any) -> str:
    """An entity id trimmed and upper-cased (``" sku-1001"`` -> ``"SKU-1001"``)."""
    return str(value).strip().upper()


def norm_path(value: Any) -> str:
    """A workspace path with one leading slash and no repeated or trailing slashes."""
    parts = [p for p in str(value).strip().split("/") if p]
    return "/" + "/".join(parts)


def contains(haystack: Any, needle: Any) -> bool:
    """Whether ``needle`` occurs in ``haystack`` after :func:`norm_text` on both."""
    return norm_text(needle) in norm_text(haystack)


def as_list(value: Any) -> list[Any]:
    """``value`` as a list: ``None`` -> ``[]``, a scalar -> ``[value]``."""
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def same_value(expected: Any, actual: Any) -> bool:
    """Loose equality used for fault ``when`` matches: text compares with
    :func:`norm_text`, numbers by value (``1 == 1.0``), lists item by item."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return float(expected) == float(actual)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(map(same_value, expected, actual))
    if isinstance(expected, str) and isinstance(actual, str):
        return norm_text(expected) == norm_text(actual)
    return bool(expected == actual)
