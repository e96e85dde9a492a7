"""Options shared by several commands, and the typed checks of option values.

A parser here turns the text of an option into its value or raises
``typer.BadParameter``: the CLI then prints one line naming the option and exits 2
before the command runs (so before any file, store or port is touched).
"""

from __future__ import annotations

import math
import os
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")
PORT = {"min": 1, "max": 65535}  # typer.Option(..., **PORT): a TCP port to bind


def number(*, above: float | None = None, at_least: float | None = None, at_most: float | None = None,
           what: str = "a number") -> Callable[[Any], float]:
    """A parser for a finite float option in a range: ``nan``, ``inf`` and text are refused.

    Example: ``typer.Option(600.0, "--timeout", parser=number(above=0, what="seconds"))``.
    """

    def parse(value: Any) -> float:
        try:
            result = float(value)
        except (TypeError, ValueError):
            raise typer.BadParameter(f"{value!r} is not {what}") from None
        if not math.isfinite(result):
            raise typer.BadParameter(f"{value!r} is not a finite number")
        if above is not None and result <= above:
            raise typer.BadParameter(f"{result:g} must be more than {above:g}")
        if at_least is not None and result < at_least:
            raise typer.BadParameter(f"{result:g} must be at least {at_least:g}")
        if at_most is not None and result > at_most:
            raise typer.BadParameter(f"{result:g} must be at most {at_most:g}")
        return result

    return parse


#: Default of ``--max-interop`` (kept here so ``--help`` needs no scorer import).
MAX_INTEROP_DEFAULT = 0.10
MaxInteropOption = typer.Option(
    MAX_INTEROP_DEFAULT,
    "--max-interop",
    parser=number(at_least=0.0, at_most=1.0, what="a share from 0 to 1"),
    help="Share of attempts (0-1) that may fail on interop faults before the run is marked invalid environment.",
)


def choice(*allowed: str) -> Callable[[Any], str]:
    """A parser accepting only ``allowed`` (kept as ``str`` so help shows the default)."""

    def parse(value: Any) -> str:
        if value not in allowed:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(allowed)}")
        return str(value)

    return parse


def http_url(value: Any) -> str:
    """A parser for an ``http(s)://`` URL option."""
    if value is None:
        return value
    text = str(value)
    if not text.startswith(("http://", "https://")) or len(text.split("://", 1)[1]) == 0:
        raise typer.BadParameter(f"{text!r} is not an http(s) URL")
    return text


def output_file(path: Path, option: str) -> Path:
    """Check that a file can be written at ``path`` (creates nothing).

    Raises:
        UsageError: ``path`` is a directory, or its folder cannot be created or written.
    """
    if path.is_dir():
        raise UsageError(f"{option} {str(path)!r} is a directory; give a file name, e.g. {str(path / 'run.jsonl.gz')!r}")
    writable_dir(path.parent, option)
    return path


def writable_dir(path: Path, option: str) -> Path:
    """Check that ``path`` is, or can be created as, a directory files can be made in.

    Creates nothing: the first existing folder on the way up must be writable.

    Raises:
        UsageError: it exists and is not a directory, or cannot be created or written.
    """
    existing = path.absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{option} {str(path)!r}: {str(existing)!r} is not a directory")
    try:  # a real try (root passes os.access everywhere, yet cannot write in /proc)
        os.rmdir(tempfile.mkdtemp(prefix=".probegate-check-", dir=existing))
    except OSError as exc:
        raise UsageError(f"{option} {str(path)!r}: cannot write in {str(existing)!r} "
                         f"({exc.strerror or exc})") from None
    return path


def can_listen(host: str, port: int) -> None:
    """Check that ``host:port`` can be bound now (as uvicorn binds it), so a taken port
    or an address this machine does not have is one line before anything starts.

    Raises:
        UsageError: the address cannot be bound.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


#: URL schemes a Celery broker can have here (Redis and AMQP).
BROKER_SCHEMES = ("redis://", "rediss://", "amqp://", "amqps://", "pyamqp://")


def broker_url(value: Any) -> str | None:
    """A parser for ``--broker``: a Redis or AMQP URL."""
    if value is None:
        return value
    if not str(value).startswith(BROKER_SCHEMES):
        raise typer.BadParameter(f"{value!r} is not a broker URL ({', '.join(s + '...' for s in BROKER_SCHEMES)})")
    return str(value)
