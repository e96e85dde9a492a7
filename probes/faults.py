"""Deterministic fault injection: make chosen tool calls fail, for error-recovery tasks (pure).

A world's ``faults`` list holds entries such as::

    {"tool": "get_weather", "when": {"city": "Berlin"}, "times": 1,
     "code": "unavailable", "error": "weather service timed out", "hint": "retry the call"}

A call that passed validation and matches an entry (same tool; every ``when``
argument equal after normalisation) fails with that tool error instead of running,
until the entry has fired ``times`` times (``"always"``: never stops). Each entry
counts its own ``fired`` calls in the world state, so the behaviour is the same on
every run and survives a restart from the stored state.
"""

from __future__ import annotations

from typing import Any

from probegate.probes.normalize import same_value
from probegate.probes.tool import ToolError

DEFAULT_CODE = "unavailable"


def _matches(fault: dict[str, Any], tool: str, args: dict[str, Any]) -> bool:
    if fault.get("tool") != tool:
        return False
    when: dict[str, Any] = fault.get("when") or {}
    return all(key in args and same_value(value, args[key]) for key, value in when.items())


def _budget_left(fault: dict[str, Any]) -> bool:
    times = fault.get("times", 1)
    return times == "always" or int(fault.get("fired", 0)) < int(times)


def fire_fault(state: dict[str, Any], tool: str, args: dict[str, Any]) -> ToolError | None:
    """The injected error for this call, or ``None``; counts the firing in ``state``.

    Args:
        state: the world state (its ``faults`` entries are updated in place).
        tool: the tool being called.
        args: the validated arguments.
    """
    for fault in state.get("faults", []):
        if _matches(fault, tool, args) and _budget_left(fault):
            fault["fired"] = int(fault.get("fired", 0)) + 1
            message = fault.get("error") or f"{tool} is temporarily unavailable"
            return ToolError(fault.get("code") or DEFAULT_CODE, message, fault.get("hint", "retry the call"))
    return None
