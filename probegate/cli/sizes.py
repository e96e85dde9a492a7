"""Parsing sizes such as ``32MiB`` (pure)."""

from __future__ import annotations

import re

from probegate.errors import UsageError

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2,
          "mib": 1024**2, "g": 1000**3, "gb": 1000**3, "gib": 1024**3}


def parse_size(text: str) -> int:
    """Bytes in ``text`` (``1048576``, ``512KiB``, ``32MiB``, ``1GB``).

    Raises:
        UsageError: not a size.
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise UsageError(f"not a size: {text!r} (use bytes or a unit such as 512KiB, 32MiB)")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])
