"""Progress of ``probegate run`` (one harness or ``--harness all``): counts and an ETA a
person can plan around.

:class:`RunProgress` is the pure part: fed ``(harness, seconds, passed)`` events, it
knows the current harness, attempts done and total (this harness and overall), the
passed / failed / unscored / running counts and the ETA. The views show it: a rich
live display on a terminal (:class:`LiveView`), one plain line per finished attempt
elsewhere (:class:`PlainView`: CI logs, pipes, tests). Both implement the runner's
:class:`~probegate.runner.recording.RunEvents` through :meth:`ProgressView.events`.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

if TYPE_CHECKING:
    from probegate.runner.attempt import AttemptOutcome

VERDICTS = ("passed", "failed", "unscored")


def verdict(passed: bool | None) -> str:
    """``passed``, ``failed``, or ``unscored`` (an attempt the scorer could not judge)."""
    return {True: "passed", False: "failed", None: "unscored"}[passed]


def duration(seconds: float) -> str:
    """A duration for people: ``41 s``, ``12 min 30 s``, ``1 h 05 min``."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"


class RunProgress:
    """Where a run (or a ``--harness all`` series of runs) stands, and how long the rest will take. Pure.

    Every harness runs the same tasks x repeats, so a harness not started yet is
    counted with the attempt total of the first one that started.

    ETA (seconds): for each harness, its attempts not finished times its mean seconds
    per finished attempt (the overall mean of this run's finished attempts while the
    harness has none), summed over harnesses and divided by the attempts that run at
    once (``concurrency``); ``None`` before any attempt finished.

    Args:
        harnesses: the harnesses to run, in order.
        concurrency: attempts running at once (``--concurrency``).
    """

    def __init__(self, harnesses: Sequence[str], concurrency: int = 1) -> None:
        self.harnesses = list(harnesses)
        self.concurrency = max(1, concurrency)
        self.current: str | None = None
        self.totals: dict[str, int] = {}
        self.done: Counter[str] = Counter()
        self.seconds: dict[str, float] = {}
        self.counts: dict[str, Counter[str]] = {h: Counter() for h in self.harnesses}

    def _counter(self, harness: str) -> Counter[str]:
        if harness not in self.counts:
            self.harnesses.append(harness)
            self.counts[harness] = Counter()
        return self.counts[harness]

    def run_started(self, harness: str, total: int) -> None:
        """``harness`` starts its ``total`` attempts; it becomes the current harness."""
        self._counter(harness)
        self.current = harness
        self.totals[harness] = total

    def attempt_started(self, harness: str) -> None:
        """One more attempt of ``harness`` running."""
        self._counter(harness)["running"] += 1

    def attempt_finished(self, harness: str, seconds: float, passed: bool | None) -> None:
        """An attempt of ``harness`` ended after ``seconds`` (wall clock) with the scorer's verdict."""
        counts = self._counter(harness)
        counts["running"] = max(0, counts["running"] - 1)
        counts[verdict(passed)] += 1
        self.done[harness] += 1
        self.seconds[harness] = self.seconds.get(harness, 0.0) + max(0.0, seconds)

    def total(self, harness: str) -> int | None:
        """Attempts of ``harness``: its own total once started, else the first started
        harness's (``None`` before any started)."""
        if harness in self.totals:
            return self.totals[harness]
        return next(iter(self.totals.values()), None)

    def overall_done(self) -> int:
        """Attempts finished, every harness."""
        return sum(self.done.values())

    def overall_total(self) -> int | None:
        """Attempts of every harness (``None`` before any started)."""
        totals = [self.total(h) for h in self.harnesses]
        return None if any(t is None for t in totals) else sum(t for t in totals if t is not None)

    def count(self, name: str, harness: str | None = None) -> int:
        """``passed``, ``failed``, ``unscored`` or ``running`` attempts of ``harness`` (all when ``None``)."""
        if harness is not None:
            return self.counts.get(harness, Counter())[name]
        return sum(c[name] for c in self.counts.values())

    def mean_seconds(self, harness: str | None = None) -> float | None:
        """Mean seconds per finished attempt of ``harness`` (of the whole run when ``None``);
        ``None`` without a finished attempt."""
        if harness is not None:
            n = self.done[harness]
            return self.seconds.get(harness, 0.0) / n if n else None
        n = self.overall_done()
        return sum(self.seconds.values()) / n if n else None

    def eta_seconds(self) -> float | None:
        """Seconds until every harness is done (see the class docstring); ``None`` before
        any attempt finished or any harness started."""
        overall = self.mean_seconds()
        if overall is None:
            return None
        left = 0.0
        for harness in self.harnesses:
            total = self.total(harness)
            if total is None:
                return None
            mean = self.mean_seconds(harness)
            left += max(0, total - self.done[harness]) * (overall if mean is None else mean)
        return left / self.concurrency

    def counts_text(self, harness: str | None = None) -> str:
        """``3 passed 1 failed 1 running`` (plus ``2 unscored`` when some are)."""
        text = (f"{self.count('passed', harness)} passed {self.count('failed', harness)} failed "
                f"{self.count('running', harness)} running")
        unscored = self.count("unscored", harness)
        return f"{text} {unscored} unscored" if unscored else text

    def eta_text(self) -> str:
        """``ETA 12 min 30 s (fc 41 s/attempt)``, or ``ETA –`` before any attempt finished."""
        eta = self.eta_seconds()
        if eta is None:
            return "ETA –"
        mean = self.mean_seconds(self.current) if self.current else None
        per = f" ({self.current} {mean:.0f} s/attempt)" if mean is not None else ""
        return f"ETA {duration(eta)}{per}"

    def position(self) -> str:
        """``fc 3/10 · harness 1/6 · overall 3/60`` (``fc 3/10`` for a single harness)."""
        harness = self.current or "?"
        parts = [f"{harness} {self.done[harness]}/{self.total(harness) or '?'}"]
        if len(self.harnesses) > 1:
            index = self.harnesses.index(harness) + 1 if harness in self.harnesses else 0
            parts.append(f"harness {index}/{len(self.harnesses)}")
            parts.append(f"overall {self.overall_done()}/{self.overall_total() or '?'}")
        return " · ".join(parts)


