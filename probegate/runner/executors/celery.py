"""The Celery executor: one broker message per attempt, workers on any machine, one store.

Coordinator (``probegate run --executor celery --broker URL``): sends every attempt
as a job (:class:`~probegate.runner.worker.AttemptJob`) to the queue, then follows the
run in the store (:func:`probegate.runner.claims.claims`), recording each attempt as
its claim ends; the run is scored when the last one has.

Worker (``probegate worker --broker URL --store URL``): a Celery worker whose one
task runs the job through :class:`~probegate.runner.worker.AttemptWorker`.

Delivery is at least once: ``task_acks_late`` acknowledges a job only when it has
run, ``task_reject_on_worker_lost`` requeues it when the process running it dies,
and on Redis an unacknowledged job comes back after ``visibility_timeout`` (a worker
killed outright, a lost machine). The store's claims make a redelivered attempt
count once and give up on one delivered ``max_tries`` times. A job that raises
(the store down, a task set this machine lacks) is retried ``JOB_RETRIES`` times,
then recorded as an error, never retried forever.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

from celery import Celery

from probegate.runner.claims import claims
from probegate.runner.executors.base import AttemptPlan
from probegate.runner.recording import Recorder, RunEvents
from probegate.runner.worker import AttemptJob, AttemptWorker, job_for, outcome_from_json

#: The one task's name (what the coordinator sends, what workers register).
TASK_NAME = "probegate.attempt"
#: Default seconds an unacknowledged job waits on Redis before it is delivered again.
VISIBILITY_TIMEOUT_S = 900.0
#: Times a job that raised is retried before the attempt is recorded as an error.
JOB_RETRIES = 2
#: Seconds between the coordinator's looks at the store.
POLL_S = 0.5


def make_app(broker: str, *, visibility_timeout: float = VISIBILITY_TIMEOUT_S) -> Celery:
    """The Celery application both sides use (no result backend: results live in the store).

    Args:
        broker: ``redis://host:port/db`` or ``amqp://user:pass@host:port//``.
        visibility_timeout: seconds before Redis delivers an unacknowledged job again.
    """
    app = Celery("probegate", broker=broker, set_as_current=False)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
        broker_connection_retry_on_startup=True,
        broker_transport_options={
            "visibility_timeout": visibility_timeout,
            # look for abandoned jobs every few seconds, not every 100 s (kombu's default)
            "unacked_restore_interval": max(1, min(10, int(visibility_timeout / 4))),
            "unacked_restore_throttle": 1,
        },
    )
    return app


class CeleryExecutor:
    """Sends a run's attempts to Celery workers and follows them in the store.

    Args:
        broker: the broker URL.
        queue: the queue the workers consume.
        max_tries: deliveries before an attempt is recorded as an error.
        poll_s: seconds between looks at the store.
    """

    def __init__(self, broker: str, *, queue: str = "probegate", max_tries: int = 3, poll_s: float = POLL_S) -> None:
        self.broker, self.queue, self.max_tries, self.poll_s = broker, queue, max_tries, poll_s

    def drive(self, plan: AttemptPlan, recorder: Recorder, events: RunEvents) -> str:
        """Enqueue every attempt, then record them as they end; ``interrupted`` on Ctrl-C
        (the run's status then stops workers from starting its remaining attempts)."""
        work = plan.work
        events.run_started(plan.run_id, len(work))
        app = make_app(self.broker)
        try:
            with app.producer_or_acquire() as producer:
                for task, attempt in work:
                    job = self._job(plan, task.id, attempt)
                    app.send_task(TASK_NAME, args=[job.to_json()], queue=self.queue, producer=producer)
            return self._follow(plan, {(task.id, attempt): task for task, attempt in work}, recorder, events)
        finally:
            app.close()

    def _job(self, plan: AttemptPlan, task_id: str, attempt: int) -> AttemptJob:
        config = plan.config
        return job_for(config.task_set, run_id=plan.run_id, task_id=task_id, attempt=attempt,
                       harness=config.harness, model=str(config.model), upstream=plan.upstream,
                       api_key=config.api_key, temperature=config.temperature, max_steps=config.max_steps,
                       lang=config.lang, feedback=config.feedback, timeout=config.task_timeout,
                       compat=config.compat, max_tries=self.max_tries,
                       unsafe_no_sandbox=config.unsafe_no_sandbox, protocol=config.protocol,
                       memory=config.memory)

    def _follow(self, plan: AttemptPlan, pending: dict[tuple[str, int], Any], recorder: Recorder,
                events: RunEvents) -> str:
        started: set[tuple[str, int]] = set()
        try:
            while pending:
                for row in claims(plan.engine, plan.run_id):
                    key = (row.task_id, row.attempt)
                    if key not in pending:
                        continue
                    if key not in started:
                        started.add(key)
                        events.attempt_started(*key)
                    if row.status != "running":
                        recorder.record(pending.pop(key), outcome_from_json(*key, row.outcome or {}))
                if pending:
                    time.sleep(self.poll_s)
        except KeyboardInterrupt:
            return "interrupted"
        return "done"


def worker_name() -> str:
    """``probegate-<pid>@<host>``: unique per worker process."""
    return f"probegate-{os.getpid()}@{socket.gethostname()}"


def run_worker(
    broker: str,
    store: str,
    *,
    model_endpoints: list[str] | None = None,
    queue: str = "probegate",
    concurrency: int = 1,
    visibility_timeout: float = VISIBILITY_TIMEOUT_S,
    loglevel: str = "WARNING",
) -> None:
    """Run a Celery worker for probegate attempts until it is stopped (SIGTERM, Ctrl-C).

    Attempts run on a thread pool of ``concurrency`` threads, all behind this
    process's gateways; each attempt's time limit is capped below ``visibility_timeout``.
    """
    app = make_app(broker, visibility_timeout=visibility_timeout)
    name = worker_name()
    worker = AttemptWorker(store, list(model_endpoints or []), name, visibility_timeout)

    @app.task(name=TASK_NAME, bind=True, max_retries=JOB_RETRIES)
    def attempt(self: Any, job: dict[str, Any]) -> str:
        parsed = AttemptJob.from_json(job)
        try:
            return worker.run(parsed)
        except Exception as exc:
            if self.request.retries < JOB_RETRIES:
                raise self.retry(exc=exc, countdown=1) from exc
            worker.give_up(parsed, f"the job failed {JOB_RETRIES + 1} times: {type(exc).__name__}: {exc}")
            return "error"

    try:
        app.worker_main(["worker", "--pool", "threads", "--concurrency", str(concurrency), "--queues", queue,
                         "--hostname", name, "--without-gossip", "--without-mingle", "--without-heartbeat",
                         "--loglevel", loglevel])
    finally:
        worker.close()
