"""What scoring established about one attempt, shared by reach, stage and attribution. Pure."""

from __future__ import annotations

import json
from dataclasses import dataclass

from probegate.scorer.judge.answer import Check, ungrounded
from probegate.scorer.judge.matching import ActualCall, Alignment
from probegate.scorer.trajectory import Trajectory
from probegate.tasks.loader import Task


@dataclass(frozen=True)
class Facts:
    """The inputs of every per-attempt judgement.

    Attributes:
        trajectory: the attempt.
        task: its task.
        calls: the calls that ran, in run order (retries included).
        alignment: expected actions vs calls.
        answer_checks: the final-answer checks.
        verify_checks: the outcome checks on the final world state.
    """

    trajectory: Trajectory
    task: Task
    calls: tuple[ActualCall, ...]
    alignment: Alignment
    answer_checks: tuple[Check, ...]
    verify_checks: tuple[Check, ...]

    @property
    def answer_ok(self) -> bool:
        """Every answer check holds."""
        return all(c.ok for c in self.answer_checks)

    @property
    def verify_ok(self) -> bool:
        """Every verify check holds (true when there are none)."""
        return all(c.ok for c in self.verify_checks)

    @property
    def passed(self) -> bool:
        """Chain complete, clean, verified and answered (docs/metrics.md §5)."""
        a = self.alignment
        return a.complete and a.clean and self.verify_ok and self.answer_ok

    @property
    def expected_tools(self) -> set[str]:
        """Tools of the task's expected actions."""
        return {e.tool for e in self.task.expected_actions}

    @property
    def side_effect_tools(self) -> set[str]:
        """Tools of expected actions marked ``side_effect``."""
        return {e.tool for e in self.task.expected_actions if e.side_effect}

    @property
    def observed(self) -> str:
        """Every observation the agents of this attempt received (tool results and the
        probe log's results), as one JSON-ish text."""
        parts = [json.dumps(c.result, ensure_ascii=False, default=str) for c in self.trajectory.probe_calls if c.result is not None]
        for step in self.trajectory.steps:
            if step.observation is not None:
                obs = step.observation
                parts.append(obs if isinstance(obs, str) else json.dumps(obs, ensure_ascii=False, default=str))
        return "\n".join(parts)

    @property
    def answer_grounded(self) -> bool:
        """The answer holds and is grounded (docs/metrics.md §7, ``info``): every value it
        was checked for reached the agent in an observation of this attempt, or the whole
        expected chain ran (a value derived from the fetched inputs, such as a total)."""
        if not self.answer_ok:
            return False
        answer = self.trajectory.final_answer or ""
        return self.alignment.complete or not ungrounded(answer, self.task.expected_answer, self.observed)

    def step_of(self, call_index: int) -> int | None:
        """The step id of the call at ``call_index``, when known."""
        return next((c.step_id for c in self.calls if c.index == call_index), None)