class _HarnessEvents:
    """The runner's :class:`~probegate.runner.recording.RunEvents` of one harness, fed to a view."""

    def __init__(self, view: ProgressView, harness: str) -> None:
        self.view, self.harness = view, harness

    def run_started(self, run_id: str, total: int) -> None:
        with self.view.lock:
            self.view.progress.run_started(self.harness, total)
            self.view.on_run_started(self.harness, run_id, total)

    def attempt_started(self, task_id: str, attempt: int) -> None:
        with self.view.lock:
            self.view.progress.attempt_started(self.harness)
            self.view.on_change()

    def attempt_finished(self, outcome: AttemptOutcome) -> None:
        with self.view.lock:
            self.view.progress.attempt_finished(self.harness, outcome.seconds, outcome.passed)
            self.view.on_finished(self.harness, outcome)


class ProgressView:
    """Shows a :class:`RunProgress`; :meth:`events` gives each harness's runner events.

    Args:
        progress: what to show.
        console: where (stderr in ``probegate run``).
    """

    def __init__(self, progress: RunProgress, console: Console) -> None:
        self.progress, self.console = progress, console
        self.lock = threading.Lock()
        self.started = False

    def events(self, harness: str) -> _HarnessEvents:
        """The runner events of ``harness``'s run."""
        return _HarnessEvents(self, harness)

    def on_run_started(self, harness: str, run_id: str, total: int) -> None:
        """A harness's run started."""

    def on_change(self) -> None:
        """Counts changed (an attempt started)."""

    def on_finished(self, harness: str, outcome: AttemptOutcome) -> None:
        """An attempt finished."""

    def stop(self) -> None:
        """End the display (idempotent)."""


