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
    """Check that ``path`` is, or can be created as, a directory files can be made in.

    Creates nothing: the first existing folder on the way up must be writable.

    Raises:
        UsageError: it exists and is not a directory, or cannot be created or written.
    """
    existing = path.absolute()
    while not existing.exists() and existing != existing.parent:
        if existing.is_symlink() or (existing.parent.exists() and not existing.parent.is_dir()):
            break
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{option} {str(path)!r}: {str(existing)!r} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {str(path)!r}: {str(existing)!r} is not writable")
    return path
