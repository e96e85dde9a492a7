"""Reference agent harnesses and the runner that drives a task set through them.

Harnesses (``fc``, ``react``, ``plan``, ``code``, ``langchain``, ``crewai``,
``cmd:"..."``) talk only HTTP: to the model through the gateway and to the tools
through the probes. They never read the capture store; the runner only writes the
``Run`` row. Framework harnesses import their frameworks lazily (extra
``frameworks``).
"""

from agents.attempt import AttemptOutcome, AttemptSettings, run_attempt
from agents.base import STOP_REASONS, Harness, HarnessContext, HarnessResult, StopReason
from agents.registry import HARNESSES, get_harness, harness_names
from agents.runner import RunConfig, RunEvents, RunReport, execute
from agents.subagent import SubAgentRunner
from agents.tools_client import (
    Observation,
    ProbesError,
    ToolsClient,
    attempt_urls,
    reset_attempt,
)

__all__ = [
    "HARNESSES",
    "STOP_REASONS",
    "AttemptOutcome",
    "AttemptSettings",
    "Harness",
    "HarnessContext",
    "HarnessResult",
    "Observation",
    "ProbesError",
    "RunConfig",
    "RunEvents",
    "RunReport",
    "StopReason",
    "SubAgentRunner",
    "ToolsClient",
    "attempt_urls",
    "execute",
    "get_harness",
    "harness_names",
    "reset_attempt",
    "run_attempt",
]
