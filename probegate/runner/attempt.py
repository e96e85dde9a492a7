"""One task attempt: reset its world, build the harness context, run the harness
under a time limit.

The harness runs in its own daemon thread. The attempt waits for it at most the
task timeout plus a grace period (or, after a stop request, only the grace
period); a harness still running then is abandoned and the attempt recorded as
``timeout``. Harnesses bound their own HTTP calls by the same timeout, so an
abandoned one ends soon after.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from probegate.harnesses.base import Harness, HarnessContext, HarnessResult
from probegate.harnesses.tools_client import ProbesError, ToolsClient, attempt_urls, reset_attempt
from probegate.tasks.loader import Task

#: Seconds a harness gets past its timeout (or after a stop request) to return.
GRACE_S = 5.0


@dataclass(frozen=True)
class AttemptSettings:
    """The run-wide settings every attempt uses.

    Attributes:
        gateway_url: the gateway, ``http://host:port``.
        run_id: the run.
        model: model name.
        api_key: key sent to the gateway.
        temperature: sampling temperature.
        max_steps: model turns per attempt; ``None`` uses the task's ``max_steps``.
        lang: prompt language (``en`` or ``zh``; English when a task has no ``zh``).
        feedback: probe feedback style (``plain`` or ``actionable``).
        timeout: seconds per attempt.
    """

    gateway_url: str
    run_id: str
    model: str
    api_key: str = "probegate"
    temperature: float = 0.0
    max_steps: int | None = None
    lang: str = "en"
    feedback: str = "actionable"
    timeout: float = 300.0


@dataclass(frozen=True)
class AttemptOutcome:
    """How one attempt ended.

    Attributes:
        task_id: the task.
        attempt: the attempt number (0-based).
        result: the harness's result.
        seconds: wall-clock duration.
        passed: the scorer's verdict on the attempt, when it was judged.
    """

    task_id: str
    attempt: int
    result: HarnessResult
    seconds: float
    passed: bool | None = None

    @property
    def key(self) -> str:
        """``"<task>/<attempt>"``, the key of this attempt in ``Run.params["outcomes"]``."""
        return f"{self.task_id}/{self.attempt}"

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form stored in the run's params."""
        return {**self.result.to_json(), "seconds": round(self.seconds, 3), "passed": self.passed}


def build_context(
    task: Task, attempt: int, settings: AttemptSettings, tools: list[dict[str, Any]], stop: threading.Event | None
) -> HarnessContext:
    """The harness context of one attempt (pure)."""
    model_url, tools_url = attempt_urls(settings.gateway_url, settings.run_id, task.id, attempt)
    return HarnessContext(
        model_base_url=model_url,
        tools_url=tools_url,
        model=settings.model,
        prompt=task.prompt.text(settings.lang),
        tools=tools,
        api_key=settings.api_key,
        system=task.system,
        temperature=settings.temperature,
        max_steps=settings.max_steps or task.max_steps,
        timeout=settings.timeout,
        run_id=settings.run_id,
        task_id=task.id,
        attempt=attempt,
        stop_event=stop,
    )


def _guarded(harness: Harness, ctx: HarnessContext, box: list[HarnessResult]) -> None:
    try:
        box.append(harness.run(ctx))
    except Exception as exc:  # a harness bug must not take the run down
        box.append(HarnessResult(None, "error", f"the {harness.name} harness raised {type(exc).__name__}: {exc}"))


def run_with_limit(harness: Harness, ctx: HarnessContext, stop: threading.Event | None = None) -> HarnessResult:
    """Run ``harness`` in a daemon thread; give up after the timeout (plus grace)."""
    box: list[HarnessResult] = []
    thread = threading.Thread(target=_guarded, args=(harness, ctx, box), daemon=True, name=f"harness-{ctx.task_id}")
    thread.start()
    deadline = time.monotonic() + ctx.timeout + GRACE_S
    while thread.is_alive():
        if stop is not None and stop.is_set():
            deadline = min(deadline, time.monotonic() + GRACE_S)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return HarnessResult(None, "timeout", f"the harness did not finish within {ctx.timeout:g} s")
        thread.join(min(remaining, 0.2))
    return box[0]


def run_attempt(
    harness: Harness, task: Task, attempt: int, settings: AttemptSettings, stop: threading.Event | None = None
) -> AttemptOutcome:
    """Reset the attempt's world, fetch the tools it offers, then run the harness on it.

    Returns:
        The :class:`AttemptOutcome`; a refused reset is an ``error`` outcome.
    """
    started = time.monotonic()
    _, tools_url = attempt_urls(settings.gateway_url, settings.run_id, task.id, attempt)
    try:
        reset_attempt(
            settings.gateway_url,
            run=settings.run_id,
            task=task.id,
            attempt=attempt,
            world=task.world,
            world_patch=task.world_patch,
            tools=task.tools,
            feedback=settings.feedback,
        )
        with ToolsClient(tools_url) as client:
            tools = client.list_tools()
    except ProbesError as exc:
        return AttemptOutcome(task.id, attempt, HarnessResult(None, "error", str(exc)), time.monotonic() - started)
    ctx = build_context(task, attempt, settings, tools, stop)
    result = run_with_limit(harness, ctx, stop)
    return AttemptOutcome(task.id, attempt, result, time.monotonic() - started)
