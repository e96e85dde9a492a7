"""Options shared by several commands."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from probegate.errors import UsageError

StoreOption = typer.Option(
    None,
    "--store",
    help="Capture store URL (sqlite:///file.db or postgresql+psycopg://...). "
    "Default: $PROBEGATE_STORE or sqlite:///probegate.db.",
    envvar="PROBEGATE_STORE",
)
JsonOption = typer.Option(False, "--json", help="Print JSON instead of a table.")


def writable_dir(path: Path, option: str) -> Path:
    """Create ``path`` (and parents) if needed and check that files can be made in it.

    Raises:
        UsageError: it cannot be created, is not a directory, or is not writable.
    """
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{option} {str(path)!r}: cannot create it ({exc.strerror or exc})") from None
    if not path.is_dir():
        raise UsageError(f"{option} {str(path)!r} is not a directory")
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {str(path)!r} is not writable")
    return path
