"""``--help`` of every command and subcommand renders (help text is plain, not markup:
``/r/RUN/TASK[/ATTEMPT]`` once crashed ``probegate serve --help`` with a rich MarkupError)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer.main
from typer.testing import CliRunner

from probegate.cli import app


def _paths(command=typer.main.get_command(app), path: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    yield path
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _paths(sub, (*path, name))


PATHS = list(_paths())


def test_every_command_is_walked() -> None:
    assert {("serve",), ("run",), ("captures", "list"), ("store", "prune")} <= set(PATHS) and len(PATHS) > 20


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "probegate")
def test_help_renders(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    assert result.exception is None and "Usage: " in result.output
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    first_line = (command.help or "").strip().splitlines()[0] if command.help else ""
    assert " ".join(first_line.split()[:3]) in " ".join(result.output.split())


def test_run_help_names_every_harness() -> None:
    from probegate.harnesses import harness_names

    run = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    option = next(p for p in run.params if p.name == "harness")
    assert [n for n in harness_names() if n not in option.help] == []


def test_serve_help_shows_the_url_scheme_as_written() -> None:
    result = subprocess.run([sys.executable, "-m", "probegate", "serve", "--help"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and result.stderr == ""
    assert "/r/RUN/TASK[/ATTEMPT]/v1" in result.stdout


def test_version_prints_the_version() -> None:
    from probegate import __version__

    result = subprocess.run([sys.executable, "-m", "probegate", "--version"], capture_output=True, text=True,
                            timeout=60)
    assert (result.returncode, result.stdout.strip()) == (0, __version__)
