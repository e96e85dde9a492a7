"""The ``probegate`` command line: the composition root.

Each command group lives in its own module with a ``register(app)`` function; heavy
imports happen inside the commands so ``probegate --help`` stays fast. Every
:class:`~probegate.errors.ProbegateError` becomes one line on stderr and exit code 2.
"""

from __future__ import annotations

import sys

import typer

from probegate.cli import captures, doctor, portable, probes, run, scoring, serve, worker
from probegate.errors import ProbegateError

app = typer.Typer(
    name="probegate",
    help="Measure how far an LLM agent really gets: record, probe, score.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)



@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
) -> None:
    """probegate: how far does your agent really get, and why does it stop?"""
    if version:
        from probegate import __version__

        typer.echo(__version__)
        raise typer.Exit(0)


for _module in (serve, captures, probes, run, scoring, portable, doctor, worker):
    _module.register(app)


def main() -> None:
    """Console entry point: run the app; a user-facing error is one line and exit 2."""
    try:
        app()
    except ProbegateError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
