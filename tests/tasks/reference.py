"""Playing a task's reference solution through the real probes (store-less ``ProbeService``).

The reference is the task's ``expected_actions`` run in order, with the recovery
convention of docs/tasks.md: a ``tool_error`` trap whose ``value`` is ``{tool, args}``
is played just before the first expected action of that tool and must fail with a
tool error; a call refused by a fault the task injects (``world_patch.faults``) is
repeated with the same arguments, as a recovering agent would. Delegation tasks get
a scripted sub-agent (``SUBAGENT_SCRIPTS``) whose calls go to the same attempt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, NamedTuple

from probegate.probes.service import ProbeService
from probegate.probes.tool import SubAgentRequest
from probegate.tasks.loader import Task

RUN = "reference"
#: How often a reference repeats a call an injected fault refused.
RETRIES = 3


@dataclass(frozen=True)
class Played:
    """One call of the reference and what the probe answered."""

    tool: str
    args: dict[str, Any]
    status: int
    body: dict[str, Any]
    by_subagent: bool = False


@dataclass
class Reference:
    """A played reference: every call in order and the final world state."""

    calls: list[Played] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)

    def observations(self) -> str:
        """Every tool result the agents saw, as JSON text (the delegate's own text excluded)."""
        return "\n".join(json.dumps(c.body, ensure_ascii=False) for c in self.calls if c.tool != "delegate")


class SubAgentScript(NamedTuple):
    """What the scripted sub-agent of a delegation task does.

    Attributes:
        calls: the tool calls it makes, in order.
        section: a regex whose first group, searched in the last result's text, is its answer.
    """

    calls: tuple[tuple[str, dict[str, Any]], ...]
    section: str


SUBAGENT_SCRIPTS: dict[str, SubAgentScript] = {
    "p1-delegate-top-customers": SubAgentScript(
        (("get_document", {"doc_id": "DOC-308"}),),
        r"Top five customers in Q4 2024\n\n(.*?)\n\n",
    ),
    "p2-delegate-globex-credit": SubAgentScript(
        (("get_document", {"doc_id": "DOC-301"}),),
        r"\n6\. Late delivery\n\n(.*?)\n\n7\.",
    ),
    "p2-delegate-sla-check": SubAgentScript(
        (("search_documents", {"query": "Initech service level agreement"}), ("get_document", {"doc_id": "DOC-302"})),
        r"(2\. Response times\..*?)\n\n",
    ),
}


def business_days_after(start: str, days: int) -> str:
    """The date ``days`` business days (Monday to Friday) after ``start`` (ISO dates)."""
    current = date.fromisoformat(start)
    while days:
        current += timedelta(days=1)
        days -= current.weekday() < 5
    return current.isoformat()


def business_days_between(start: str, end: str) -> int:
    """Business days after ``start`` up to and including ``end``."""
    count, current = 0, date.fromisoformat(start)
    while current < date.fromisoformat(end):
        current += timedelta(days=1)
        count += current.weekday() < 5
    return count


class Derived(NamedTuple):
    """An expected answer value that no tool returns as such, and how it follows from ones that do.

    Attributes:
        value: the expected answer value (a number or a text of ``contains``/``contains_any``).
        inputs: texts that must appear in the reference's observations.
        expression: arithmetic the ``calculate`` probe evaluates to ``value``.
        compute: otherwise, a function giving ``value`` as text.
    """

    value: float | str
    inputs: tuple[str, ...]
    expression: str | None = None
    compute: Callable[[], str] | None = None


DERIVED: dict[str, Derived] = {
    "p1-travel-paris-budget": Derived(
        675, ("Paris: 180", "45 EUR abroad", "Half the rate"),
        expression="3 * 180 + 2 * 45 + 2 * 45 / 2",
    ),
    "p2-initech-quote": Derived(4636, ('"total": 3160.0', '"total": 1476.0'), expression="3160 + 1476"),
    "p2-delegate-globex-credit": Derived(
        199.2,
        ('"total": 1992.0', '"eta": "2025-03-18"', "two percent (2 %)", "ten percent (10 %)", "Business days are Monday to Friday"),
        expression=f"min({business_days_between('2025-03-11', '2025-03-18')} * 2, 10) * 1992 / 100",
    ),
    "p2-delegate-sla-check": Derived(
        "2025-03-17", ('"created": "2025-03-10"', "low priority: 5 business days"),
        compute=lambda: business_days_after("2025-03-10", 5),
    ),
}


def trap_call(task: Task) -> tuple[str, dict[str, Any]] | None:
    """The failing first call a ``tool_error`` trap names in ``trap.value``, if any."""
    value = task.trap.value
    if task.trap.kind == "tool_error" and isinstance(value, dict):
        return str(value["tool"]), dict(value.get("args", {}))
    return None


def injected_codes(task: Task, tool: str) -> set[str]:
    """Error codes the task's injected faults give ``tool``."""
    faults = (task.world_patch or {}).get("faults") or []
    return {f.get("code") or "unavailable" for f in faults if f.get("tool") == tool}


class Player:
    """Plays references on one store-less probe service (with a scripted sub-agent)."""

    def __init__(self) -> None:
        self.service = ProbeService(subagent=self._subagent)
        self._current: tuple[Task, Reference] | None = None

    def _call(self, task: Task, reference: Reference, tool: str, args: dict[str, Any], by_subagent: bool = False) -> Played:
        outcome = self.service.call(RUN, task.id, 0, tool, json.dumps(args).encode())
        played = Played(tool, args, outcome.status_code, outcome.body, by_subagent)
        reference.calls.append(played)
        return played

    def _subagent(self, request: SubAgentRequest) -> str:
        assert self._current is not None, "delegate called outside a reference"
        task, reference = self._current
        script = SUBAGENT_SCRIPTS[task.id]
        assert "delegate" not in request.tools
        last: Played | None = None
        for tool, args in script.calls:
            assert tool in request.tools, f"the sub-agent may not use {tool}"
            last = self._call(task, reference, tool, args, by_subagent=True)
            assert last.status == 200, f"sub-agent call {tool} failed: {last.body}"
        assert last is not None
        found = re.search(script.section, str(last.body.get("text", "")), re.DOTALL)
        assert found, f"the sub-agent found no {script.section!r}"
        return found.group(1)

    def play(self, task: Task) -> Reference:
        """Reset the attempt from the task's world and play its reference.

        Raises:
            AssertionError: a call did not answer as the recovery convention says.
        """
        self.service.reset(RUN, task.id, 0, world=task.world, world_patch=task.world_patch or None, tools=task.tools)
        reference = Reference()
        self._current = (task, reference)
        failing = trap_call(task)
        try:
            for action in task.expected_actions:
                if failing is not None and failing[0] == action.tool:
                    first = self._call(task, reference, *failing)
                    assert first.status == 400, f"the trap call {failing} should fail with a tool error: {first.body}"
                    failing = None
                self._play_action(task, reference, action.tool, dict(action.args))
        finally:
            self._current = None
        assert failing is None, f"no expected action uses the trap call's tool {failing[0]}"
        found = self.service.state(RUN, task.id, 0)
        assert found is not None
        reference.state = found[1]
        return reference

    def _play_action(self, task: Task, reference: Reference, tool: str, args: dict[str, Any]) -> None:
        played = self._call(task, reference, tool, args)
        retries = 0
        while played.status == 400 and played.body.get("error") in injected_codes(task, tool) and retries < RETRIES:
            played = self._call(task, reference, tool, args)
            retries += 1
        assert played.status == 200, f"{tool}({args}) answered {played.status}: {played.body}"

    def calculate(self, expression: str) -> float:
        """Evaluate arithmetic with the real ``calculate`` probe (on an attempt of its own)."""
        self.service.reset(RUN, "calculator", 0, tools=["calculate"])
        outcome = self.service.call(RUN, "calculator", 0, "calculate", json.dumps({"expression": expression}).encode())
        assert outcome.status_code == 200, outcome.body
        return float(outcome.body["result"])
