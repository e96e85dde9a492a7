"""Argument value normalisation for the ``normalized`` and ``subset`` match modes.

The rules are the ones written in docs/metrics.md §3, and only those: strings are
NFKC-normalised, case-folded and whitespace-collapsed; ``1``, ``1.0`` and ``"1"`` are
the same number; ``"true"`` is ``True``; known aliases map to a canonical value;
per-parameter normalisers handle e-mail addresses, phone numbers and dates; lists
compare as multisets. Nothing is fuzzy: no substring, prefix or similarity.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from datetime import datetime
from typing import Any

Normalizer = Callable[[Any], Any]

#: Canonical values per parameter name: ``ALIASES[param][alias] = canonical``
#: (keys and values already normalised: lower case, single spaces).
ALIASES: dict[str, dict[str, str]] = {
    "city": {
        "nyc": "new york",
        "new york city": "new york",
        "ny": "new york",
        "sf": "san francisco",
        "la": "los angeles",
        "北京": "beijing",
        "北京市": "beijing",
        "上海": "shanghai",
        "上海市": "shanghai",
        "东京": "tokyo",
        "東京": "tokyo",
        "伦敦": "london",
        "巴黎": "paris",
        "深圳": "shenzhen",
        "广州": "guangzhou",
    },
    "currency": {
        "$": "usd",
        "us$": "usd",
        "dollar": "usd",
        "dollars": "usd",
        "us dollar": "usd",
        "€": "eur",
        "euro": "eur",
        "euros": "eur",
        "£": "gbp",
        "pound": "gbp",
        "rmb": "cny",
        "yuan": "cny",
        "人民币": "cny",
        "元": "cny",
        "jpy¥": "jpy",
        "yen": "jpy",
        "日元": "jpy",
    },
    "unit": {"celsius": "c", "°c": "c", "℃": "c", "fahrenheit": "f", "°f": "f", "℉": "f"},
    "units": {"celsius": "metric", "c": "metric", "fahrenheit": "imperial", "f": "imperial"},
}

_EMAIL_PARAMS = re.compile(r"(^|_)(e?mail|to|cc|bcc|from|sender|recipients?|emails?|address)($|_)")
_PHONE_PARAMS = re.compile(r"(^|_)(phone|tel|mobile)($|_)")
_PATH_PARAMS = re.compile(r"(^|_)(path|folder|dir|directory|file)($|_)")
_DATE_PARAMS = re.compile(r"(^|_)(date|day|deadline|due|since|until|start|end)($|_)")
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%Y.%m.%d", "%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%d %b %Y", "%Y年%m月%d日")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")

_REGISTRY: dict[tuple[str | None, str], Normalizer] = {}


def register_normalizer(tool: str | None, param: str, fn: Normalizer) -> None:
    """Add a normaliser for ``param`` of ``tool`` (``None``: of every tool).

    It runs on the raw value (each item of a list) instead of the number, boolean
    and alias rules; a string it returns is still case-folded and whitespace-collapsed.
    A per-tool entry wins over a generic one.
    """
    _REGISTRY[(tool, param)] = fn


def text(value: str) -> str:
    """NFKC, case-folded, stripped, inner whitespace collapsed."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", value)).strip().casefold()


def number(value: Any) -> Any:
    """``1``, ``1.0``, ``"1"`` -> ``1``; ``"2.50"`` -> ``2.5``; anything else unchanged."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        value = float(value.strip())
    if isinstance(value, (int, float)):
        as_float = float(value)
        return int(as_float) if as_float.is_integer() and abs(as_float) < 2**53 else as_float
    return value


def email(value: Any) -> Any:
    """``"Bob <Bob@X.com>"`` -> ``"bob@x.com"``; non-addresses unchanged."""
    if not isinstance(value, str) or "@" not in value:
        return value
    inner = re.search(r"<([^<>@\s]+@[^<>\s]+)>", value)
    return (inner.group(1) if inner else value).strip().lower()


def phone(value: Any) -> Any:
    """Digits only (a leading ``+`` kept), when the value looks like a phone number."""
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        return value
    raw = str(value).strip()
    digits = re.sub(r"[\s().\-]", "", raw)
    return digits if re.fullmatch(r"\+?\d{5,}", digits) else value


def date(value: Any) -> Any:
    """A date in a common format -> ISO ``YYYY-MM-DD``; anything else unchanged."""
    if not isinstance(value, str):
        return value
    raw = value.strip()
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(raw, fmt).date().isoformat()
        except ValueError:
            continue
    return value


def path(value: Any) -> Any:
    """A workspace path with one leading slash and no repeated or trailing slashes."""
    if not isinstance(value, str) or not value.strip():
        return value
    return "/" + "/".join(p for p in value.strip().split("/") if p)


def _param_rule(tool: str | None, param: str | None) -> Normalizer | None:
    if param is None:
        return None
    for key in ((tool, param), (None, param)):
        if key in _REGISTRY:
            return _REGISTRY[key]
    lowered = param.lower()
    if _EMAIL_PARAMS.search(lowered):
        return email
    if _PHONE_PARAMS.search(lowered):
        return phone
    if _PATH_PARAMS.search(lowered):
        return path
    if _DATE_PARAMS.search(lowered):
        return date
    return None


def _scalar(value: Any, tool: str | None, param: str | None) -> Any:
    rule = _param_rule(tool, param)
    if rule is not None:
        value = rule(value)
        return text(value) if isinstance(value, str) else number(value)
    if isinstance(value, str):
        folded = text(value)
        if folded in ("true", "false"):
            return folded == "true"
        numeric = number(folded)
        if numeric is not folded:
            return numeric
        return ALIASES.get((param or "").lower(), {}).get(folded, folded)
    return number(value)


def sort_key(value: Any) -> str:
    """A total order over normalised values (their canonical JSON)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def same(a: Any, b: Any) -> bool:
    """Equality of normalised values that keeps booleans apart from numbers (``True`` != ``1``)."""
    return sort_key(a) == sort_key(b)


def normalize_value(value: Any, tool: str | None = None, param: str | None = None) -> Any:
    """The normalised form of one argument value (see the module docstring).

    Args:
        value: a JSON value.
        tool: the tool the value is for (selects per-tool normalisers).
        param: the parameter name (selects aliases and per-parameter normalisers).

    Returns:
        A JSON-like value; lists become sorted lists (multiset comparison); objects
        keep their keys and have ``null`` members dropped.
    """
    if isinstance(value, dict):
        return {k: normalize_value(v, tool, k) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return sorted((normalize_value(v, tool, param) for v in value), key=sort_key)
    if value is None:
        return None
    return _scalar(value, tool, param)


def call_key(tool: str, args: Any) -> str:
    """A stable identity of a call: tool name plus normalised arguments."""
    return f"{tool}:{sort_key(normalize_value(args if isinstance(args, dict) else {'_': args}, tool))}"