class PlainView(ProgressView):
    """Plain lines for a log: one when a harness starts, one per finished attempt::

        fc: run 2026-...-fc, 10 attempts
        fc 3/10 · harness 1/6 · overall 3/60 · stock-total/0 passed in 41.2 s · 2 passed 1 failed 0 running · ETA 40 min 10 s (fc 41 s/attempt)
    """

    def _line(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def on_run_started(self, harness: str, run_id: str, total: int) -> None:
        """One line: the harness, its run id, its attempts."""
        self.started = True
        self._line(f"{harness}: run {run_id}, {total} attempt{'s' if total != 1 else ''}")

    def on_finished(self, harness: str, outcome: AttemptOutcome) -> None:
        """One line: where the run stands, the attempt, the counts, the ETA."""
        p = self.progress
        self._line(f"{p.position()} · {outcome.key} {verdict(outcome.passed)} in {outcome.seconds:.1f} s · "
                   f"{p.counts_text(harness)} · {p.eta_text()}")


class LiveView(ProgressView):
    """A rich live display: one bar per started harness (its attempts, counts and seconds per
    attempt) and, for several harnesses, an overall bar first (the current harness, every
    attempt, the counts and the ETA); a single harness's bar carries the ETA itself."""

    def __init__(self, progress: RunProgress, console: Console) -> None:
        super().__init__(progress, console)
        self.bars = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            TextColumn("{task.fields[note]}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.rows: dict[str, TaskID] = {}
        self.overall: TaskID | None = None

    def _fields(self, harness: str | None) -> dict[str, Any]:
        p = self.progress
        counts = p.counts_text(harness)
        if harness is None:
            return {"counts": counts, "note": p.eta_text()}
        mean = p.mean_seconds(harness)
        return {"counts": counts, "note": f"{mean:.0f} s/attempt" if mean is not None else ""}

    def _overall_description(self) -> str:
        p = self.progress
        index = p.harnesses.index(p.current) + 1 if p.current in p.harnesses else 0
        return f"overall · harness {index}/{len(p.harnesses)}: {p.current}"

    def on_run_started(self, harness: str, run_id: str, total: int) -> None:
        """Add the harness's bar (and the overall bar, first time, for several harnesses)."""
        p = self.progress
        if len(p.harnesses) > 1 and self.overall is None:
            self.overall = self.bars.add_task(self._overall_description(), total=p.overall_total(),
                                              **self._fields(None))
        self.rows[harness] = self.bars.add_task(f"{harness} · {run_id}", total=total, **self._fields(harness))
        if not self.started:
            self.bars.start()
            self.started = True
        self.on_change()

    def on_change(self) -> None:
        """Refresh every bar's counts and the overall bar's ETA."""
        p = self.progress
        for harness, row in self.rows.items():
            self.bars.update(row, completed=p.done[harness], **self._fields(harness))
        if self.overall is not None:
            self.bars.update(self.overall, description=self._overall_description(), completed=p.overall_done(),
                             total=p.overall_total(), **self._fields(None))
        elif self.rows:
            self.bars.update(next(iter(self.rows.values())), note=p.eta_text())

    def on_finished(self, harness: str, outcome: AttemptOutcome) -> None:
        """Advance the bars."""
        self.on_change()

    def stop(self) -> None:
        """Stop the live display (its last state stays on screen)."""
        if self.started:
            self.bars.stop()
            self.started = False


def progress_view(console: Console, harnesses: Sequence[str], concurrency: int = 1) -> ProgressView:
    """A live view on a terminal, plain lines otherwise."""
    progress = RunProgress(harnesses, concurrency)
    return LiveView(progress, console) if console.is_terminal else PlainView(progress, console)
