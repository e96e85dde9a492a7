"""Final-answer checks (``expected_answer``, docs/metrics.md §5). Pure.

Every given field must hold; text comparisons are case-insensitive and NFKC-normalised.
Answers must be grounded: the task's trap value in the answer fails it
(``answer.trap``), and so does an answer that enumerates many candidates of a
checked kind (numbers, dates, times, IDs): a hedge, not an answer (``answer.hedge``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from probegate.scorer.judge.normalize import normalize_value, same, text
from probegate.tasks.loader import ExpectedAnswer

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+")
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE = re.compile(
    rf"\b\d{{4}}-\d{{1,2}}-\d{{1,2}}\b|\b\d{{1,2}}/\d{{1,2}}/\d{{2,4}}\b|\b{_MONTHS} \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)? {_MONTHS}(?: \d{{4}})?\b|\d{{4}}年\d{{1,2}}月\d{{1,2}}日",
    re.IGNORECASE,
)
_TIME = re.compile(r"\b\d{1,2}:\d{2}\b")
_ID = re.compile(r"\b([A-Z]{2,6})-\d{2,}\b", re.IGNORECASE)
#: An answer naming more distinct candidates of a checked kind than this is a hedge
#: (or twice the values of that kind the task expects, if more).
HEDGE_LIMITS: dict[str, int] = {"number": 25, "date": 5, "time": 5, "id": 6}


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


def value_kind(value: str) -> str | None:
    """The kind of an expected value: ``date``, ``time``, ``id``, ``number`` or ``None`` (text)."""
    value = value.strip()
    for kind, pattern in (("date", _DATE), ("time", _TIME), ("id", _ID), ("number", _NUMBER)):
        if pattern.fullmatch(value):
            return kind
    return None


def candidates(answer: str, kind: str, like: str | None = None) -> set[str]:
    """Distinct candidates of ``kind`` written in ``answer`` (IDs: those with ``like``'s prefix)."""
    if kind == "number":
        return {f"{n:g}" for n in numbers_in(answer)}
    if kind == "id":
        prefix = _ID.fullmatch(like.strip()).group(1).upper() if like and _ID.fullmatch(like.strip()) else None
        return {m.group(0).upper() for m in _ID.finditer(answer) if prefix is None or m.group(1).upper() == prefix}
    pattern = _DATE if kind == "date" else _TIME
    return {text(m.group(0)) for m in pattern.finditer(answer)}


def _checked_kinds(expected: ExpectedAnswer) -> dict[tuple[str, str | None], int]:
    """``(kind, example)`` -> how many expected values of that kind the task names."""
    kinds: dict[tuple[str, str | None], int] = {}
    if expected.number is not None:
        kinds[("number", None)] = 1
    for needle in [*expected.contains, *(group[0] for group in expected.contains_any)]:
        kind = value_kind(needle)
        if kind is not None:
            key = (kind, needle if kind == "id" else None)
            kinds[key] = kinds.get(key, 0) + 1
    return kinds


def hedge_check(answer: str, expected: ExpectedAnswer) -> Check | None:
    """A failed ``answer.hedge`` check when the answer enumerates more candidates of a
    checked kind than :data:`HEDGE_LIMITS` allows; ``None`` when it does not."""
    for (kind, like), wanted in sorted(_checked_kinds(expected).items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        found = len(candidates(answer, kind, like))
        limit = max(HEDGE_LIMITS[kind], 2 * wanted)
        if found > limit:
            noun = {"id": "IDs", "number": "numbers", "date": "dates", "time": "times"}[kind]
            return Check("answer.hedge", False, f"the answer lists {found} distinct {noun} (more than {limit}): a hedge, not an answer")
    return None


def trap_text(trap_value: Any) -> str | None:
    """The trap value as folded text, when it is a scalar (``None`` for none, objects, lists)."""
    if trap_value is None or isinstance(trap_value, (dict, list, bool)):
        return None
    return text(str(trap_value)) or None


def carries(answer: str, value: str) -> bool:
    """Whether ``answer`` carries ``value`` as a whole token (``9.4`` is not in ``19.45``)."""
    pattern = rf"(?<![\w.,]){re.escape(text(value))}(?![\w]|[.,]\d)"
    return re.search(pattern, text(answer)) is not None


def check_answer(answer: str | None, expected: ExpectedAnswer | None, trap: Any = None) -> list[Check]:
    """Check a final answer against a task's ``expected_answer`` and trap.

    Args:
        answer: the trajectory's final answer (``None`` when it gave none).
        expected: the task's expected answer; ``None`` means "any non-empty answer".
        trap: the task's ``trap.value``; when it is a scalar that the answer carries,
            a failed ``answer.trap`` check is added.

    Returns:
        One :class:`Check` per given field (one ``answer.present`` check when there is
        no answer or no expectation), then ``answer.trap`` and ``answer.hedge`` when
        they fail.
    """
    if not answer or not answer.strip():
        return [Check("answer.present", False, "no final answer")]
    checks = _grounding(answer, expected, trap)
    if expected is None:
        return [Check("answer.present", True, "a final answer was given"), *checks]
    return _fields(answer, expected) + checks


def _grounding(answer: str, expected: ExpectedAnswer | None, trap: Any) -> list[Check]:
    checks = []
    folded = trap_text(trap)
    if folded and carries(answer, folded):
        checks.append(Check("answer.trap", False, f"the answer carries the trap value {trap!r}"))
    hedge = hedge_check(answer, expected) if expected is not None else None
    if hedge is not None:
        checks.append(hedge)
    return checks


def _fields(answer: str, expected: ExpectedAnswer) -> list[Check]:
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


def expected_values(answer: str, expected: ExpectedAnswer | None) -> list[str | float]:
    """The values the answer checks looked for and found: every ``contains`` string, the
    alternative of each ``contains_any`` group the answer carries, the ``number``."""
    if expected is None:
        return []
    folded = text(answer)
    values: list[str | float] = list(expected.contains)
    for group in expected.contains_any:
        values += [n for n in group if text(n) in folded][:1]
    if expected.number is not None:
        values.append(expected.number.value)
    return values


def ungrounded(answer: str, expected: ExpectedAnswer | None, observed: str) -> list[str]:
    """Checked values of the answer that no observation of the attempt carried.

    Args:
        answer: the final answer.
        expected: the task's expected answer.
        observed: every observation the agent received in this attempt, as one text.

    Returns:
        The values (as text) absent from ``observed``; numbers compare within the
        task's tolerance.
    """
    seen_numbers = numbers_in(observed)
    folded = text(observed)
    tol = expected.number.tolerance if expected is not None and expected.number is not None else 0.0
    missing = []
    for value in expected_values(answer, expected):
        if isinstance(value, float):
            if not any(abs(n - value) <= tol + 1e-9 for n in seen_numbers):
                missing.append(f"{value:g}")
        elif text(value) not in folded:
            missing.append(value)
    return missing
