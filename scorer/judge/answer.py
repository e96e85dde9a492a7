"""Final-answer checks (``expected_answer``, docs/metrics.md §5). Pure.

Every given field must hold; text comparisons are case-insensitive and NFKC-normalised.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from probegate.scorer.judge.normalize import normalize_value, same, text
from probegate.tasks.loader import ExpectedAnswer

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+")


@dataclass(frozen=True)
class Check:
    """The outcome of one check (answer field or verify check).

    Attributes:
        name: ``answer.contains``, ``verify.email_sent``, ...
        ok: whether it holds.
        evidence: one line saying why.
    """

    name: str
    ok: bool
    evidence: str

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form."""
        return {"name": self.name, "ok": self.ok, "evidence": self.evidence}


def numbers_in(answer: str) -> list[float]:
    """Every number written in ``answer`` (``1,234.5`` -> 1234.5)."""
    return [float(m.group(0).replace(",", "")) for m in _NUMBER.finditer(answer)]


def _json_objects(answer: str) -> list[dict[str, Any]]:
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    i = 0
    while (i := answer.find("{", i)) >= 0:
        try:
            obj, end = decoder.raw_decode(answer, i)
        except ValueError:
            i += 1
            continue
        if isinstance(obj, dict):
            found.append(obj)
        i = end
    return found


def json_subset(want: Any, got: Any) -> bool:
    """Whether ``got`` contains ``want``: objects by key (recursively), else equal after normalisation."""
    if isinstance(want, dict):
        return isinstance(got, dict) and all(k in got and json_subset(v, got[k]) for k, v in want.items())
    return same(normalize_value(want), normalize_value(got))


def _contains(answer: str, expected: ExpectedAnswer) -> list[Check]:
    folded = text(answer)
    checks = []
    for needle in expected.contains:
        hit = text(needle) in folded
        checks.append(Check("answer.contains", hit, f"{'found' if hit else 'missing'} {needle!r}"))
    for group in expected.contains_any:
        hits = [n for n in group if text(n) in folded]
        checks.append(Check("answer.contains_any", bool(hits), f"found {hits[0]!r}" if hits else f"none of {group!r}"))
    for needle in expected.not_contains:
        hit = text(needle) in folded
        checks.append(Check("answer.not_contains", not hit, f"{'contains' if hit else 'free of'} {needle!r}"))
    return checks


def _regex(answer: str, pattern: str) -> Check:
    try:
        hit = re.search(pattern, answer, re.IGNORECASE) is not None
    except re.error as exc:
        return Check("answer.regex", False, f"invalid pattern {pattern!r}: {exc}")
    return Check("answer.regex", hit, f"{'matches' if hit else 'does not match'} /{pattern}/")


def check_answer(answer: str | None, expected: ExpectedAnswer | None) -> list[Check]:
    """Check a final answer against a task's ``expected_answer``.

    Args:
        answer: the trajectory's final answer (``None`` when it gave none).
        expected: the task's expected answer; ``None`` means "any non-empty answer".

    Returns:
        One :class:`Check` per given field (one ``answer.present`` check when there is
        no answer or no expectation).
    """
    if not answer or not answer.strip():
        return [Check("answer.present", False, "no final answer")]
    if expected is None:
        return [Check("answer.present", True, "a final answer was given")]
    checks = _contains(answer, expected)
    if expected.regex is not None:
        checks.append(_regex(answer, expected.regex))
    if expected.number is not None:
        want, tol = expected.number.value, expected.number.tolerance
        close = [n for n in numbers_in(answer) if abs(n - want) <= tol + 1e-9]
        evidence = f"found {close[0]:g}" if close else f"no number within {tol:g} of {want:g}"
        checks.append(Check("answer.number", bool(close), evidence))
    if expected.json_ is not None:
        hit = any(json_subset(expected.json_, obj) for obj in _json_objects(answer))
        checks.append(Check("answer.json", hit, "a JSON object contains the expected one" if hit else "no JSON object contains the expected one"))
    return checks
