"""Reference agent harnesses: one agent style per module.

Harnesses (``fc``, ``react``, ``plan``, ``code``, ``langchain``, ``crewai``,
``openai-agents``, ``openai-agents-chat``, the MCP variants, ``cmd:"COMMAND"``) talk only HTTP: to the model through the gateway and to the tools
through the probes. They never read the capture store and import nothing above the
ground layer (errors, wire). Framework harnesses import their frameworks lazily
(extra ``frameworks``). The runner (:mod:`probegate.runner`) drives them.
"""

from probegate.harnesses.base import STOP_REASONS, Harness, HarnessContext, HarnessResult, StopReason
from probegate.harnesses.registry import HARNESSES, get_harness, harness_names
from probegate.harnesses.subagent import SubAgentRunner
from probegate.harnesses.tools_client import (
    Observation,
    ProbesError,
    ToolsClient,
    attempt_urls,
    reset_attempt,
)

__all__ = [
    "HARNESSES",
    "STOP_REASONS",
    "Harness",
    "HarnessContext",
    "HarnessResult",
    "Observation",
    "ProbesError",
    "StopReason",
    "SubAgentRunner",
    "ToolsClient",
    "attempt_urls",
    "get_harness",
    "harness_names",
    "reset_attempt",
]
