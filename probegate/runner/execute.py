"""The runner: one task set, one harness, one model; every task x repeat.

Order of work: check everything a user can get wrong (task set, harness, options,
a model endpoint or gateway nothing listens at) before touching the store; open
the store and insert the ``Run`` row (``running``);
hand the attempts to the executor (:mod:`probegate.runner.executors`: a local thread
pool by default, or Celery workers on other machines), attempt-major (every task's
attempt 0 first, so an interrupted run has the widest coverage); record each
attempt's outcome in the run's params as it finishes; on Ctrl-C stop starting
attempts, mark the run ``interrupted``; finally score what exists.
"""

from __future__ import annotations

import contextlib
import math
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from probegate.harnesses.base import Harness
from probegate.runner.claims import MAX_TRIES
from probegate.runner.executors.base import AttemptPlan, Executor
from probegate.runner.executors.local import LocalExecutor
from probegate.runner.local_model import embedded_endpoint
from probegate.harnesses.registry import NEEDS_ENDPOINT, HarnessOptions, get_harness
from probegate.runner.runs import check_run_id, create_run, finish_run, new_run_id
from probegate.runner.scoring import AttemptJudge, score_and_write
from probegate.scorer.report.validity import DEFAULT_MAX_INTEROP
from probegate.runner.provenance_read import read_gateway, run_provenance
from probegate.runner.recording import Recorder, RunEvents, RunReport, SilentEvents
from probegate.runner.embedded import check_chat_handler
from probegate.runner.local_model import Endpoint
from probegate.gateway.compat import parse_rules
from probegate.errors import UpstreamError, UsageError
from probegate.store.engine import open_store
from probegate.tasks.loader import Task, TaskSet, load_task_set

LANGS = ("en", "zh")
EXECUTORS = ("local", "celery")
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
    protocol: str = "off"
    memory: str = "off"
    task_ids: tuple[str, ...] = ()
    run_id: str | None = None
    task_timeout: float = 300.0
    api_key: str = "probegate"
    output_dir: Path = Path("runs")
    model_path: str | None = None
    compat: tuple[str, ...] = ()
    unsafe_no_sandbox: bool = False
    max_interop: float = DEFAULT_MAX_INTEROP
    executor: str = "local"
    broker: str | None = None
    queue: str = "probegate"
    max_tries: int = MAX_TRIES
    chat_handler: str | None = None


__all__ = ["RunConfig", "RunEvents", "RunReport", "SilentEvents", "check_config", "execute", "execute_many"]


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
    if not math.isfinite(config.temperature) or not 0 <= config.temperature <= 2:
        raise UsageError(f"--temperature must be a number from 0 to 2, got {config.temperature!r}")
    if not math.isfinite(config.task_timeout) or config.task_timeout <= 0:
        raise UsageError(f"--task-timeout must be positive, got {config.task_timeout}")
    if config.lang not in LANGS:
        raise UsageError(f"--lang must be en or zh, got {config.lang!r}")
    if config.feedback not in FEEDBACK:
        raise UsageError(f"--feedback must be plain or actionable, got {config.feedback!r}")
    harness_options(config).ablation()
    for name, url in (("--model-endpoint", config.model_endpoint), ("--gateway", config.gateway)):
        if url is not None and not url.startswith(("http://", "https://")):
            raise UsageError(f"{name} must be an http(s) URL, got {url!r}")
    if (config.model_endpoint or config.gateway) and not config.model:
        raise UsageError("--model NAME is required with --model-endpoint or --gateway")
    if config.harness in NEEDS_ENDPOINT and not (config.model_endpoint or config.gateway):
        raise UsageError(f"--harness {config.harness} needs --model-endpoint URL (and --model NAME): "
                         f"{NEEDS_ENDPOINT[config.harness]}")
    if config.model_path and (config.model_endpoint or config.gateway):
        raise UsageError("--model-path serves a local GGUF: leave out --model-endpoint and --gateway")
    if config.compat and config.gateway:
        raise UsageError("--compat applies to the in-process gateway: give it to `probegate serve` instead")
    parse_rules(list(config.compat))
    if config.chat_handler is not None:
        check_chat_handler(config.chat_handler)
    check_executor(config)


def check_executor(config: RunConfig) -> None:
    """Refuse executor options that cannot work (see :func:`check_config`)."""
    if config.executor not in EXECUTORS:
        raise UsageError(f"--executor must be local or celery, got {config.executor!r}")
    if config.executor == "local":
        if config.broker:
            raise UsageError("--broker is for --executor celery")
        return
    if not config.broker:
        raise UsageError("--executor celery needs --broker URL (redis://HOST:6379/0 or amqp://...)")
    if not config.model:
        raise UsageError("--executor celery needs --model NAME (the workers serve no embedded model)")
    if config.gateway or config.model_path:
        raise UsageError("--executor celery runs a gateway on every worker: leave out --gateway and --model-path")
    if config.max_tries < 1:
        raise UsageError(f"--max-tries must be at least 1, got {config.max_tries}")


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
    return task_set, tasks, get_harness(config.harness, harness_options(config))


