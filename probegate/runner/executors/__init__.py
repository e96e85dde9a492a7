"""Where a run's attempts execute: :mod:`~probegate.runner.executors.local` (a thread pool in
this process, the default) or :mod:`~probegate.runner.executors.celery` (Celery workers on
any machine; needs the ``distributed`` extra). Both share everything else of the runner."""

from probegate.runner.executors.base import AttemptPlan, Executor
from probegate.runner.executors.local import LocalExecutor

__all__ = ["AttemptPlan", "Executor", "LocalExecutor"]
