"""Joining steps to the probe calls they caused. Pure.

The probe log is the ground truth of what ran; a step is only the model's intent.
Each call step is joined to the first unjoined probe call of the same tool (the one
with equal normalised arguments first) that happened after the step's exchange
started and no later than the next exchange of the same thread started (the
agent must run a tool before it shows the model the result). Probe calls no step
claims (a code harness computing calls in a loop) are attached by time to the
last step before them (``joined_by: "time"``).

A step's tool is the probe's tool when the names are equal, or when the step's name is
the probe's with an MCP client's server prefix: CrewAI offers an MCP tool ``get_weather``
of the server at ``http://127.0.0.1:8700/r/run/t01/0/mcp`` to the model as
``mcp_127_0_0_1_8700_r_run_t01_0_mcp_get_weather`` (:func:`same_tool`). A name too long
for that is cut and hashed (``mcp_..._crewai_mcp_c890_p_d03fc438``): a step still
unjoined then takes an unjoined probe call of its window whose arguments are equal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from probegate.scorer.judge.normalize import call_key


def aware(moment: datetime | None) -> datetime | None:
    """A datetime as aware UTC (SQLite returns naive datetimes that are UTC)."""
    if moment is None:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class CallStep:
    """What the join needs to know about a call step."""

    step_id: int
    tool: str
    args: Any
    start: datetime | None
    end: datetime | None


@dataclass(frozen=True)
class ProbeMoment:
    """What the join needs to know about a probe call (``index`` is its position)."""

    index: int
    tool: str
    args: Any
    at: datetime | None


def _inside(probe: ProbeMoment, step: CallStep) -> bool:
    if probe.at is None:
        return True
    if step.start is not None and probe.at < step.start:
        return False
    return not (step.end is not None and probe.at > step.end)


def same_tool(step_tool: str, probe_tool: str) -> bool:
    """Whether a step's tool name names the probe's tool (equal, or MCP-prefixed: the
    step's name ends with ``_`` + the probe's and carries ``mcp``, see module docs)."""
    if step_tool == probe_tool:
        return True
    prefix = step_tool[: -len(probe_tool) - 1] if step_tool.endswith("_" + probe_tool) else ""
    return "mcp" in prefix.lower()


def join_calls(steps: Sequence[CallStep], probes: Sequence[ProbeMoment]) -> dict[int, int]:
    """Map probe index -> step id for every probe call a step caused (see module docs)."""
    joined: dict[int, int] = {}
    for step in steps:
        window = [p for p in probes if p.index not in joined and same_tool(step.tool, p.tool) and _inside(p, step)]
        if not window:
            continue
        same = [p for p in window if call_key(p.tool, p.args) == call_key(p.tool, step.args)]
        joined[(same or window)[0].index] = step.step_id
    claimed = set(joined.values())
    for step in (s for s in steps if s.step_id not in claimed):
        renamed = [p for p in probes if p.index not in joined and _inside(p, step)
                   and step.args is not None and call_key(p.tool, p.args) == call_key(p.tool, step.args)]
        if renamed:
            joined[renamed[0].index] = step.step_id
    return joined


def attach_by_time(starts: Sequence[tuple[int, datetime | None]], probes: Sequence[ProbeMoment], joined: dict[int, int]) -> dict[int, int]:
    """Map each unjoined probe index -> the last step (``(step_id, start)``) started before it."""
    out: dict[int, int] = {}
    for probe in probes:
        if probe.index in joined or probe.at is None:
            continue
        before = [sid for sid, start in starts if start is not None and start <= probe.at]
        if before:
            out[probe.index] = before[-1]
    return out
