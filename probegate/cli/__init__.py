"""The ``probegate`` command line: the composition root.

Each command group lives in its own module with a ``register(app)`` function; heavy
imports happen inside the commands so ``probegate --help`` stays fast. Every
:class:`~probegate.errors.ProbegateError` and every bad option value (click's usage
errors) becomes one line on stderr and exit code 2. Help texts are plain text, not
rich markup: ``/r/RUN/TASK[/ATTEMPT]`` must print as written.
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
    rich_markup_mode=None,
)



def _print_version(value: bool) -> None:
    if value:
        from probegate import __version__

        typer.echo(__version__)
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True,
                                 callback=_print_version),
) -> None:
    """probegate: how far does your agent really get, and why does it stop?"""


for _module in (serve, captures, probes, run, scoring, portable, doctor, worker):
    _module.register(app)


def main() -> None:
    """Console entry point: run the app; a user-facing error is one line and exit 2."""
    try:
        code = app(standalone_mode=False, prog_name="probegate")
    except ProbegateError as exc:
        _fail(f"error: {exc}", exc.exit_code)
    except typer.TyperException as exc:  # click's usage errors (typer vendors click)
        message = exc.format_message()  # type: ignore[attr-defined]
        if message.startswith("Usage:"):  # a group called without a command: its help
            typer.echo(message, err=True)
            sys.exit(2)
        ctx = getattr(exc, "ctx", None)
        _fail(f"error ({ctx.command_path}): {message}" if ctx else f"error: {message}",
              getattr(exc, "exit_code", 2))
    except typer.Abort:
        _fail("aborted", 1)
    sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, code: int) -> None:
    """Print ``message`` on one line (a task set's problem list keeps its own lines) and exit."""
    if not message.startswith("error: task set"):
        message = " ".join(message.split())
    typer.echo(message, err=True)
    sys.exit(code)
