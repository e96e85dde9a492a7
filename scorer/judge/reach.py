"""Per-attempt reach: the five dimensions and the path depth (docs/metrics.md §7). Pure."""

from __future__ import annotations

from probegate.scorer.judge.facts import Facts
from probegate.scorer.judge.matching import align

#: The five reach dimensions, in report order.
DIMENSIONS: tuple[str, ...] = ("tool", "param", "info", "path", "result")
#: Path depth levels, 1..4.
DEPTH_LEVELS: tuple[str, ...] = ("intent", "tool_called", "result_used", "delivery_verified")


def _required_tools(facts: Facts) -> set[str]:
    expected = facts.task.expected_actions
    if facts.task.order == "subset":
        return {e.tool for e in expected if e.side_effect}
    return {e.tool for e in expected}


def dimensions(facts: Facts) -> dict[str, bool]:
    """Whether the attempt holds each dimension (all five, whatever the task lists)."""
    a = facts.alignment
    called = {c.tool for c in facts.calls}
    touched = bool(called & facts.expected_tools)
    tool = touched and _required_tools(facts) <= called and not a.wrong_tool
    loose = align(facts.task.expected_actions, facts.calls, "subset" if facts.task.order == "subset" else "unordered")
    param = loose.complete and not a.wrong_args
    path = a.complete and a.clean
    if facts.verify_checks:
        result = facts.verify_ok
    elif facts.side_effect_tools:
        needed = [i for i, e in enumerate(facts.task.expected_actions) if e.side_effect]
        result = all(i in {e for e, _ in a.matched} for i in needed)
    else:
        result = path
    return {"tool": tool, "param": param, "info": facts.answer_grounded, "path": path, "result": result}


def path_depth(facts: Facts) -> int:
    """0-4: intent -> tool called -> result used -> delivery verified, each needing the last."""
    a = facts.alignment
    if not any(c.tool in facts.expected_tools for c in facts.calls):
        return 0
    if not a.matched:
        return 1
    if not (a.complete and facts.answer_ok):
        return 2
    return 4 if facts.passed else 3
