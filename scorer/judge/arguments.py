"""Comparing one call's arguments with an expected action's (docs/metrics.md §3). Pure."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from probegate.scorer.judge.normalize import normalize_value, same
from probegate.tasks.loader import ArgMatch


@dataclass(frozen=True)
class ArgDiff:
    """Why one argument did not match: ``missing``, ``unexpected`` or ``different``."""

    key: str
    reason: str
    expected: Any = None
    actual: Any = None

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form (evidence)."""
        return {"key": self.key, "reason": self.reason, "expected": self.expected, "actual": self.actual}


def _strict_equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def compare_args(
    expected: dict[str, Any],
    actual: dict[str, Any] | None,
    mode: ArgMatch,
    tool: str | None = None,
    free: Collection[str] = (),
) -> list[ArgDiff]:
    """Compare arguments under ``mode`` (``exact``, ``normalized``, ``subset``, ``any``).

    Args:
        expected: the expected action's arguments.
        actual: the call's arguments (``None`` when unreadable).
        mode: the match mode.
        tool: the tool (selects per-tool normalisers).
        free: keys whose values are free text: left out on both sides.

    Returns:
        The differences, sorted by key; empty when they match.
    """
    if mode == "any":
        return []
    if actual is None:
        return [ArgDiff("*", "unreadable", expected, None)]
    if free:
        expected = {k: v for k, v in expected.items() if k not in free}
        actual = {k: v for k, v in actual.items() if k not in free}
    if mode == "exact":
        keys = sorted(set(expected) | set(actual))
        return [_diff(k, expected, actual) for k in keys if not (k in expected and k in actual and _strict_equal(expected[k], actual[k]))]
    want = normalize_value(expected, tool)
    got = normalize_value(actual, tool)
    keys = sorted(set(want) if mode == "subset" else set(want) | set(got))
    return [_diff(k, expected, actual) for k in keys if not (k in want and k in got and same(want[k], got[k]))]


def _diff(key: str, expected: dict[str, Any], actual: dict[str, Any]) -> ArgDiff:
    if key not in actual or actual[key] is None:
        return ArgDiff(key, "missing", expected.get(key), None)
    if key not in expected or expected[key] is None:
        return ArgDiff(key, "unexpected", None, actual[key])
    return ArgDiff(key, "different", expected[key], actual[key])
