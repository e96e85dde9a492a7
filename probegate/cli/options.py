"""Options shared by several commands."""

from __future__ import annotations

import typer

StoreOption = typer.Option(
    None,
    "--store",
    help="Capture store URL (sqlite:///file.db or postgresql+psycopg://...). "
    "Default: $PROBEGATE_STORE or sqlite:///probegate.db.",
    envvar="PROBEGATE_STORE",
)
JsonOption = typer.Option(False, "--json", help="Print JSON instead of a table.")
#: Default of ``--max-interop`` (kept here so ``--help`` needs no scorer import).
MAX_INTEROP_DEFAULT = 0.10
MaxInteropOption = typer.Option(
    MAX_INTEROP_DEFAULT,
    "--max-interop",
    min=0.0,
    max=1.0,
    help="Share of attempts (0-1) that may fail on interop faults before the run is marked invalid environment.",
)
