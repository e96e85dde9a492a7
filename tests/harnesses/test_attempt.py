"""One attempt's context and time limit."""

from __future__ import annotations

import threading

import pytest

from probegate.runner import attempt as attempt_module
from probegate.runner.attempt import AttemptSettings, build_context, run_with_limit
from probegate.harnesses.base import HarnessContext, HarnessResult
from probegate.tasks.loader import Task

TASK = Task.model_validate({
    "id": "t1", "tier": "P1", "category": "sequential", "dimensions": ["tool"],
    "prompt": {"en": "How many?", "zh": "多少？"}, "tools": ["check_stock"], "system": "Be brief.",
    "expected_actions": [{"tool": "check_stock"}], "trap": {"kind": "distractor", "note": "n"}, "max_steps": 5,
})


def test_build_context() -> None:
    settings = AttemptSettings("http://127.0.0.1:9", "run1", "m", temperature=0.5, lang="zh", timeout=9)
    ctx = build_context(TASK, 2, settings, [{"type": "function", "function": {"name": "x"}}], None)
    assert ctx.model_base_url == "http://127.0.0.1:9/r/run1/t1/2/v1"
    assert ctx.tools_url == "http://127.0.0.1:9/r/run1/t1/2/tools"
    assert (ctx.prompt, ctx.system, ctx.max_steps, ctx.temperature, ctx.timeout) == ("多少？", "Be brief.", 5, 0.5, 9)
    assert ctx.tool_names() == ["x"]
    assert build_context(TASK, 0, AttemptSettings("http://h", "r", "m", max_steps=2), [], None).max_steps == 2


class Blocking:
    """A harness that waits until released (stands in for a hung agent)."""

    name = "blocking"

    def __init__(self) -> None:
        self.release = threading.Event()

    def run(self, ctx: HarnessContext) -> HarnessResult:
        self.release.wait(30)
        return HarnessResult("late", "answered")


class Raising:
    name = "raising"

    def run(self, ctx: HarnessContext) -> HarnessResult:
        raise RuntimeError("bug in harness")


CTX = HarnessContext("http://h/v1", "http://h/tools", "m", "p", timeout=0.1)


def test_a_hung_harness_is_abandoned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(attempt_module, "GRACE_S", 0.1)
    harness = Blocking()
    result = run_with_limit(harness, CTX)
    harness.release.set()
    assert (result.stop, result.error) == ("timeout", "the harness did not finish within 0.1 s")


def test_a_stop_request_shortens_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(attempt_module, "GRACE_S", 0.1)
    stop = threading.Event()
    stop.set()
    harness = Blocking()
    result = run_with_limit(harness, HarnessContext("http://h/v1", "http://h/tools", "m", "p", timeout=60), stop)
    harness.release.set()
    assert result.stop == "timeout"


def test_a_raising_harness_is_an_error() -> None:
    result = run_with_limit(Raising(), CTX)
    assert (result.stop, result.error) == ("error", "the raising harness raised RuntimeError: bug in harness")