def harness_options(config: RunConfig) -> HarnessOptions:
    """The run-wide settings the harness factories see."""
    return HarnessOptions(unsafe_no_sandbox=config.unsafe_no_sandbox, protocol=config.protocol, memory=config.memory)


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
        "protocol": config.protocol,
        "memory": config.memory,
        "task_ids": [t.id for t in tasks],
        "task_subset": task_set.subset_of(list(config.task_ids)),
        "task_set_size": len(task_set.tasks),
        "task_timeout": config.task_timeout,
        "external_gateway": config.gateway,
        "compat": list(config.compat),
        "model_path": config.model_path,
        "unsafe_no_sandbox": config.unsafe_no_sandbox,
        "chat_handler": config.chat_handler,
        "probegate_version": __version__,
        "outcomes": {},
        "task_snapshot": task_set.snapshot(tasks),
    }


def provenance(config: RunConfig, upstream: str | None, launcher: dict[str, Any] | None = None) -> dict[str, Any]:
    """The run's provenance (:mod:`probegate.runner.provenance`): the model server asked
    once before the attempts start, the embedded launcher's facts, the run's settings and
    the installed framework versions. A server that answers nothing leaves ``null``
    values and says so in ``sources``; it never fails the run.

    Through an external gateway (``--gateway``), the gateway is asked where its answers
    come from (``GET /probegate/provenance``): a gateway replaying a recorded run gives
    that run's provenance, which the run keeps as it is (its model answers are the
    recorded ones, so replaying reproduces ``summary.json`` byte for byte); a pass-through
    gateway names its upstream, which is asked as above, with the gateway's shims."""
    shims, not_queried = list(config.compat), None
    if config.gateway:
        told = read_gateway(config.gateway, config.api_key) or {}
        if isinstance(told.get("provenance"), dict):
            return dict(told["provenance"])
        upstream = told.get("upstream") if isinstance(told.get("upstream"), str) else None
        shims = [str(rule) for rule in told.get("compat") or []]
        if upstream is None:
            not_queried = "the run goes through an external gateway (--gateway) that does not name its upstream"
    return run_provenance(upstream=upstream, model=config.model, api_key=config.api_key, launcher=launcher,
                          temperature=config.temperature, shims=shims, not_queried=not_queried)


@contextlib.contextmanager
def model_upstream(config: RunConfig) -> Iterator[Endpoint]:
    """The given endpoint, else the embedded model, running for the ``with`` block
    (``None`` URL with an external gateway, which has its own upstream). The
    endpoint's ``ready`` gate (embedded model only) waits out a server restart, so one
    crash costs one attempt, not the rest of the run; its ``chat_handler`` (embedded
    model only) goes into the run's params."""
    if config.model_endpoint or config.gateway or config.executor != "local":
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
                                    (events(name) if events else None) or SilentEvents(), ready, endpoint.launcher))
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
                        endpoint.ready, endpoint.launcher)


def _execute(
    config: RunConfig,
    task_set: TaskSet,
    tasks: list[Task],
    harness: Harness,
    run_id: str,
    upstream: str | None,
    events: RunEvents,
    ready: Callable[[], object] | None = None,
    launcher: dict[str, Any] | None = None,
) -> RunReport:
    model = str(config.model)
    executor = make_executor(config)
    engine = open_store(config.store)
    params = run_params(config, task_set, tasks)
    params["provenance"] = provenance(config, upstream, launcher)
    create_run(engine, run_id, task_set=config.task_set, harness=config.harness, model=model,
               upstream=upstream, params=params)
    report = RunReport(run_id, "running")
    try:
        recorder = Recorder(engine, run_id, params, AttemptJudge(engine, run_id, task_set), events, report)
        plan = AttemptPlan(config, tasks, harness, run_id, upstream, engine, ready)
        report.status = executor.drive(plan, recorder, events)
    except BaseException as exc:
        finish_run(engine, run_id, "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed")
        raise
    finish_run(engine, run_id, report.status)
    report.score = score_and_write(engine, run_id, task_set, config.output_dir, config.max_interop)
    engine.dispose()
    return report


def make_executor(config: RunConfig) -> Executor:
    """The executor ``--executor`` names (``celery`` needs the ``distributed`` extra).

    Raises:
        UsageError: celery is not installed.
    """
    if config.executor == "local":
        return LocalExecutor()
    try:
        from probegate.runner.executors.celery import CeleryExecutor
    except ImportError as exc:
        raise UsageError("--executor celery needs Celery: pip install 'probegate[distributed]'") from exc
    return CeleryExecutor(str(config.broker), queue=config.queue, max_tries=config.max_tries)
