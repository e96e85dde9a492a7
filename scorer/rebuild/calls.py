"""The calls that ran in a trajectory, in the form matching and loops read. Pure."""

from __future__ import annotations

from probegate.scorer.judge.matching import ActualCall
from probegate.scorer.trajectory import Trajectory

_GROUPED_KINDS = ("fc", "markup", "json", "python")


def actual_calls(trajectory: Trajectory) -> list[ActualCall]:
    """The attempt's calls in run order (docs/metrics.md §1).

    From the probe log (``call_source == "probes"``); for probe-less runs, from the
    parsed step calls, where unreadable arguments count as ``blocked`` (they cannot run).
    Calls joined to one multi-call turn share its exchange ``seq`` as their group.
    """
    steps = {s.step_id: s for s in trajectory.steps}
    if trajectory.call_source == "steps":
        return [
            ActualCall(
                index=s.step_id,
                tool=s.tool_name or "",
                args=s.tool_args,
                status="ok" if s.tool_args is not None else "blocked",
                group=s.exchange_seq if s.parse_kind in _GROUPED_KINDS else None,
                step_id=s.step_id,
            )
            for s in trajectory.steps
            if s.tool_name
        ]
    out = []
    for p in trajectory.probe_calls:
        step = steps.get(p.step_id) if p.step_id is not None and p.joined_by == "call" else None
        group = step.exchange_seq if step is not None and step.parse_kind in _GROUPED_KINDS else None
        out.append(
            ActualCall(
                index=p.index,
                tool=p.tool,
                args=p.args if isinstance(p.args, dict) else None,
                status=p.status,
                group=group,
                step_id=p.step_id,
                missing=tuple(p.missing),
                invalid=tuple(sorted(p.invalid.items())),
            )
        )
    return out
