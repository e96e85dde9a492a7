"""Probes: deterministic, validating, logging tool services with a world state per attempt.

The pure core (catalogue, worlds, validation, verification) is importable without
HTTP; :mod:`probegate.probes.http` mounts it in the gateway and :mod:`probegate.probes.app` serves it alone.
"""

from probegate.probes.catalog import CATALOG, get_tool, openai_tools, tool_names
from probegate.probes.service import ProbeOutcome, ProbeService
from probegate.probes.tool import Feedback, SubAgentRequest, SubAgentRunner, Tool, ToolContext, ToolError
from probegate.probes.validate import Validation, validate_args
from probegate.probes.verify import CheckResult, known_checks, run_check, validate_check
from probegate.probes.worlds import WorldError, load_world

__all__ = [
    "CATALOG",
    "CheckResult",
    "Feedback",
    "ProbeOutcome",
    "ProbeService",
    "SubAgentRequest",
    "SubAgentRunner",
    "Tool",
    "ToolContext",
    "ToolError",
    "Validation",
    "WorldError",
    "get_tool",
    "known_checks",
    "load_world",
    "openai_tools",
    "run_check",
    "tool_names",
    "validate_args",
    "validate_check",
]
