"""The task scorer (inspect_ai's shape): a factory returns ``(trajectory, task) -> Score``.

The returned callable is pure given its hooks: ``verify`` runs the outcome checks
(default :func:`probegate.scorer.judge.outcome.verify_outcome`) and ``initial_state`` supplies the
world state of an attempt that changed nothing (no ``WorldState`` row).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from probegate.scorer.judge.answer import Check, check_answer
from probegate.scorer.judge.failures import Attribution, Stage, attribute, stage
from probegate.scorer.rebuild.calls import actual_calls
from probegate.scorer.judge.facts import Facts
from probegate.scorer.judge.matching import Alignment, align
from probegate.scorer.judge.outcome import verify_outcome
from probegate.scorer.judge.reach import dimensions, path_depth
from probegate.scorer.trajectory import Trajectory
from probegate.scorer.judge.world import initial_state as fixture_state
from probegate.tasks.loader import Task, VerifyCheck

Verifier = Callable[[dict[str, Any] | None, Sequence[VerifyCheck]], list[Check]]
InitialState = Callable[[Task], dict[str, Any] | None]
TaskScorer = Callable[[Trajectory, Task], "Score"]


@dataclass(frozen=True)
class Score:
    """The score of one attempt.

    Attributes:
        value: 1.0 when it passed, else ``Alignment.partial_credit`` (docs/metrics.md §5).
        passed: chain complete, clean, verified and answered.
        explanation: one line for humans.
        evidence: JSON-ready details (alignment, checks, misuse).
        alignment: expected actions vs calls.
        answer_checks: final-answer checks.
        verify_checks: outcome checks.
        dimensions: the five reach dimensions.
        depth: path depth 0-4.
        stage: where it died (``None`` when it passed).
        attributions: why it failed, primary first.
        interop: it failed because the model server rejected a request (excluded from reach).
    """

    value: float
    passed: bool
    explanation: str
    evidence: dict[str, Any] = field(default_factory=dict)
    alignment: Alignment = field(default_factory=Alignment)
    answer_checks: tuple[Check, ...] = ()
    verify_checks: tuple[Check, ...] = ()
    dimensions: dict[str, bool] = field(default_factory=dict)
    depth: int = 0
    stage: Stage | None = None
    attributions: tuple[Attribution, ...] = ()
    interop: bool = False

    @property
    def labels(self) -> list[str]:
        """Distinct attribution labels, primary first."""
        return list(dict.fromkeys(a.label for a in self.attributions))

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form (trace files)."""
        return {
            "value": self.value,
            "passed": self.passed,
            "explanation": self.explanation,
            "evidence": self.evidence,
            "dimensions": self.dimensions,
            "depth": self.depth,
            "stage": self.stage,
            "labels": self.labels,
            "attributions": [a.to_json() for a in self.attributions],
            "interop": self.interop,
        }


def _explain(facts: Facts, passed: bool, attributions: list[Attribution]) -> str:
    a = facts.alignment
    head = f"{len(a.matched)}/{a.n_expected} expected actions matched"
    if passed:
        return f"passed: {head}, verified and answered"
    reason = attributions[0].evidence if attributions else "failed"
    return f"failed: {head}; {attributions[0].rule if attributions else ''}: {reason}".replace("; : ", "; ")


def _evidence(facts: Facts) -> dict[str, Any]:
    a = facts.alignment
    return {
        "alignment": a.to_json(),
        "misuse": a.misuse(),
        "accuracy": a.accuracy,
        "misuse_rate": a.misuse_rate,
        "answer_checks": [c.to_json() for c in facts.answer_checks],
        "verify_checks": [c.to_json() for c in facts.verify_checks],
    }


def catalog_side_effect_tools() -> frozenset[str]:
    """Tools the probe catalogue marks as changing the world (empty without probes)."""
    try:
        from probegate.probes.catalog import CATALOG
    except ImportError:
        return frozenset()
    return frozenset(name for name, tool in CATALOG.items() if tool.side_effect)


def task_scorer(
    verify: Verifier = verify_outcome,
    initial_state: InitialState | None = fixture_state,
    side_effect_tools: Collection[str] | None = None,
) -> TaskScorer:
    """Build the task scorer.

    Args:
        verify: runs a task's ``verify`` checks on a world state.
        initial_state: the world state of an attempt without a ``WorldState`` row
            (default: the task's world fixture from the probes).
        side_effect_tools: tools that change the world (default: the probe catalogue's).

    Returns:
        ``score(trajectory, task) -> Score``.
    """
    side_tools = frozenset(catalog_side_effect_tools() if side_effect_tools is None else side_effect_tools)

    def score(trajectory: Trajectory, task: Task) -> Score:
        calls = tuple(actual_calls(trajectory))
        state = trajectory.world_state
        if state is None and initial_state is not None:
            state = initial_state(task)
        facts = Facts(
            trajectory=trajectory,
            task=task,
            calls=calls,
            alignment=align(task.expected_actions, calls, task.order, side_tools),
            answer_checks=tuple(check_answer(trajectory.final_answer, task.expected_answer, task.trap.value)),
            verify_checks=tuple(verify(state, task.verify)),
        )
        passed = facts.passed
        found = attribute(facts)
        value = 1.0 if passed else facts.alignment.partial_credit
        return Score(
            value=value,
            passed=passed,
            explanation=_explain(facts, passed, found),
            evidence=_evidence(facts),
            alignment=facts.alignment,
            answer_checks=facts.answer_checks,
            verify_checks=facts.verify_checks,
            dimensions=dimensions(facts),
            depth=path_depth(facts),
            stage=stage(facts),
            attributions=tuple(found),
            interop=any(a.label == "interop" for a in found),
        )

    return score
