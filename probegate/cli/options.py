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
