"""``probegate export``, ``probegate import`` and ``probegate store prune``."""

from __future__ import annotations

from pathlib import Path

import typer

from probegate.cli.options import StoreOption, number, output_file
from probegate.errors import UsageError
from probegate.ids import check_id

store_app = typer.Typer(help="Store upkeep.", no_args_is_help=True)


def export(
    run: str = typer.Argument(..., help="The run to export."),
    output: Path = typer.Option(..., "-o", "--output", help="Bundle file to write (.jsonl.gz)."),
    task_set: str | None = typer.Option(None, "--task-set", help="Snapshot this task set into the bundle when the run has none."),
    redact: list[str] = typer.Option([], "--redact", help="A regex scrubbed from exported bodies (repeatable)."),
    redact_pii: bool = typer.Option(False, "--redact-pii", help="Also scrub e-mail addresses."),
    store: str | None = StoreOption,
) -> None:
    """Write RUN (exchanges, raw streams, probe calls, world states, task snapshot) to one bundle."""
    from probegate.redact import make_redactor
    from probegate.store import open_existing_store
    from probegate.store.bundle import export_run
    from probegate.tasks.loader import load_task_set

    check_id(run, "run")
    output_file(output, "-o")
    redactor = make_redactor(redact, pii=redact_pii)
    snapshot = load_task_set(task_set).snapshot() if task_set else None
    try:
        summary = export_run(open_existing_store(store), run, output, task_snapshot=snapshot, redactor=redactor)
    except OSError as exc:
        raise UsageError(f"cannot write {str(exc.filename or output)!r}: {exc.strerror or exc}") from None
    counts = ", ".join(f"{v} {k}" for k, v in summary.counts.items())
    typer.echo(f"exported run {run} to {output} ({counts})")


def import_(
    bundle: Path = typer.Argument(..., help="A bundle written by `probegate export`.", exists=True, dir_okay=False),
    as_run: str | None = typer.Option(None, "--as", help="Import the run under this id."),
    store: str | None = StoreOption,
) -> None:
    """Load a bundle into the store, all or nothing; then `probegate score RUN` rescores it."""
    from probegate.store import check_store_url, open_store
    from probegate.store.bundle import import_bundle, read_bundle

    if as_run is not None:
        check_id(as_run, "run", "--as")
    check_store_url(store)
    read_bundle(bundle)  # a broken bundle is refused before a store is opened (or created)
    summary = import_bundle(open_store(store), bundle, rename=as_run)
    counts = ", ".join(f"{v} {k}" for k, v in summary.counts.items())
    typer.echo(f"imported run {summary.run} ({counts})")


@store_app.command("prune")
def prune(
    older_than: float | None = typer.Option(None, "--older-than", help="Remove runs older than this many days.",
                                            parser=number(at_least=0, what="a number of days")),
    run: list[str] = typer.Option([], "--run", help="Remove this run (repeatable)."),
    yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
    store: str | None = StoreOption,
) -> None:
    """Remove runs and every exchange, probe call and world state recorded under them."""
    from probegate.store import open_existing_store
    from probegate.store.prune import prune_runs, runs_older_than

    if (older_than is None) == (not run):
        raise UsageError("give exactly one of --older-than DAYS or --run RUN")
    if older_than is not None and older_than < 0:
        raise UsageError("--older-than must be zero or more days")
    engine = open_existing_store(store)
    targets = runs_older_than(engine, older_than) if older_than is not None else sorted(set(run))
    if not targets:
        typer.echo("nothing to prune")
        return
    if not yes and not typer.confirm(f"remove {len(targets)} run(s): {', '.join(targets[:10])}?"):
        raise typer.Exit(1)
    counts = prune_runs(engine, targets)
    typer.echo("removed " + ", ".join(f"{v} {k}" for k, v in counts.items()))


def register(app: typer.Typer) -> None:
    """Add ``export``, ``import`` and ``store`` to the CLI."""
    app.command("export")(export)
    app.command("import")(import_)
    app.add_typer(store_app, name="store")
