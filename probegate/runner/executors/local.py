"""The local executor (the default): attempts on a thread pool behind one in-process gateway.

On Ctrl-C it stops starting attempts, gives running ones a short grace, records
them unjudged and returns ``interrupted``.
"""

from __future__ import annotations

import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from probegate.runner.attempt import AttemptOutcome, AttemptSettings, run_attempt
from probegate.runner.executors.base import AttemptPlan
from probegate.runner.local_gateway import run_gateway
from probegate.runner.recording import Recorder, RunEvents
from probegate.tasks.loader import Task


class LocalExecutor:
    """Runs every attempt in this process, ``config.concurrency`` at a time."""

    def drive(self, plan: AttemptPlan, recorder: Recorder, events: RunEvents) -> str:
        """Start the run's gateway (unless ``--gateway`` names one), run the attempts."""
        config = plan.config
        model = str(config.model)
        with run_gateway(config.gateway, plan.upstream, plan.engine, model=model, api_key=config.api_key,
                         temperature=config.temperature, compat=config.compat) as gateway:
            settings = AttemptSettings(gateway.url, plan.run_id, model, config.api_key, config.temperature,
                                       config.max_steps, config.lang, config.feedback, config.task_timeout)
            recorder.drain = gateway.drain
            return _drive(plan, settings, recorder, events)


def _drive(plan: AttemptPlan, settings: AttemptSettings, recorder: Recorder, events: RunEvents) -> str:
    work = plan.work
    events.run_started(settings.run_id, len(work))
    stop = threading.Event()
    pool = ThreadPoolExecutor(max_workers=plan.config.concurrency, thread_name_prefix="attempt")

    def one(task: Task, attempt: int) -> tuple[Task, AttemptOutcome]:
        if plan.ready is not None:
            plan.ready()
        events.attempt_started(task.id, attempt)
        return task, run_attempt(plan.harness, task, attempt, settings, stop)

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
