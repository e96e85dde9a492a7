"""Scoring commands: ``score``, ``report``, ``trace``, ``debug-parse``, ``compare``,
``diff`` and ``selftest``. Thin shells over :mod:`probegate.scorer` (tables: :mod:`probegate.scorer.report.console`);
heavy imports happen inside the commands so ``probegate --help`` stays fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from probegate.cli.options import JsonOption, MaxInteropOption, StoreOption, writable_dir
from probegate.errors import UsageError
from probegate.ids import check_id, child_path

if TYPE_CHECKING:
    from rich.console import Console
    from sqlalchemy.engine import Engine

    from probegate.scorer.report.summary import RunScore

TaskSetOption = typer.Option(None, "--task-set", help="Task set name or folder (default: the run's own).")
#: Exit status of ``diff`` when either run is an invalid environment.
INVALID_EXIT = 3
RunsArgument = typer.Argument(..., help="Runs to compare: run ids, summary.json files or runs/<run> folders.")
OutOption = typer.Option(Path("runs"), "--out", help="Folder that gets <RUN>/ (summary.json, scores.csv, traces/, report.html).")


def _console() -> Console:
    from rich.console import Console

    return Console(soft_wrap=False, width=max(100, Console().width))


def _echo_json(value: Any) -> None:
    typer.echo(json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False))


def open_engine(store: str | None) -> Engine:
    """Open an existing store for reading (never creates one).

    Raises:
        StoreError: there is no store there, or it cannot be opened.
    """
    from probegate.store.engine import open_existing_store

    return open_existing_store(store)


def _score(run: str, task_set: str | None, store: str | None, max_interop: float | None = None) -> RunScore:
    from dataclasses import replace

    from probegate.scorer.pipeline import score_run

    engine = open_engine(store)
    try:
        scored = score_run(engine, run, task_set)
    finally:
        engine.dispose()
    return scored if max_interop is None else replace(scored, max_interop=max_interop)


def _invalid_first(lines: list[str], as_json: bool) -> None:
    """Print INVALID ENVIRONMENT lines first: on stdout, or on stderr when stdout carries JSON."""
    for line in lines:
        typer.echo(line, err=as_json)


def _write(result: RunScore, folder: Path) -> dict[str, Path]:
    """Write a scored run's outputs.

    Raises:
        UsageError: the folder or a file in it cannot be written.
    """
    from probegate.scorer.report.outputs import write_outputs

    try:
        return write_outputs(result, folder)
    except OSError as exc:
        where = exc.filename or folder
        raise UsageError(f"cannot write the run's outputs to {str(where)!r}: {exc.strerror or exc}") from None


def score(
    run: str = typer.Argument(..., help="Run id."),
    task_set: str | None = TaskSetOption,
    out: Path = OutOption,
    store: str | None = StoreOption,
    as_json: bool = JsonOption,
    max_interop: float = MaxInteropOption,
) -> None:
    """Rescore a stored run from its captures and write OUT/RUN/.

    The first line says INVALID ENVIRONMENT when more than --max-interop of the
    attempts failed on interop faults.
    """
    from probegate.scorer.report.console import headline_lines, provenance_summary_line, run_table
    from probegate.scorer.report.validity import invalid_line

    writable_dir(out, "--out")
    folder = child_path(out, check_id(run, "run"))
    result = _score(run, task_set, store, max_interop)
    paths = _write(result, folder)
    summary = result.summary()
    if as_json:
        _invalid_first([line] if (line := invalid_line(summary["validity"], run)) else [], True)
        _echo_json(summary)
        return
    console = _console()
    for line in headline_lines(summary):
        console.print(line)
    where = provenance_summary_line(summary)
    if where:
        console.print(where)
    console.print(run_table(summary))
    for name, path in paths.items():
        console.print(f"{name}: {path}")


def report(
    run: str = typer.Argument(..., help="Run id."),
    task_set: str | None = TaskSetOption,
    out: Path = OutOption,
    store: str | None = StoreOption,
    max_interop: float = MaxInteropOption,
) -> None:
    """Score RUN, write its outputs and print the path of report.html."""
    from probegate.scorer.report.validity import invalid_line

    writable_dir(out, "--out")
    folder = child_path(out, check_id(run, "run"))
    result = _score(run, task_set, store, max_interop)
    paths = _write(result, folder)
    _invalid_first([line] if (line := invalid_line(result.summary()["validity"], run)) else [], False)
    typer.echo(str(paths["report"]))


def trace(
    run: str = typer.Argument(..., help="Run id."),
    task: str = typer.Argument(..., help="Task id."),
    attempt: int = typer.Option(0, "--attempt", help="Attempt number.", min=0),
    task_set: str | None = TaskSetOption,
    store: str | None = StoreOption,
    as_json: bool = JsonOption,
) -> None:
    """Print one trajectory rebuilt from the store (steps, parsed actions, probe results)."""
    from probegate.scorer.pipeline import reconstruct
    from probegate.scorer.report.console import trace_footer, trace_table

    check_id(run, "run")
    check_id(task, "task")
    engine = open_engine(store)
    try:
        trajectory = reconstruct(engine, run, task, attempt, task_set)
    finally:
        engine.dispose()
    if as_json:
        _echo_json(trajectory.model_dump(mode="json"))
        return
    console = _console()
    console.print(trace_table(trajectory))
    for line in trace_footer(trajectory):
        console.print(line, markup=False)


def debug_parse(
    text: str = typer.Argument(..., help="The model output to parse, or - to read stdin."),
    tools: str = typer.Option("", "--tools", help="Comma-separated tool names the agent had."),
    as_json: bool = JsonOption,
) -> None:
    """Show what every action parser extracts from TEXT, and which reading wins."""
    from probegate.scorer.report.console import parse_table
    from probegate.scorer.rebuild.turns import every_parse

    body = sys.stdin.read() if text == "-" else text
    found = every_parse(body, [t.strip() for t in tools.split(",") if t.strip()])
    if as_json:
        typer.echo(json.dumps(found, indent=2, ensure_ascii=False))
        return
    chosen = found["chosen"]
    console = _console()
    console.print(parse_table(chosen))
    for key in ("answer", "thought"):
        if chosen[key]:
            console.print(f"{key}: {chosen[key]!r}", markup=False)
    if chosen["notes"]:
        console.print(f"notes: {', '.join(chosen['notes'])}", markup=False)
    console.print("every parser: " + json.dumps(found["parsers"], ensure_ascii=False), markup=False)


def load_summary(ref: str, task_set: str | None, store: str | None) -> dict[str, Any]:
    """A run's summary: a ``summary.json`` file, a folder holding one, or a run in the store.

    Raises:
        UsageError: the file is not a summary, or its version is newer than this probegate.
    """
    from probegate.scorer.report.summary import SUMMARY_VERSION

    path = Path(ref)
    if path.is_dir() and (path / "summary.json").is_file():
        path = path / "summary.json"
    if not path.is_file():
        scored = _score(ref, task_set, store)
        return {**scored.summary(), "timing": scored.timing()}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict) or "run" not in data or not isinstance(data.get("version"), int):
        raise UsageError(f"{path} is not a probegate summary.json")
    if data["version"] > SUMMARY_VERSION:  # version 1 (interop excluded from figures) is still read
        raise UsageError(f"{path} has summary version {data['version']}, newer than this probegate reads ({SUMMARY_VERSION})")
    timing_file = path.with_name("timing.json")
    if timing_file.is_file():  # measured time lives beside the summary, not in it
        try:
            data["timing"] = json.loads(timing_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
    return data


def compare(
    runs: list[str] = RunsArgument,
    task_set: str | None = TaskSetOption,
    store: str | None = StoreOption,
    as_json: bool = JsonOption,
    markdown: bool = typer.Option(False, "--markdown", help="Print the metrics as a Markdown table."),
    max_interop: float = MaxInteropOption,
    html: Path | None = typer.Option(
        None, "--html", help="Also write a self-contained page: the chart of mean score by harness and tier, then the table."
    ),
    png: Path | None = typer.Option(None, "--png", help="Also write the chart as a PNG (needs Chromium: apt-get install -y chromium)."),
) -> None:
    """Side-by-side metrics of several runs (same model, other harness; or other models),
    led by the mean score (partial credit) and reach per tier, every figure with its 95 %
    interval; invalid runs are named in the first line."""
    from probegate.cli.options import output_file
    from probegate.scorer.report.compare import compare_table
    from probegate.scorer.report.console import (
        ablation_rich_table,
        compare_markdown,
        compare_tables,
        invalid_lines,
        provenance_differs_line,
    )

    if len(runs) < 2:
        raise UsageError("compare needs at least two runs")
    if as_json and markdown:
        raise UsageError("give --json or --markdown, not both")
    for path, option in ((html, "--html"), (png, "--png")):
        if path is not None:
            output_file(path, option)
    data = compare_table([load_summary(r, task_set, store) for r in runs], max_interop)
    _invalid_first(invalid_lines(data), as_json)
    _write_compare_outputs(data, html, png, err=as_json or markdown)
    if as_json:
        _echo_json(data)
        return
    if markdown:
        typer.echo(compare_markdown(data), nl=False)
        return
    console = _console()
    ablation = ablation_rich_table(data)
    if ablation is not None:
        console.print(ablation)
    for table in compare_tables(data):
        console.print(table)
    differs = provenance_differs_line(data)
    if differs:
        console.print(differs, style="yellow", markup=False)


def _write_compare_outputs(data: dict[str, Any], html: Path | None, png: Path | None, err: bool) -> None:
    """Write ``compare --html`` / ``--png`` and name each file (on stderr when stdout carries JSON or Markdown).

    Raises:
        UsageError: a file cannot be written, or no Chromium could draw the PNG.
    """
    if html is None and png is None:
        return
    from probegate.scorer.report.html import PNG_HEIGHT, PNG_WIDTH, compare_chart_page, render_compare
    from probegate.scorer.report.snapshot import html_to_png

    try:
        if html is not None:
            html.parent.mkdir(parents=True, exist_ok=True)
            html.write_text(render_compare(data), encoding="utf-8")
            typer.echo(f"chart and table: {html}", err=err)
        if png is not None:
            html_to_png(compare_chart_page(data), png, PNG_WIDTH, PNG_HEIGHT)
            typer.echo(f"chart: {png}", err=err)
    except OSError as exc:
        raise UsageError(f"cannot write {exc.filename or ''}: {exc.strerror or exc}") from None


def diff(
    old: str = typer.Argument(..., help="Baseline: run id, summary.json or runs/<run> folder."),
    new: str = typer.Argument(..., help="Candidate: run id, summary.json or runs/<run> folder."),
    task_set: str | None = TaskSetOption,
    store: str | None = StoreOption,
    as_json: bool = JsonOption,
    max_interop: float = MaxInteropOption,
) -> None:
    """Per-tier and per-task changes with 95 % intervals and a paired test; exits 1 when
    a tier falls below 95 % of OLD, 3 when either run is an invalid environment."""
    from probegate.scorer.report.compare import diff_runs
    from probegate.scorer.report.console import diff_lines, diff_tables
    from probegate.scorer.report.validity import invalid_line

    result = diff_runs(load_summary(old, task_set, store), load_summary(new, task_set, store), max_interop)
    invalid = [line for side in result.invalid if (line := invalid_line((result.validity or {})[side], getattr(result, side)))]
    _invalid_first(invalid, as_json)
    if as_json:
        _echo_json(result.to_json())
    else:
        console = _console()
        for table in diff_tables(result):
            console.print(table)
        for line in diff_lines(result)[len(invalid):]:
            console.print(line, markup=False)
    if result.invalid:
        raise typer.Exit(INVALID_EXIT)
    if result.regressed:
        raise typer.Exit(1)


def selftest(
    task_set: str = typer.Option("default", "--task-set", help="Task set name or folder."),
    store: str | None = StoreOption,
    as_json: bool = JsonOption,
    agents: bool = typer.Option(
        False, "--agents",
        help="Instead: run the gaming agents (do-nothing, claim-only, answer-spam, shotgun, wrong-target, poisoner) and an "
        "honest baseline through `probegate run` against a do-nothing model server, and check their ceilings.",
    ),
    max_interop: float = MaxInteropOption,
) -> None:
    """Check the grader: references score 1.0, every mutation fails with the right label.

    Exits 1 when one does not. Plays into a temporary store, or into --store (run
    selftest-<id>) so the attempts can be inspected with `probegate trace`. With
    --agents, audits the task set with gaming agents instead (each must stay at reach 0
    below the honest baseline's mean score; the poisoner's run must be invalid).
    """
    from probegate.scorer.report.console import selftest_table
    from probegate.scorer.selftest.suite import run_selftest
    from probegate.store.engine import check_store_url

    if store is not None:
        check_store_url(store)

    if agents:
        _audit(task_set, store, as_json, max_interop)
        return

    result = run_selftest(task_set, store)
    if as_json:
        _echo_json(result.to_json())
    else:
        data = result.to_json()
        console = _console()
        where = f" (run {result.run_id})" if result.run_id else ""
        console.print(f"selftest of {data['task_set']}: {data['cases']} cases, {data['skipped']} skipped, {len(data['failures'])} failing{where}")
        if result.failures():
            console.print(selftest_table(result))
    if not result.ok:
        raise typer.Exit(1)


def _audit(task_set: str, store: str | None, as_json: bool, max_interop: float) -> None:
    from probegate.runner.audit import audit_agents
    from probegate.scorer.report.console import audit_table

    report = audit_agents(task_set, store, max_interop=max_interop)
    if as_json:
        _echo_json(report.to_json())
    else:
        failing = [v for v in report.verdicts if not v.ok]
        console = _console()
        console.print(f"agent audit of {report.task_set}: {len(report.verdicts)} agents, {len(failing)} failing")
        console.print(audit_table(report.to_json()))
    if not report.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add the scoring commands to the CLI."""
    app.command("score")(score)
    app.command("report")(report)
    app.command("trace")(trace)
    app.command("debug-parse")(debug_parse)
    app.command("compare")(compare)
    app.command("diff")(diff)
    app.command("selftest")(selftest)
