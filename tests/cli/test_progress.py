"""The run's progress: counts and the ETA from measured attempt times (pure), and the plain view."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from probegate.cli.progress import LiveView, PlainView, RunProgress, duration, progress_view
from probegate.harnesses.base import HarnessResult
from probegate.runner.attempt import AttemptOutcome


@pytest.mark.parametrize(("seconds", "text"), [(0, "0 s"), (41.4, "41 s"), (750, "12 min 30 s"), (3900, "1 h 05 min")])
def test_duration(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_nothing_finished_no_eta() -> None:
    progress = RunProgress(["fc", "react"])
    assert progress.eta_seconds() is None and progress.overall_total() is None
    progress.run_started("fc", 4)
    progress.attempt_started("fc")
    assert progress.eta_seconds() is None and progress.eta_text() == "ETA –"
    assert progress.counts_text() == "0 passed 0 failed 1 running"
    assert progress.overall_total() == 8  # react, not started, runs the same tasks x repeats


def test_eta_uses_each_harness_mean_and_the_overall_mean_for_those_not_started() -> None:
    progress = RunProgress(["fc", "react", "plan"])
    progress.run_started("fc", 4)
    for seconds, passed in ((10.0, True), (20.0, False), (30.0, True), (40.0, None)):
        progress.attempt_started("fc")
        progress.attempt_finished("fc", seconds, passed)
    assert progress.mean_seconds("fc") == 25.0
    assert progress.eta_seconds() == 8 * 25.0  # react and plan: 4 each at the overall mean
    progress.run_started("react", 4)
    progress.attempt_finished("react", 5.0, False)
    # fc done; react: 3 left at its own 5 s; plan: 4 left at the overall mean (105 s / 5)
    assert progress.mean_seconds() == 21.0
    assert progress.eta_seconds() == pytest.approx(3 * 5.0 + 4 * 21.0)
    assert progress.current == "react"
    assert progress.position() == "react 1/4 · harness 2/3 · overall 5/12"
    assert progress.counts_text("fc") == "2 passed 1 failed 0 running 1 unscored"
    assert progress.counts_text() == "2 passed 2 failed 0 running 1 unscored"
    assert progress.eta_text() == "ETA 1 min 39 s (react 5 s/attempt)"


def test_eta_shares_the_work_among_concurrent_attempts() -> None:
    progress = RunProgress(["fc"], concurrency=4)
    progress.run_started("fc", 9)
    progress.attempt_finished("fc", 12.0, True)
    assert progress.eta_seconds() == 8 * 12.0 / 4
    assert progress.position() == "fc 1/9"


def test_a_harness_not_announced_is_added() -> None:
    progress = RunProgress([])
    progress.run_started("fc", 2)
    progress.attempt_finished("fc", 1.0, True)
    assert progress.harnesses == ["fc"] and progress.eta_seconds() == 1.0


def _outcome(task: str, passed: bool | None, seconds: float) -> AttemptOutcome:
    return AttemptOutcome(task, 0, HarnessResult("x", "answered"), seconds, passed)


def test_the_plain_view_prints_a_line_per_finished_attempt() -> None:
    out = io.StringIO()
    view = progress_view(Console(file=out, width=80), ["fc", "react"])
    assert isinstance(view, PlainView)
    for harness, run_id in (("fc", "r-fc"), ("react", "r-react")):
        events = view.events(harness)
        events.run_started(run_id, 2)
        for task, passed in (("a", True), ("b", False)):
            events.attempt_started(task, 0)
            events.attempt_finished(_outcome(task, passed, 10.0))
    view.stop()
    assert out.getvalue().splitlines() == [
        "fc: run r-fc, 2 attempts",
        "fc 1/2 · harness 1/2 · overall 1/4 · a/0 passed in 10.0 s · 1 passed 0 failed 0 running · "
        "ETA 30 s (fc 10 s/attempt)",
        "fc 2/2 · harness 1/2 · overall 2/4 · b/0 failed in 10.0 s · 1 passed 1 failed 0 running · "
        "ETA 20 s (fc 10 s/attempt)",
        "react: run r-react, 2 attempts",
        "react 1/2 · harness 2/2 · overall 3/4 · a/0 passed in 10.0 s · 1 passed 0 failed 0 running · "
        "ETA 10 s (react 10 s/attempt)",
        "react 2/2 · harness 2/2 · overall 4/4 · b/0 failed in 10.0 s · 1 passed 1 failed 0 running · "
        "ETA 0 s (react 10 s/attempt)",
    ]


def test_the_live_view_on_a_terminal() -> None:
    out = io.StringIO()
    view = progress_view(Console(file=out, width=160, force_terminal=True), ["fc", "react"])
    assert isinstance(view, LiveView)
    events = view.events("fc")
    events.run_started("r-fc", 2)
    events.attempt_started("a", 0)
    events.attempt_finished(_outcome("a", True, 4.0))
    view.stop()
    text = out.getvalue()
    assert "overall · harness 1/2: fc" in text and "fc · r-fc" in text and "ETA 12 s (fc 4 s/attempt)" in text
    assert "1 passed 0 failed 0 running" in text
