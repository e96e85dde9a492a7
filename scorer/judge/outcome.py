"""Outcome checks: the task's ``verify`` list applied to the attempt's final world state.

The one place the scorer calls the probes' verification code
(``probegate.probes.verify.run_check(state, check) -> CheckResult(ok, evidence)``, pure).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from probegate.scorer.judge.answer import Check
from probegate.tasks.loader import VerifyCheck


def verify_outcome(state: dict[str, Any] | None, checks: Sequence[VerifyCheck]) -> list[Check]:
    """Run every verify check on ``state``.

    Args:
        state: the attempt's final world state (``WorldState.state``, or the world's
            initial state when no side effect happened); ``None`` when unknown.
        checks: the task's ``verify`` list.

    Returns:
        One :class:`~probegate.scorer.judge.answer.Check` per verify check, named ``verify.<check>``.
        A check that raises is a failed check whose evidence says so (a broken task
        must not pass).
    """
    if not checks:
        return []
    from probegate.probes.verify import run_check

    out = []
    for check in checks:
        spec = {"check": check.check, **check.params()}
        name = f"verify.{check.check}"
        if state is None:
            out.append(Check(name, False, "no world state recorded for this attempt"))
            continue
        try:
            result = run_check(state, spec)
        except Exception as exc:  # noqa: BLE001  (a check that crashes must fail visibly, not pass)
            out.append(Check(name, False, f"the check raised {type(exc).__name__}: {exc}"))
            continue
        out.append(Check(name, bool(result.ok), str(result.evidence)))
    return out
