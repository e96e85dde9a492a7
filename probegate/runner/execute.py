"""The runner: one task set, one harness, one model; every task x repeat.

Order of work: check everything a user can get wrong (task set, harness, options,
a model endpoint or gateway nothing listens at) before touching the store; open
the store and insert the ``Run`` row
(``running``); start a gateway in-process unless ``gateway`` names a running one;
run the attempts (attempt-major: every task's attempt 0 first, so an interrupted
run has the widest coverage) on a thread pool; record each attempt's outcome in
the run's params as it finishes; on Ctrl-C stop starting attempts, give running
ones a short grace, mark the run ``interrupted``; finally score what exists.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from sqlalchemy.engine import Engine

from probegate.runner.attempt import AttemptOutcome, AttemptSettings, run_attempt
from probegate.harnesses.base import Harness
from probegate.runner.local_gateway import GatewayHandle, run_gateway
from probegate.runner.embedded import check_chat_handler
from probegate.runner.local_model import Endpoint, embedded_endpoint
from probegate.harnesses.registry import get_harness
from probegate.runner.runs import check_run_id, create_run, finish_run, new_run_id, update_run
from probegate.runner.scoring import AttemptJudge, ScoreOutcome, score_and_write
from probegate.gateway.compat import parse_rules
from probegate.errors import UpstreamError, UsageError
from probegate.store.engine import open_store
from probegate.tasks.loader import Task, TaskSet, load_task_set

LANGS = ("en", "zh")
FEEDBACK = ("plain", "actionable")
#: Seconds the reachability check waits for a TCP connection to the model server or gateway.
REACH_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class RunConfig:
    """What ``probegate run`` was asked to do (see the CLI for each option's meaning)."""

    task_set: str
    harness: str
    model: str | None = None
    model_endpoint: str | None = None
    gateway: str | None = None
    store: str | None = None
    repeats: int = 1
    concurrency: int = 1
    temperature: float = 0.0
    max_steps: int | None = None
    lang: str = "en"
    feedback: str = "actionable"
    task_ids: tuple[str, ...] = ()
    run_id: str | None = None
    task_timeout: float = 300.0
    api_key: str = "probegate"
    output_dir: Path = Path("runs")
    model_path: str | None = None
    compat: tuple[str, ...] = ()
    chat_handler: str | None = None


class RunEvents(Protocol):
    """What the runner tells its display (the CLI's progress bar)."""

    def run_started(self, run_id: str, total: int) -> None: ...
    def attempt_started(self, task_id: str, attempt: int) -> None: ...
    def attempt_finished(self, outcome: AttemptOutcome) -> None: ...


class SilentEvents:
    """A :class:`RunEvents` that shows nothing."""

    def run_started(self, run_id: str, total: int) -> None:
        """Ignored."""

    def attempt_started(self, task_id: str, attempt: int) -> None:
        """Ignored."""

    def attempt_finished(self, outcome: AttemptOutcome) -> None:
        """Ignored."""


@dataclass
class RunReport:
    """What a run did.

    Attributes:
        run_id: the run.
        status: ``done``, ``interrupted`` or ``failed``.
        outcomes: every finished attempt, in finishing order.
        score: the scorer's result (and report path), or why there is none.
    """

    run_id: str
    status: str
    outcomes: list[AttemptOutcome] = field(default_factory=list)
    score: ScoreOutcome | None = None


def check_config(config: RunConfig) -> None:
    """Refuse options that cannot work.

    Raises:
        UsageError: with the option at fault.
    """
    if config.repeats < 1:
        raise UsageError(f"--repeats must be at least 1, got {config.repeats}")
    if config.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {config.concurrency}")
    if config.max_steps is not None and config.max_steps < 1:
        raise UsageError(f"--max-steps must be at least 1, got {config.max_steps}")
    if config.task_timeout <= 0:
        raise UsageError(f"--task-timeout must be positive, got {config.task_timeout}")
    if config.lang not in LANGS:
        raise UsageError(f"--lang must be en or zh, got {config.lang!r}")
    if config.feedback not in FEEDBACK:
        raise UsageError(f"--feedback must be plain or actionable, got {config.feedback!r}")
    for name, url in (("--model-endpoint", config.model_endpoint), ("--gateway", config.gateway)):
        if url is not None and not url.startswith(("http://", "https://")):
            raise UsageError(f"{name} must be an http(s) URL, got {url!r}")
    if (config.model_endpoint or config.gateway) and not config.model:
        raise UsageError("--model NAME is required with --model-endpoint or --gateway")
    if config.model_path and (config.model_endpoint or config.gateway):
        raise UsageError("--model-path serves a local GGUF: leave out --model-endpoint and --gateway")
    if config.compat and config.gateway:
        raise UsageError("--compat applies to the in-process gateway: give it to `probegate serve` instead")
    parse_rules(list(config.compat))
    if config.chat_handler is not None:
        check_chat_handler(config.chat_handler)


def check_reachable(config: RunConfig, timeout_s: float = REACH_TIMEOUT_S) -> None:
    """Refuse a ``--model-endpoint`` or ``--gateway`` that nothing listens at, before the run exists.

    The check opens a TCP connection to the URL's host and port and closes it: no
    HTTP request, so a metered or scripted server sees nothing. Whether what
    listens speaks the API is for the attempts (and ``probegate doctor``) to find.

    Raises:
        UpstreamError: one line naming the option, the URL and the failure.
    """
    for option, url in (("--model-endpoint", config.model_endpoint), ("--gateway", config.gateway)):
        if url is None:
            continue
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            socket.create_connection((parts.hostname or "", port), timeout=timeout_s).close()
        except OSError as exc:
            reason = str(exc) or type(exc).__name__
            raise UpstreamError(f"cannot reach {option} {url} ({reason}): start the server or fix the URL") from exc


def prepare(config: RunConfig) -> tuple[TaskSet, list[Task], Harness]:
    """Load the task set, pick the tasks and the harness (nothing started yet).

    Raises:
        UsageError: bad options or harness.
        TaskSetError: a missing or broken task set, or an unknown task id.
    """
    check_config(config)
    task_set = load_task_set(config.task_set)
    tasks = task_set.select(list(config.task_ids) or None)
    return task_set, tasks, get_harness(config.harness)


def run_params(config: RunConfig, task_set: TaskSet, tasks: list[Task]) -> dict[str, Any]:
    """The ``Run.params`` JSON (outcomes are added as attempts finish)."""
    from probegate import __version__

    return {
        "repeats": config.repeats,
        "concurrency": config.concurrency,
        "temperature": config.temperature,
        "max_steps": config.max_steps,
        "lang": config.lang,
        "feedback": config.feedback,
        "task_ids": [t.id for t in tasks],
        "task_timeout": config.task_timeout,
        "external_gateway": config.gateway,
        "compat": list(config.compat),
        "model_path": config.model_path,
        "chat_handler": config.chat_handler,
        "probegate_version": __version__,
        "outcomes": {},
        "task_snapshot": task_set.snapshot(tasks),
    }


@contextlib.contextmanager
def model_upstream(config: RunConfig) -> Iterator[Endpoint]:
    """The given endpoint, else the embedded model, running for the ``with`` block
    (``None`` URL with an external gateway, which has its own upstream). The
    endpoint's ``ready`` gate (embedded model only) waits out a server restart, so one
    crash costs one attempt, not the rest of the run; its ``chat_handler`` (embedded
    model only) goes into the run's params."""
    if config.model_endpoint or config.gateway:
        yield Endpoint(config.model_endpoint, str(config.model))  # type: ignore[arg-type]
        return
    with embedded_endpoint(config.model, config.model_path, config.chat_handler) as endpoint:
        yield endpoint


def execute_many(
    config: RunConfig, harnesses: list[str], events: Callable[[str], RunEvents] | None = None
) -> list[RunReport]:
    """Run the task set once per harness against one model server.

    The embedded model (when no endpoint is given) is started once and shared, so
    every style meets the same server. Run ids get the harness appended
    (``--run-id X`` -> ``X-fc``, ``X-react``, ...).

    Raises:
        UsageError, TaskSetError: before anything starts, for any of the harnesses.
        UpstreamError: the model endpoint or gateway does not answer (before anything starts).
    """
    for name in harnesses:  # every harness and option checked before the model starts
        prepare(replace(config, harness=name))
        if config.run_id:
            check_run_id(f"{config.run_id}-{name}")
    check_reachable(config)
    reports = []
    with model_upstream(config) as endpoint:
        upstream, model, ready = endpoint.url, endpoint.model, endpoint.ready
        for name in harnesses:
            run_id = f"{config.run_id}-{name}" if config.run_id else None
            one = replace(config, harness=name, model=model, run_id=run_id, chat_handler=endpoint.chat_handler,
                          model_endpoint=upstream if not config.gateway else None, model_path=None)
            task_set, tasks, harness = prepare(one)
            run_id = check_run_id(one.run_id) if one.run_id else new_run_id(one.harness)
            reports.append(_execute(one, task_set, tasks, harness, run_id, upstream,
                                    (events(name) if events else None) or SilentEvents(), ready))
            if reports[-1].status == "interrupted":
                break
    return reports


def execute(config: RunConfig, events: RunEvents | None = None) -> RunReport:
    """Run the task set end to end and score it.

    Raises:
        UsageError, TaskSetError: before anything starts (see :func:`prepare`).
        UpstreamError: the model endpoint or gateway does not answer (see :func:`check_reachable`).
        StoreError: the store cannot be opened.
    """
    task_set, tasks, harness = prepare(config)
    run_id = check_run_id(config.run_id) if config.run_id else new_run_id(config.harness)
    check_reachable(config)
    with model_upstream(config) as endpoint:
        config = replace(config, model=endpoint.model, chat_handler=endpoint.chat_handler)
        return _execute(config, task_set, tasks, harness, run_id, endpoint.url, events or SilentEvents(),
                        endpoint.ready)


def _execute(
    config: RunConfig,
    task_set: TaskSet,
    tasks: list[Task],
    harness: Harness,
    run_id: str,
    upstream: str | None,
    events: RunEvents,
    ready: Callable[[], object] | None = None,
) -> RunReport:
    model = str(config.model)
    engine = open_store(config.store)
    params = run_params(config, task_set, tasks)
    create_run(engine, run_id, task_set=config.task_set, harness=config.harness, model=model,
               upstream=upstream, params=params)
    report = RunReport(run_id, "running")
    try:
        with run_gateway(config.gateway, upstream, engine, model=model, api_key=config.api_key,
                         temperature=config.temperature, compat=config.compat) as gateway:
            settings = AttemptSettings(gateway.url, run_id, model, config.api_key, config.temperature,
                                       config.max_steps, config.lang, config.feedback, config.task_timeout)
            judge = AttemptJudge(engine, run_id, task_set)
            recorder = _Recorder(engine, run_id, params, gateway, judge, events, report)
            report.status = _drive(harness, tasks, config, settings, events, recorder, ready)
    except BaseException as exc:
        finish_run(engine, run_id, "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed")
        raise
    finish_run(engine, run_id, report.status)
    report.score = score_and_write(engine, run_id, task_set, config.output_dir)
    engine.dispose()
    return report


def _drive(
    harness: Harness,
    tasks: list[Task],
    config: RunConfig,
    settings: AttemptSettings,
    events: RunEvents,
    recorder: _Recorder,
    ready: Callable[[], object] | None = None,
) -> str:
    """Run every attempt; returns ``done`` or ``interrupted``."""
    work = [(task, attempt) for attempt in range(config.repeats) for task in tasks]
    events.run_started(settings.run_id, len(work))
    stop = threading.Event()
    pool = ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="attempt")

    def one(task: Task, attempt: int) -> tuple[Task, AttemptOutcome]:
        if ready is not None:
            ready()
        events.attempt_started(task.id, attempt)
        return task, run_attempt(harness, task, attempt, settings, stop)

    futures = [pool.submit(one, task, attempt) for task, attempt in work]
    recorded: set[Future[tuple[Task, AttemptOutcome]]] = set()
    try:
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in done:
                recorder.record(*future.result())
                recorded.add(future)
    except KeyboardInterrupt:
        stop.set()
        for future in futures:
            future.cancel()  # those not started yet
        for future in futures:
            if future not in recorded and not future.cancelled():
                recorder.record(*future.result(), judge=False)  # running ones end within the grace period
        return "interrupted"
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return "done"


@dataclass
class _Recorder:
    """Records finished attempts (main thread only): judged, stored in the run's params, shown."""

    engine: Engine
    run_id: str
    params: dict[str, Any]
    gateway: GatewayHandle
    judge: AttemptJudge
    events: RunEvents
    report: RunReport

    def record(self, task: Task, outcome: AttemptOutcome, *, judge: bool = True) -> None:
        # stored before judging: an answer given off the wire (code, cmd:) is part of
        # what the scorer reads
        self._store(outcome)
        if judge:
            self.gateway.drain()
            outcome = replace(outcome, passed=self.judge.passed(task, outcome.attempt))
            self._store(outcome)
        self.report.outcomes.append(outcome)
        self.events.attempt_finished(outcome)

    def _store(self, outcome: AttemptOutcome) -> None:
        self.params["outcomes"][outcome.key] = outcome.to_json()
        update_run(self.engine, self.run_id, params={**self.params, "outcomes": dict(self.params["outcomes"])})
