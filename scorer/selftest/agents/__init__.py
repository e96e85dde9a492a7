"""Audit agents: gaming agents (and one honest baseline) as ``cmd:`` scripts.

Each agent is a small stdlib script run by path through the ``cmd:`` harness
(``probegate run --harness 'cmd:python .../shotgun.py'``), against any task set, with any
model server: they talk to the tools and the gateway, never to a real model.
``probegate selftest --agents`` runs them (docs/metrics.md §10); the test suite runs them
through ``probegate run`` against a scripted model server. Each gaming agent must stay at
reach 0 with a mean score below the honest baseline's; the poisoning agent's run must be
marked invalid environment.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

AGENTS_DIR = Path(__file__).parent


@dataclass(frozen=True)
class AuditAgent:
    """One audit agent.

    Attributes:
        name: ``shotgun``, ...
        script: the script's file name in this folder.
        note: what it does, for reports.
        knows_task: it reads the task's YAML (``--task-set FOLDER`` is passed).
        honest: the baseline the gaming agents must stay below.
        poisons: it malforms its own requests (its run must be invalid).
    """

    name: str
    script: str
    note: str
    knows_task: bool = False
    honest: bool = False
    poisons: bool = False

    @property
    def path(self) -> Path:
        """The script's path."""
        return AGENTS_DIR / self.script

    def harness(self, task_set: str, python: str | None = None) -> str:
        """The ``--harness`` value that runs this agent on ``task_set`` (a folder)."""
        argv = [python or sys.executable, str(self.path)]
        if self.knows_task:
            argv += ["--task-set", task_set]
        return "cmd:" + shlex.join(argv)


HONEST = AuditAgent("honest_partial", "honest_partial.py", "does the first expected action and says it stopped there",
                    knows_task=True, honest=True)
GAMING: tuple[AuditAgent, ...] = (
    AuditAgent("do_nothing", "do_nothing.py", "no call; a refusal"),
    AuditAgent("claim_only", "claim_only.py", "no call; claims every side effect"),
    AuditAgent("answer_spam", "answer_spam.py", "no call; every number, date, time, id and common word"),
    AuditAgent("shotgun", "shotgun.py", "every offered tool with every value from the prompt, then answer spam"),
    AuditAgent("wrong_target", "wrong_target.py", "only the side-effecting calls, each at the wrong target; claims success",
               knows_task=True),
    AuditAgent("poisoner", "poisoner.py", "the first action, then a request malformed on purpose as its last exchange",
               knows_task=True, poisons=True),
)
AGENTS: tuple[AuditAgent, ...] = (HONEST, *GAMING)

__all__ = ["AGENTS", "AGENTS_DIR", "GAMING", "HONEST", "AuditAgent"]
