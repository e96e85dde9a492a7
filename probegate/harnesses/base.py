"""The harness protocol: what every agent style receives and returns.

A harness is an agent loop that talks only HTTP: to the model through
``ctx.model_base_url`` (the gateway, OpenAI-compatible) and to its tools through
``ctx.tools_url`` (the probes). It knows nothing of the capture store, the gateway
or the scorer, so every style is measured the same way: from the wire.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from probegate.harnesses.schemas import tool_function

StopReason = Literal["answered", "max_steps", "parse_failure", "error", "timeout"]

#: Every stop reason, in the order reports list them.
STOP_REASONS: tuple[StopReason, ...] = ("answered", "max_steps", "parse_failure", "error", "timeout")


@dataclass(frozen=True)
class HarnessContext:
    """Everything a harness needs for one task attempt.

    Attributes:
        model_base_url: OpenAI base URL, ``{gateway}/r/{run}/{task}/{attempt}/v1``.
        tools_url: the probes' REST door, ``{gateway}/r/{run}/{task}/{attempt}/tools``
            (their MCP door is :attr:`mcp_url`).
        model: model name sent in every request.
        prompt: the user's request (language already chosen).
        tools: OpenAI tool objects (``{"type": "function", "function": {...}}``)
            offered to this attempt, as ``GET tools_url`` answered.
        api_key: bearer key the model client sends (the gateway passes it upstream).
        system: optional system text the task asks for.
        temperature: sampling temperature.
        max_steps: most model turns the harness may take.
        timeout: seconds the whole attempt may take.
        run_id: the run (informational: it is already in the URLs).
        task_id: the task (informational).
        attempt: the attempt number (informational).
        stop_event: set by the runner to stop the attempt early (Ctrl-C).
    """

    model_base_url: str
    tools_url: str
    model: str
    prompt: str
    tools: list[dict[str, Any]] = field(default_factory=list)
    api_key: str = "probegate"
    system: str | None = None
    temperature: float = 0.0
    max_steps: int = 8
    timeout: float = 300.0
    run_id: str = ""
    task_id: str = ""
    attempt: int = 0
    stop_event: threading.Event | None = None

    @property
    def mcp_url(self) -> str:
        """The probes' MCP door of this attempt, ``{gateway}/r/{run}/{task}/{attempt}/mcp``
        (``tools_url`` with its last segment ``tools`` replaced by ``mcp``)."""
        base = self.tools_url.rstrip("/")
        return (base[: -len("/tools")] if base.endswith("/tools") else base) + "/mcp"

    def tool_names(self) -> list[str]:
        """Names of the offered tools, in the order offered."""
        return [tool_function(t).get("name", "") for t in self.tools]


@dataclass(frozen=True)
class HarnessResult:
    """How one attempt ended.

    Attributes:
        final_answer: the agent's answer to the user, or ``None``.
        stop: why the harness stopped.
        error: what went wrong, for every stop but ``answered``.
        steps: model turns taken.
    """

    final_answer: str | None
    stop: StopReason
    error: str | None = None
    steps: int = 0

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form (stored in the run's params by the runner)."""
        return {"final_answer": self.final_answer, "stop": self.stop, "error": self.error, "steps": self.steps}


@runtime_checkable
class Harness(Protocol):
    """An agent style. ``run`` never raises for agent failures: it returns them."""

    name: str

    def run(self, ctx: HarnessContext) -> HarnessResult:
        """Drive one task attempt to its end."""
        ...


class Deadline:
    """The attempt's time budget, plus the runner's stop request."""

    def __init__(self, ctx: HarnessContext) -> None:
        self._end = time.monotonic() + ctx.timeout
        self._stop = ctx.stop_event

    def remaining(self) -> float:
        """Seconds left (never below 0.1, so HTTP clients get a usable timeout)."""
        return max(0.1, self._end - time.monotonic())

    def expired(self) -> bool:
        """Whether time is up or the runner asked to stop."""
        return time.monotonic() >= self._end or bool(self._stop and self._stop.is_set())


def timed_out(steps: int) -> HarnessResult:
    """The result of an attempt whose time ran out."""
    return HarnessResult(None, "timeout", "the attempt ran out of time", steps)


def out_of_steps(steps: int) -> HarnessResult:
    """The result of an attempt that used every step without answering."""
    return HarnessResult(None, "max_steps", f"no final answer after {steps} model turns", steps)
