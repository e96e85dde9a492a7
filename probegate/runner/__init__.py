"""The runner: one task set through one harness on one model, every task x repeat.

It composes the gateway with the probes (:mod:`probegate.runner.compose`), starts the
embedded model when no endpoint is given (:mod:`probegate.runner.embedded`), runs each
attempt (:mod:`probegate.runner.attempt`) on an executor (:mod:`probegate.runner.executors`:
a local thread pool, or Celery workers on other machines that claim attempts in the store,
:mod:`probegate.runner.claims`, :mod:`probegate.runner.worker`), writes the ``Run`` row and
hands the run to the scorer. ``probegate doctor`` (:mod:`probegate.runner.doctor`) lives here too: it
drives a model server the way a run would.
"""

from probegate.runner.attempt import AttemptOutcome, AttemptSettings, run_attempt
from probegate.runner.execute import RunConfig, RunEvents, RunReport, execute

__all__ = [
    "AttemptOutcome",
    "AttemptSettings",
    "RunConfig",
    "RunEvents",
    "RunReport",
    "execute",
    "run_attempt",
]
