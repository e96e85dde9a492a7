"""Failure labels, stages and the attribution record (docs/metrics.md §9)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Label = Literal[
    "interop",
    "context_truncation",
    "format_mismatch",
    "fake_completion",
    "retry_loop",
    "intent_miss",
    "param_error",
    "premature_finish",
]
Stage = Literal["first_action", "mid_chain", "final_answer"]

#: Labels in precedence order (the first label of an attempt is its primary label).
LABELS: tuple[Label, ...] = (
    "interop",
    "context_truncation",
    "format_mismatch",
    "fake_completion",
    "retry_loop",
    "intent_miss",
    "param_error",
    "premature_finish",
)


@dataclass(frozen=True)
class Attribution:
    """One reason an attempt failed.

    Attributes:
        label: the failure class.
        rule: the rule that fired (``label.rule``).
        step_id: the step that triggered it, when one did.
        exchange_seq: the exchange that triggered it, for wire evidence.
        evidence: one line saying what was seen.
    """

    label: Label
    rule: str
    evidence: str
    step_id: int | None = None
    exchange_seq: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form."""
        return {
            "label": self.label,
            "rule": self.rule,
            "evidence": self.evidence,
            "step_id": self.step_id,
            "exchange_seq": self.exchange_seq,
        }
