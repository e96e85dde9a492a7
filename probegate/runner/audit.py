"""``probegate selftest --agents``: run the audit agents through the real runner and
check their ceilings (docs/metrics.md §10).

Every agent of :mod:`probegate.scorer.selftest.agents` runs as a ``cmd:`` harness over
the whole task set, against a scripted model server on loopback that refuses every
valid request and rejects malformed ones
(:func:`probegate.testing.models.do_nothing_model`), into a store of its own. Then
:func:`judge_audit` checks what a scorer that cannot be gamed must show: every gaming
agent at reach 0 with a mean score below the honest baseline's, and the poisoning
agent's run marked invalid environment.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probegate.runner.execute import RunConfig, execute
from probegate.scorer.report.validity import DEFAULT_MAX_INTEROP
from probegate.scorer.selftest.agents import AGENTS, AuditAgent
from probegate.store import new_id
from probegate.tasks.loader import ALL_TASKS, load_task_set
from probegate.testing import ScriptedUpstream, do_nothing_model, serve_in_thread

#: Model name the audit runs send.
AUDIT_MODEL = "do-nothing"


@dataclass(frozen=True)
class AgentVerdict:
    """One audit agent's run and what was wrong with it.

    Attributes:
        agent: the agent.
        run_id: its run.
        summary: the run's ``summary.json`` content (``{}`` when it was not scored).
        problems: ceilings it broke (empty when it behaved).
    """

    agent: AuditAgent
    run_id: str
    summary: dict[str, Any] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """It stayed within its ceilings."""
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form."""
        head = self.summary.get("headline") or {}
        return {
            "agent": self.agent.name, "note": self.agent.note, "run": self.run_id, "ok": self.ok,
            "problems": list(self.problems), "passed": head.get("passed"), "attempts": head.get("attempts"),
            "reach": head.get("reach"), "score_mean": (self.summary.get("overall") or {}).get("score_mean"),
            "valid": (self.summary.get("validity") or {}).get("valid"),
        }


@dataclass(frozen=True)
class AuditReport:
    """Every audit agent's verdict."""

    task_set: str
    verdicts: tuple[AgentVerdict, ...]

    @property
    def ok(self) -> bool:
        """Every agent stayed within its ceilings."""
        return all(v.ok for v in self.verdicts)

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form."""
        return {"task_set": self.task_set, "ok": self.ok, "agents": [v.to_json() for v in self.verdicts]}


def _score_mean(summary: dict[str, Any]) -> float:
    return float((summary.get("overall") or {}).get("score_mean") or 0.0)


def judge_audit(runs: Sequence[tuple[AuditAgent, str, dict[str, Any]]]) -> list[AgentVerdict]:
    """Check every run against its agent's ceilings (pure).

    Args:
        runs: ``(agent, run id, summary)``; exactly one agent is the honest baseline.

    Returns:
        One :class:`AgentVerdict` per run, in order.
    """
    baseline = next((_score_mean(s) for a, _, s in runs if a.honest), None)
    verdicts = []
    for agent, run_id, summary in runs:
        problems: list[str] = []
        head = summary.get("headline") or {}
        if not summary:
            problems.append("the run was not scored")
        elif agent.honest:
            if baseline is not None and baseline <= 0:
                problems.append("the honest baseline scored 0: the task set cannot tell partial work from gaming")
        else:
            if head.get("passed"):
                problems.append(f"passed {head['passed']} of {head.get('attempts')} attempts: the grader can be gamed")
            if baseline is not None and _score_mean(summary) >= baseline:
                problems.append(f"mean score {_score_mean(summary):.3f} is not below the honest baseline's {baseline:.3f}")
            if agent.poisons and (summary.get("validity") or {}).get("valid", True):
                problems.append("its own malformed requests did not mark the run invalid environment")
        verdicts.append(AgentVerdict(agent, run_id, summary, tuple(problems)))
    return verdicts


class _Quiet:
    """Runner events that show nothing."""

    def run_started(self, run_id: str, total: int) -> None:
        """Nothing."""

    def attempt_started(self, task_id: str, attempt: int) -> None:
        """Nothing."""

    def attempt_finished(self, outcome: Any) -> None:
        """Nothing."""


def audit_agents(
    task_set: str = "default",
    store: str | None = None,
    output_dir: Path | None = None,
    max_interop: float = DEFAULT_MAX_INTEROP,
    concurrency: int = 2,
    agents: Sequence[AuditAgent] = AGENTS,
) -> AuditReport:
    """Run every audit agent over ``task_set`` and judge the runs.

    Args:
        task_set: a task set name or folder.
        store: the store to record into (default: a temporary SQLite store).
        output_dir: where run folders go (default: a temporary folder).
        max_interop: the invalid-environment threshold.
        concurrency: attempts at once per run.
        agents: the agents (one honest baseline among them).

    Returns:
        The :class:`AuditReport`.

    Raises:
        TaskSetError: the task set cannot be loaded.
    """
    folder = load_task_set(task_set).path
    model = ScriptedUpstream(handler=do_nothing_model)
    server = serve_in_thread(model)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            url = store or f"sqlite:///{Path(tmp) / 'audit.db'}"
            out = output_dir or Path(tmp) / "runs"
            runs = []
            for agent in agents:
                run_id = f"audit-{agent.name.replace('_', '-')}-{new_id().lower()[-8:]}"
                config = RunConfig(task_set=folder, harness=agent.harness(folder), model=AUDIT_MODEL, model_endpoint=server.url,
                                   store=url, concurrency=concurrency, run_id=run_id, task_timeout=120.0, output_dir=out,
                                   max_interop=max_interop, task_ids=(ALL_TASKS,))
                report = execute(config, _Quiet())
                run_score = report.score.run_score if report.score is not None else None
                runs.append((agent, run_id, run_score.summary() if run_score is not None else {}))
    finally:
        server.stop()
    return AuditReport(Path(folder).name, tuple(judge_audit(runs)))
