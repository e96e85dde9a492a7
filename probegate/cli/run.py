"""``probegate run``: drive a task set through one harness against one model.

The command is a thin shell over :func:`probegate.runner.execute.execute`: it turns options
into a :class:`~probegate.runner.execute.RunConfig`, shows the progress while the attempts run
(:mod:`probegate.cli.progress`: a live view on a terminal, a line per attempt elsewhere), and
prints the summary table and the report path at the end. A run interrupted with Ctrl-C or
SIGTERM is marked ``interrupted``, still scored, and exits 130.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from probegate.cli.options import (
    MAX_INTEROP_DEFAULT,
    MaxInteropOption,
    StoreOption,
    broker_url,
    choice,
    http_url,
    number,
    writable_dir,
)
from probegate.cli.progress import progress_view
from probegate.cli.signals import sigterm_as_interrupt
from probegate.errors import UsageError

if TYPE_CHECKING:
    from probegate.runner.attempt import AttemptOutcome
    from probegate.runner.execute import RunReport

#: Exit status of an interrupted run (the shell's convention for SIGINT).
INTERRUPTED_EXIT = 130
#: Exit status of a run that finished but could not be scored or written (stored, rescorable).
SCORING_FAILED_EXIT = 1


def _stops(outcomes: list[AttemptOutcome]) -> str:
    stops = Counter(o.result.stop for o in outcomes)
    return ", ".join(f"{k} x{v}" if v > 1 else k for k, v in sorted(stops.items()))


def _rate(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) else "-"


def summary_table(report: RunReport, summary: dict[str, Any] | None = None) -> Table:
    """Per task: tier, attempts, passed, pass rate, mean score, how attempts stopped,
    failure labels (pure). Without a scorer ``summary`` the scored columns show ``-``."""
    table = Table(title=f"run {report.run_id} ({report.status})")
    for column in ("task", "tier", "attempts", "passed", "pass rate", "score", "stops", "failures"):
        numeric = column in ("attempts", "passed", "pass rate", "score")
        table.add_column(column, justify="right" if numeric else "left", no_wrap=column == "task")
    scored = (summary or {}).get("tasks") or {}
    by_task: dict[str, list[AttemptOutcome]] = {}
    for outcome in report.outcomes:
        by_task.setdefault(outcome.task_id, []).append(outcome)
    for task_id in sorted(set(by_task) | set(scored)):
        row = scored.get(task_id) or {}
        labels = row.get("labels") or {}
        table.add_row(
            task_id,
            str(row.get("tier", "-")),
            str(row.get("attempts", len(by_task.get(task_id, [])))),
            str(row.get("passed", "-")),
            _rate(row.get("pass_rate")),
            _rate(row.get("score_mean")),
            _stops(by_task.get(task_id, [])) or "-",
            ", ".join(f"{k} x{v}" if isinstance(v, int) and v > 1 else str(k) for k, v in sorted(dict(labels).items()))
            if isinstance(labels, dict) else ", ".join(map(str, labels)) or "-",
        )
    return table


def invalid_environment(summary: dict[str, Any] | None) -> str | None:
    """The INVALID ENVIRONMENT line of a run whose interop failures exceed the threshold (pure)."""
    verdict = (summary or {}).get("validity") or {}
    if verdict.get("valid", True):
        return None
    run_id = ((summary or {}).get("run") or {}).get("id")
    return f"INVALID ENVIRONMENT: run {run_id}: {verdict.get('reason')} (see the report's interop section)"


def headline(summary: dict[str, Any] | None) -> str | None:
    """The run's headline figures from the scorer's summary (pure): a first line with the
    mean score and reach per tier with 95 % intervals (docs/metrics.md §7; an invalid run's
    says why instead), then one line of reach, attempts passed, interop and pass^k."""
    from probegate.scorer.report.headline import headline_text

    head = (summary or {}).get("headline") or {}
    if not head:
        return None
    reach = head.get("reach")
    if invalid_environment(summary):
        parts = ["reach: not a measure of the model (invalid environment)"]
    else:
        parts = [f"reach {reach:.2f}" if isinstance(reach, (int, float)) else "reach -"]
    parts.append(f"{head.get('passed', '-')}/{head.get('attempts', '-')} attempts passed")
    if head.get("interop_attempts"):
        served = head.get("reach_served")
        parts.append(f"{head['interop_attempts']} interop (counted as failed; reach over served attempts "
                     f"{served:.2f})" if isinstance(served, (int, float)) else f"{head['interop_attempts']} interop (counted as failed)")
    pass_k = ((summary or {}).get("repeats") or {}).get("pass_hat_k")
    if isinstance(pass_k, (int, float)) and head.get("repeats", 1) and head.get("repeats", 1) > 1:
        parts.append(f"pass^{head['repeats']} {pass_k:.2f}")
    return headline_text(summary or {}) + "\n" + " | ".join(parts)


def _summary(run_score: Any) -> dict[str, Any] | None:
    summary = getattr(run_score, "summary", None)
    if callable(summary):
        summary = summary()
    return summary if isinstance(summary, dict) else None


def _print_report(console: Console, report: RunReport) -> None:
    score = report.score
    summary = _summary(score.run_score) if score is not None else None
    invalid = invalid_environment(summary)
    if invalid:
        console.print(invalid, style="bold red", markup=False)
    console.print(summary_table(report, summary))
    if score is None:
        return
    if score.error:
        console.print(score.error, style="yellow", markup=False)
        return
    line = headline(summary)
    if line:
        console.print(line)
    from probegate.scorer.report.provenance import provenance_line

    where = provenance_line((summary or {}).get("provenance"))
    if where:
        console.print(where, markup=False)
    console.print(f"report: {score.report_path or score.report_dir}")


def run(
    harness: str = typer.Option(
        ..., "--harness",
        help='fc, react, plan, code, langchain, crewai, openai-agents, openai-agents-chat, langchain-mcp, crewai-mcp, '
             'ollama, cmd:"COMMAND"; a comma list or all runs each against the same model (all leaves out the MCP '
             'variants, openai-agents-chat, and ollama, which needs --model-endpoint at an Ollama server).',
    ),
    model: str | None = typer.Option(
        None, "--model", help="Model name sent in every request (required with --model-endpoint or --gateway)."
    ),
    task_set: str = typer.Option("default", "--task-set", help="Task set name (under tasks/) or folder."),
    model_endpoint: str | None = typer.Option(
        None, "--model-endpoint", help="Base URL of the model server. Default: the embedded local model.",
        parser=http_url,
    ),
    gateway: str | None = typer.Option(
        None, "--gateway", help="A running probegate gateway (with probes) to use instead of starting one.",
        parser=http_url,
    ),
    store: str | None = StoreOption,
    repeats: int = typer.Option(1, "--repeats", help="Attempts per task (pass^k needs k > 1).", min=1),
    concurrency: int = typer.Option(1, "--concurrency", help="Attempts running at once.", min=1),
    temperature: float = typer.Option(0.0, "--temperature", help="Sampling temperature (0-2).",
                                      parser=number(at_least=0, at_most=2)),
    max_steps: int | None = typer.Option(None, "--max-steps", help="Model turns per attempt (default: each task's).", min=1),
    lang: str = typer.Option("en", "--lang", help="Prompt language: en or zh.", parser=choice("en", "zh")),
    feedback: str = typer.Option("actionable", "--feedback", help="Probe error feedback: plain or actionable.",
                                  parser=choice("plain", "actionable")),
    protocol: str = typer.Option(
        "off", "--protocol", parser=choice("off", "steps"),
        help="Execution protocol of the reference harnesses (fc, react, plan, code): steps adds 'Step k/N' before "
             "each model call and a completion check before the final answer. Recorded in the run's params.",
    ),
    memory: str = typer.Option(
        "off", "--memory", parser=choice("off", "digest"),
        help="Memory of the reference harnesses: digest keeps a short digest of earlier tool results in each "
             "request. Recorded in the run's params.",
    ),
    tasks: str | None = typer.Option(
        None, "--tasks",
        help="Task ids or subset names, comma-separated; all for every task. Default: the set's default subset "
             "(5 of the 36 built-in tasks), or every task of a set without one.",
    ),
    run_id: str | None = typer.Option(None, "--run-id", help="Run id (default: TIME-HARNESS-RANDOM)."),
    task_timeout: float = typer.Option(300.0, "--task-timeout", help="Seconds per attempt.",
                                      parser=number(above=0, what="seconds")),
    api_key: str = typer.Option("probegate", "--api-key", envvar="PROBEGATE_API_KEY", help="Key the agents send."),
    output_dir: Path = typer.Option(Path("runs"), "--output-dir", help="Where run reports are written."),
    model_path: str | None = typer.Option(
        None, "--model-path", help="Serve this GGUF file with the embedded llama.cpp server (no --model-endpoint)."
    ),
    compat: list[str] = typer.Option(
        [], "--compat",
        help="Request shims for the in-process gateway (see probegate serve --help); none for no shim. Default: "
             "none, except on the embedded model: the shims the doctor recommends for its chat handler and "
             "default-max-tokens=512.",
    ),
    unsafe_no_sandbox: bool = typer.Option(
        False, "--unsafe-no-sandbox",
        help="Let the code harness run model-written code without bubblewrap (audit hook and limits only). "
             "Recorded in the run's params.",
    ),
    max_interop: float = MaxInteropOption,
    executor: str = typer.Option(
        "local", "--executor", parser=choice("local", "celery"), help="Where attempts run: local (this process) or celery (`probegate worker`s)."
    ),
    broker: str | None = typer.Option(
        None, "--broker", envvar="PROBEGATE_BROKER", parser=broker_url, help="Celery broker URL for --executor celery (redis://..., amqp://...)."
    ),
    queue: str = typer.Option("probegate", "--queue", help="Broker queue the workers consume (--executor celery)."),
    max_tries: int = typer.Option(
        3, "--max-tries", min=1, help="Deliveries of one attempt (its worker lost each time) before it is recorded as an error."
    ),
    chat_handler: str | None = typer.Option(
        None, "--chat-handler",
        help="The embedded server's chat handler: probegate-chatml-tools (default) or llama-cpp-python's "
             "chatml-function-calling (drops tool results; for comparison). Recorded in the run's params.",
    ),
) -> None:
    """Run a task set through one agent harness (or several, one run each) and score it.

    Every attempt resets its world, then the harness talks to the model through the
    gateway (/r/RUN/TASK/ATTEMPT/v1) and to the probes (/r/RUN/TASK/ATTEMPT/tools).
    """
    from probegate.harnesses.registry import HarnessOptions, expand_harnesses
    from probegate.runner.execute import RunConfig, check_config
    from probegate.store.engine import check_store_url

    if chat_handler is not None and (model_endpoint or gateway):
        raise UsageError("--chat-handler picks the embedded server's prompt format: leave out --model-endpoint "
                         "and --gateway")
    harnesses, notes = expand_harnesses(
        harness, HarnessOptions(unsafe_no_sandbox=unsafe_no_sandbox, protocol=protocol, memory=memory)
    )
    check_store_url(store)
    writable_dir(output_dir, "--output-dir")  # before the run, not when its report is written
    if model_path is not None and not Path(model_path).is_file():
        raise UsageError(f"--model-path {model_path!r} is not a file")
    config = RunConfig(
        task_set=task_set,
        harness=harness,
        model=model,
        model_endpoint=model_endpoint,
        gateway=gateway,
        store=store,
        repeats=repeats,
        concurrency=concurrency,
        temperature=temperature,
        max_steps=max_steps,
        lang=lang,
        feedback=feedback,
        protocol=protocol,
        memory=memory,
        task_ids=tuple(t.strip() for t in (tasks or "").split(",") if t.strip()),
        run_id=run_id,
        task_timeout=task_timeout,
        api_key=api_key,
        output_dir=output_dir,
        model_path=model_path,
        compat=_shims(compat, chat_handler, local=not (model_endpoint or gateway) and executor == "local"),
        unsafe_no_sandbox=unsafe_no_sandbox,
        max_interop=max_interop,
        executor=executor,
        broker=broker,
        queue=queue,
        max_tries=max_tries,
        chat_handler=chat_handler,
    )
    console = Console(stderr=True)
    if unsafe_no_sandbox and "code" in harnesses:
        notes.append("--unsafe-no-sandbox: the code harness runs model-written code without OS isolation")
    for name in harnesses:  # refusals come before any note
        check_config(replace(config, harness=name))
    if config.compat and not compat:
        notes.append(f"shims for the embedded server: {','.join(config.compat)} (--compat none for none)")
    for note in notes:
        console.print(note, style="yellow", markup=False)
    with sigterm_as_interrupt():
        if len(harnesses) > 1:
            _run_many(config, harnesses)
        else:
            _run_one(replace(config, harness=harnesses[0]), console)


def _shims(compat: list[str], chat_handler: str | None, *, local: bool) -> tuple[str, ...]:
    """``--compat`` values -> the shims to apply: ``none`` is no shim; nothing given is
    the embedded server's own list when the run uses it (recorded on the run)."""
    from probegate.runner.embedded import embedded_shims

    values = [value.strip() for value in compat if value.strip()]
    if "none" in values:
        if len(values) > 1:
            raise UsageError("--compat none means no shim: give it alone")
        return ()
    if values or not local:
        return tuple(compat)
    return embedded_shims(chat_handler)


