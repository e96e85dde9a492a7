"""Matching expected actions against the calls that ran (docs/metrics.md §2-§4). Pure.

:func:`~probegate.scorer.judge.arguments.compare_args` compares one call's arguments under a match mode;
:func:`fold_retries` removes calls that were retried after a tool error;
:func:`align` pairs expected actions and calls one-to-one under an order mode and
classifies every leftover (wrong args, wrong tool, extra, missing).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from probegate.scorer.judge.arguments import ArgDiff, compare_args
from probegate.tasks.loader import ExpectedAction, OrderMode


@dataclass(frozen=True)
class ActualCall:
    """One call that ran (a probe call, or a parsed step call for probe-less runs).

    Attributes:
        index: position in the attempt's call list (``ProbeCallRecord.index``).
        tool: tool name.
        args: the arguments (``None`` when unreadable).
        status: ``ok``, ``error`` (executed, the tool answered an error) or ``blocked``.
        group: calls made in one assistant turn share a group (parallel calls).
        step_id: the step that caused it, when known.
        missing: required parameters the probe found missing (blocked calls).
        invalid: parameters the probe refused, with the reason.
    """

    index: int
    tool: str
    args: dict[str, Any] | None
    status: str = "ok"
    group: int | None = None
    step_id: int | None = None
    missing: tuple[str, ...] = ()
    invalid: tuple[tuple[str, str], ...] = ()


def matches(action: ExpectedAction, call: ActualCall) -> bool:
    """Whether ``call`` satisfies ``action``: same tool, arguments match, not blocked."""
    return call.tool == action.tool and call.status != "blocked" and not compare_args(action.args, call.args, action.match, action.tool, action.free)


def fold_retries(calls: Sequence[ActualCall]) -> tuple[list[ActualCall], list[ActualCall]]:
    """Split calls into (kept, retried): a blocked/error call directly followed by a
    call to the same tool is a retried call (a recovery), not an extra one."""
    kept: list[ActualCall] = []
    retried: list[ActualCall] = []
    for i, call in enumerate(calls):
        following = calls[i + 1] if i + 1 < len(calls) else None
        if call.status in ("blocked", "error") and following is not None and following.tool == call.tool:
            retried.append(call)
        else:
            kept.append(call)
    return kept, retried


@dataclass(frozen=True)
class Alignment:
    """The one-to-one pairing of expected actions (by index) and calls (by ``ActualCall.index``).

    Attributes:
        matched: ``(expected index, call index)`` pairs that match.
        wrong_args: a call to an unmatched expected action's tool whose arguments
            do not match it (or that was blocked).
        wrong_tool: a call to a tool no expected action uses, in place of an action.
        extra: unmatched calls that are not allowed.
        allowed_extra: unmatched calls ``superset`` allows (not side-effecting).
        missing: required expected actions nothing was done for.
        optional_missing: expected actions ``subset`` lets the agent leave out.
        recoveries: calls retried after a tool error (folded away).
        n_expected: expected actions.
        n_actual: calls after folding retries.
        complete: every required action matched.
    """

    matched: tuple[tuple[int, int], ...] = ()
    wrong_args: tuple[tuple[int, int], ...] = ()
    wrong_tool: tuple[tuple[int, int], ...] = ()
    extra: tuple[int, ...] = ()
    allowed_extra: tuple[int, ...] = ()
    missing: tuple[int, ...] = ()
    optional_missing: tuple[int, ...] = ()
    recoveries: tuple[int, ...] = ()
    n_expected: int = 0
    n_actual: int = 0
    complete: bool = False
    order: str = "strict"

    @property
    def clean(self) -> bool:
        """No disallowed extra call and no wrong call."""
        return not (self.extra or self.wrong_args or self.wrong_tool)

    @property
    def accuracy(self) -> float:
        """matched / max(expected, actual); 1.0 only when both are empty."""
        denominator = max(self.n_expected, self.n_actual)
        return len(self.matched) / denominator if denominator else 1.0

    @property
    def n_required(self) -> int:
        """Expected actions the agent had to do (all but ``subset``'s optional ones it left out)."""
        return self.n_expected - len(self.optional_missing)

    @property
    def f1(self) -> float:
        """2 matched / (required + actual): the harmonic mean of recall (matched / required)
        and precision (matched / actual calls after retry folding). Every extra, duplicate
        or blocked call that was not retried lowers it; 0.0 when nothing matched."""
        denominator = self.n_required + self.n_actual
        return 2 * len(self.matched) / denominator if denominator and self.matched else 0.0

    @property
    def partial_credit(self) -> float:
        """The score of an attempt that did not pass: ``f1 * n / (n + 1)`` with n required
        actions, so the outcome (clean, verified, answered) stays the last of n + 1 units
        and partial credit never reaches 1 (docs/metrics.md §5)."""
        n = self.n_required
        return self.f1 * n / (n + 1)

    def misuse(self) -> dict[str, int]:
        """Counts per misuse class."""
        return {
            "wrong_tool": len(self.wrong_tool),
            "wrong_args": len(self.wrong_args),
            "extra": len(self.extra),
            "missing": len(self.missing),
        }

    @property
    def misuse_rate(self) -> float:
        """misuse / (matched + misuse), misuse = wrong tool + wrong args + extra + missing
        (a wrong pair counts once); 0.0 when there is nothing at all."""
        misuse = sum(self.misuse().values())
        events = len(self.matched) + misuse
        return misuse / events if events else 0.0

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form (traces, evidence)."""
        return {
            "matched": [list(p) for p in self.matched],
            "wrong_args": [list(p) for p in self.wrong_args],
            "wrong_tool": [list(p) for p in self.wrong_tool],
            "extra": list(self.extra),
            "allowed_extra": list(self.allowed_extra),
            "missing": list(self.missing),
            "optional_missing": list(self.optional_missing),
            "recoveries": list(self.recoveries),
            "n_expected": self.n_expected,
            "n_actual": self.n_actual,
            "complete": self.complete,
            "clean": self.clean,
            "order": self.order,
        }


def _strict_order(expected: Sequence[ExpectedAction], calls: list[ActualCall]) -> list[ActualCall]:
    """Calls in run order, with each parallel group ordered by the expected order."""

    def first_fit(call: ActualCall) -> int:
        return next((i for i, e in enumerate(expected) if matches(e, call)), len(expected))

    out: list[ActualCall] = []
    i = 0
    while i < len(calls):
        j = i + 1
        while j < len(calls) and calls[i].group is not None and calls[j].group == calls[i].group:
            j += 1
        out.extend(sorted(calls[i:j], key=lambda c: (first_fit(c), c.index)))
        i = j
    return out


def _lcs(expected: Sequence[ExpectedAction], calls: list[ActualCall]) -> list[tuple[int, int]]:
    n, m = len(expected), len(calls)
    ok = [[matches(e, c) for c in calls] for e in expected]
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            take = 1 + best[i + 1][j + 1] if ok[i][j] else 0
            best[i][j] = max(take, best[i + 1][j], best[i][j + 1])
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if ok[i][j] and best[i][j] == 1 + best[i + 1][j + 1]:
            pairs.append((i, calls[j].index))
            i, j = i + 1, j + 1
        elif best[i][j + 1] == best[i][j]:
            j += 1
        else:
            i += 1
    return pairs


def _bipartite(expected: Sequence[ExpectedAction], calls: list[ActualCall]) -> list[tuple[int, int]]:
    owner: dict[int, int] = {}  # call position -> expected index

    def augment(e: int, seen: set[int]) -> bool:
        for j, call in enumerate(calls):
            if j in seen or not matches(expected[e], call):
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = e
                return True
        return False

    for e in range(len(expected)):
        augment(e, set())
    return sorted((e, calls[j].index) for j, e in owner.items())


def _pair_leftovers(
    expected: Sequence[ExpectedAction], left_e: list[int], left_c: list[ActualCall], same_tool: bool
) -> list[tuple[int, int]]:
    tools = {e.tool for e in expected}
    pairs: list[tuple[int, int]] = []
    for e in list(left_e):
        for call in left_c:
            if same_tool:  # a call that would match but came out of order is not "wrong args"
                fits = call.tool == expected[e].tool and not matches(expected[e], call)
            else:
                fits = call.tool not in tools
            if fits:
                pairs.append((e, call.index))
                left_e.remove(e)
                left_c.remove(call)
                break
    return pairs


def align(
    expected: Sequence[ExpectedAction],
    calls: Sequence[ActualCall],
    order: OrderMode = "strict",
    side_effect_tools: Collection[str] = (),
) -> Alignment:
    """Align expected actions with the calls that ran (docs/metrics.md §4).

    Args:
        expected: the task's expected actions.
        calls: the attempt's calls in run order (retries not yet folded).
        order: ``strict``, ``unordered``, ``subset`` or ``superset``.
        side_effect_tools: tools known to change the world (the probe catalogue's);
            the tools of expected actions marked ``side_effect`` always count.

    Returns:
        An :class:`Alignment`.
    """
    kept, retried = fold_retries(calls)
    if order == "strict":
        matched = _lcs(expected, _strict_order(expected, kept))
    else:
        matched = _bipartite(expected, kept)
    done_e = {e for e, _ in matched}
    done_c = {c for _, c in matched}
    left_e = [i for i in range(len(expected)) if i not in done_e]
    left_c = [c for c in kept if c.index not in done_c]
    wrong_args = _pair_leftovers(expected, left_e, left_c, same_tool=True)
    wrong_tool = _pair_leftovers(expected, left_e, left_c, same_tool=False)
    side_tools = {e.tool for e in expected if e.side_effect} | set(side_effect_tools)
    allowed = [c.index for c in left_c if order == "superset" and c.tool not in side_tools]
    extra = [c.index for c in left_c if c.index not in allowed]
    optional = [e for e in left_e if order == "subset" and matched and not expected[e].side_effect]
    missing = [e for e in left_e if e not in optional]
    if order == "subset":
        complete = bool(matched) and all(i in done_e for i, e in enumerate(expected) if e.side_effect)
    else:
        complete = len(matched) == len(expected)
    return Alignment(
        matched=tuple(sorted(matched)),
        wrong_args=tuple(wrong_args),
        wrong_tool=tuple(wrong_tool),
        extra=tuple(extra),
        allowed_extra=tuple(allowed),
        missing=tuple(missing),
        optional_missing=tuple(optional),
        recoveries=tuple(c.index for c in retried),
        n_expected=len(expected),
        n_actual=len(kept),
        complete=complete,
        order=order,
    )


__all__ = ["ActualCall", "Alignment", "ArgDiff", "align", "compare_args", "fold_retries", "matches"]
