"""``probegate worker``: run the attempts of distributed runs on this machine.

A thin shell over :func:`probegate.runner.executors.celery.run_worker`; the
coordinator is ``probegate run --executor celery``.
"""

from __future__ import annotations

import typer

from probegate.cli.options import StoreOption, broker_url, choice, http_url, number
from probegate.errors import UsageError


def worker(
    broker: str = typer.Option(
        ..., "--broker", envvar="PROBEGATE_BROKER", parser=broker_url,
        help="Celery broker URL (redis://..., amqp://...).",
    ),
    store: str | None = StoreOption,
    model_endpoint: list[str] = typer.Option(
        [], "--model-endpoint", parser=http_url, help="This worker's model server (repeat to use several in turn). Default: the run's."
    ),
    queue: str = typer.Option("probegate", "--queue", help="Broker queue to consume (the run's --queue)."),
    concurrency: int = typer.Option(1, "--concurrency", min=1, help="Attempts this worker runs at once."),
    visibility_timeout: float = typer.Option(
        900.0, "--visibility-timeout", parser=number(at_least=20, what="seconds"),
        help="Seconds before Redis hands an unacknowledged attempt to another worker; attempts are cut off below it.",
    ),
    loglevel: str = typer.Option(
        "WARNING", "--loglevel", parser=choice("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), help="Celery's log level."
    ),
) -> None:
    """Run attempts of `probegate run --executor celery` runs: each one whole (its own gateway
    and probes), writing to the shared --store."""
    if not store:
        raise UsageError("--store URL is required: the workers and the coordinator share one store")
    from probegate.store.engine import open_existing_store

    open_existing_store(store).dispose()  # the coordinator creates the store; a worker never does
    try:
        from probegate.runner.executors.celery import run_worker
    except ImportError as exc:
        raise UsageError("probegate worker needs Celery: pip install 'probegate[distributed]'") from exc
    run_worker(broker, store, model_endpoints=model_endpoint, queue=queue, concurrency=concurrency,
               visibility_timeout=visibility_timeout, loglevel=loglevel)


def register(app: typer.Typer) -> None:
    """Add ``worker`` to the CLI."""
    app.command("worker")(worker)