def _run_one(config: Any, console: Console) -> None:
    """One run with its progress view, then its table."""
    from probegate.runner.execute import execute

    view = progress_view(console, [config.harness], config.concurrency)
    try:
        report = execute(config, view.events(config.harness))
    except KeyboardInterrupt:  # a second Ctrl-C, or one outside the attempts: the run is marked
        typer.echo("interrupted", err=True)
        raise typer.Exit(INTERRUPTED_EXIT) from None
    finally:
        view.stop()
    _print_report(Console(), report)
    if report.status == "interrupted":
        raise typer.Exit(INTERRUPTED_EXIT)
    if report.score is not None and report.score.error:
        raise typer.Exit(SCORING_FAILED_EXIT)


def _run_many(config: Any, harnesses: list[str]) -> None:
    """One run per harness against the same model, in one progress view; then the side-by-side table."""
    from probegate.runner.execute import execute_many

    view = progress_view(Console(stderr=True), harnesses, config.concurrency)
    try:
        reports = execute_many(config, harnesses, view.events)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        raise typer.Exit(INTERRUPTED_EXIT) from None
    finally:
        view.stop()
    out = Console()
    for report in reports:
        _print_report(out, report)
    print_comparison(out, reports)
    if any(r.status == "interrupted" for r in reports):
        raise typer.Exit(INTERRUPTED_EXIT)
    if any(r.score is not None and r.score.error for r in reports):
        raise typer.Exit(SCORING_FAILED_EXIT)


def print_comparison(console: Console, reports: list[RunReport]) -> None:
    """The scorer's side-by-side table of the runs, then every report path."""
    from probegate.scorer.report.compare import compare_table
    from probegate.scorer.report.console import compare_tables, provenance_differs_line

    summaries = []
    for report in reports:
        summary = _summary(report.score.run_score) if report.score is not None else None
        if summary is not None:
            timing = getattr(report.score.run_score, "timing", None)
            summaries.append({**summary, "timing": timing()} if callable(timing) else summary)
    if len(summaries) > 1:
        threshold = (summaries[0].get("validity") or {}).get("max_interop", MAX_INTEROP_DEFAULT)
        data = compare_table(summaries, threshold)
        for table in compare_tables(data):
            console.print(table)
        differs = provenance_differs_line(data)
        if differs:
            console.print(differs, style="yellow", markup=False)
    for report in reports:
        where = report.score.report_path if report.score is not None else None
        console.print(f"{report.run_id}: {where or 'not scored'}")


def register(app: typer.Typer) -> None:
    """Add ``run`` to the CLI."""
    app.command("run")(run)
