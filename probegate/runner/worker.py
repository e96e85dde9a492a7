"""A distributed run's worker side: run one attempt job whole, on this machine.

The job (:class:`AttemptJob`, plain JSON on the broker) names the run, the task, the
attempt and the run's settings. The worker claims the attempt in the shared store
(:mod:`probegate.runner.claims`), runs it through its own in-process gateway and
probes (so world state never crosses machines), commits the captures, then
records the outcome on the claim. Nothing here knows the broker: the Celery
executor (:mod:`probegate.runner.executors.celery`) calls :meth:`AttemptWorker.run`.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from probegate.harnesses.base import HarnessResult
from probegate.harnesses.registry import HarnessOptions, get_harness
from probegate.runner.attempt import GRACE_S, AttemptOutcome, AttemptSettings, run_attempt
from probegate.runner.claims import MAX_TRIES, Claim, claim, finish, give_up
from probegate.runner.local_gateway import LocalGateway
from probegate.store.engine import open_store
from probegate.tasks.loader import TaskSet, load_task_set

#: Seconds kept between an attempt's time limit (plus grace) and the broker's visibility timeout.
VISIBILITY_MARGIN_S = 10.0


@dataclass(frozen=True)
class AttemptJob:
    """One attempt of a run, as the coordinator enqueues it.

    Attributes:
        run_id, task_id, attempt: the attempt.
        task_set: a task set name, or an absolute folder every worker can read.
        harness: the harness name.
        model: model name.
        upstream: the coordinator's model endpoint (a worker's own ``--model-endpoint`` wins).
        api_key, temperature, max_steps, lang, feedback, timeout, compat: the run's settings.
        max_tries: deliveries before the attempt is recorded as an error.
        unsafe_no_sandbox: the run's ``--unsafe-no-sandbox`` (the code harness without bubblewrap).
        protocol, memory: the run's ``--protocol`` and ``--memory`` (reference harnesses).
    """

    run_id: str
    task_id: str
    attempt: int
    task_set: str
    harness: str
    model: str
    upstream: str | None = None
    api_key: str = "probegate"
    temperature: float = 0.0
    max_steps: int | None = None
    lang: str = "en"
    feedback: str = "actionable"
    timeout: float = 300.0
    compat: tuple[str, ...] = ()
    max_tries: int = MAX_TRIES
    unsafe_no_sandbox: bool = False
    protocol: str = "off"
    memory: str = "off"

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form (the broker message body)."""
        return {**asdict(self), "compat": list(self.compat)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AttemptJob:
        """The job a message carries.

        Raises:
            TypeError: unknown or missing fields.
        """
        return cls(**{**data, "compat": tuple(data.get("compat") or ())})


def outcome_from_json(task_id: str, attempt: int, data: dict[str, Any]) -> AttemptOutcome:
    """The :class:`AttemptOutcome` a claim's ``outcome`` JSON holds (pure)."""
    result = HarnessResult(data.get("final_answer"), data.get("stop", "error"), data.get("error"),
                           int(data.get("steps") or 0))
    return AttemptOutcome(task_id, attempt, result, float(data.get("seconds") or 0.0), data.get("passed"))


class AttemptWorker:
    """Runs attempt jobs against one store, behind gateways it starts once and keeps.

    Args:
        store: the shared store URL (opened at the first job: the coordinator has
            created and migrated it by then).
        model_endpoints: this worker's model servers, used in turn; empty: each job's
            own ``upstream``.
        name: this worker's name, recorded on its claims.
        visibility_timeout: the broker's redelivery timeout (seconds); an attempt's
            time limit is capped below it, so a live worker never sees its attempt
            handed to another.
    """

    def __init__(self, store: str, model_endpoints: list[str], name: str,
                 visibility_timeout: float | None = None) -> None:
        self.store, self.name, self.visibility_timeout = store, name, visibility_timeout
        self._endpoints = itertools.cycle(model_endpoints) if model_endpoints else None
        self._engine: Engine | None = None
        self._gateways: dict[tuple[Any, ...], LocalGateway] = {}
        self._task_sets: dict[str, TaskSet] = {}
        self._lock = threading.Lock()

    def run(self, job: AttemptJob) -> str:
        """Claim and run the attempt.

        Returns:
            ``done`` (recorded), ``skipped`` (ended already, run interrupted, or given
            up after too many deliveries) or ``superseded`` (a later delivery took over).

        Raises:
            TaskSetError, UsageError, StoreError: the job cannot run here (the task set
            or harness is unknown on this machine, the store is down); the caller retries.
        """
        engine = self._store()
        task = self._task_set(job.task_set).get(job.task_id)
        harness = get_harness(job.harness, HarnessOptions(unsafe_no_sandbox=job.unsafe_no_sandbox,
                                                          protocol=job.protocol, memory=job.memory))
        held = claim(engine, job.run_id, job.task_id, job.attempt, self.name, job.max_tries)
        if held is None:
            return "skipped"
        upstream = next(self._endpoints) if self._endpoints is not None else job.upstream
        if upstream is None:
            return self._fail(held, "no model endpoint: give the worker --model-endpoint or the run --model-endpoint")
        gateway = self._gateway(job, upstream)
        settings = AttemptSettings(gateway.url, job.run_id, job.model, job.api_key, job.temperature, job.max_steps,
                                   job.lang, job.feedback, self._time_limit(job.timeout))
        outcome = run_attempt(harness, task, job.attempt, settings)
        gateway.writer.flush()  # the captures are committed before the coordinator judges them
        return "done" if finish(engine, held, outcome.to_json()) else "superseded"

    def give_up(self, job: AttemptJob, error: str) -> None:
        """Record the attempt as an error (its job failed every retry)."""
        give_up(self._store(), job.run_id, job.task_id, job.attempt, error)

    def close(self) -> None:
        """Stop every gateway (committing its captures) and close the store."""
        with self._lock:
            gateways, self._gateways = list(self._gateways.values()), {}
        for gateway in gateways:
            gateway.stop()
        if self._engine is not None:
            self._engine.dispose()

    def _time_limit(self, timeout: float) -> float:
        if self.visibility_timeout is None:
            return timeout
        return max(1.0, min(timeout, self.visibility_timeout - GRACE_S - VISIBILITY_MARGIN_S))

    def _fail(self, held: Claim, error: str) -> str:
        outcome = AttemptOutcome(held.task_id, held.attempt, HarnessResult(None, "error", error), 0.0)
        finish(self._store(), held, outcome.to_json(), status="error")
        return "done"

    def _store(self) -> Engine:
        with self._lock:
            if self._engine is None:
                self._engine = open_store(self.store)
            return self._engine

    def _task_set(self, name: str) -> TaskSet:
        with self._lock:
            if name not in self._task_sets:
                self._task_sets[name] = load_task_set(name)
            return self._task_sets[name]

    def _gateway(self, job: AttemptJob, upstream: str) -> LocalGateway:
        key = (upstream, job.model, job.api_key, job.temperature, job.compat)
        engine = self._store()
        with self._lock:
            if key not in self._gateways:
                self._gateways[key] = LocalGateway(upstream, engine, model=job.model, api_key=job.api_key,
                                                   temperature=job.temperature, compat=job.compat).start()
            return self._gateways[key]


def job_for(plan_task_set: str, **fields: Any) -> AttemptJob:
    """An :class:`AttemptJob`, with a task set folder made absolute (workers do not share
    the coordinator's working directory)."""
    folder = Path(plan_task_set)
    task_set = str(folder.resolve()) if folder.is_dir() else plan_task_set
    return AttemptJob(task_set=task_set, **fields)


__all__ = ["AttemptJob", "AttemptWorker", "job_for", "outcome_from_json"]
