"""Rich renderings of scorer results for the terminal (pure: data in, renderables out)."""

from __future__ import annotations

import json
from typing import Any

from rich.markup import escape
from rich.table import Table

from probegate.scorer.report.compare import REGRESSION_RATIO, RunDiff, run_headings
from probegate.scorer.report.headline import HEADLINE_METRIC, headline_text, percent_interval
from probegate.scorer.report.provenance import provenance_line
from probegate.scorer.report.validity import invalid_line
from probegate.scorer.judge.reach import DIMENSIONS
from probegate.scorer.selftest.suite import SelftestReport
from probegate.scorer.trajectory import Trajectory


def pct(value: float | None) -> str:
    """``0.5`` -> ``50.0 %``; ``None`` -> ``–``."""
    return "–" if value is None else f"{value * 100:.1f} %"


def cell(value: Any, percent: bool = False) -> str:
    """A table cell: percentages, thousands separators, ``–`` for missing."""
    if value is None:
        return "–"
    if percent:
        return pct(float(value))
    return f"{value:,.1f}" if isinstance(value, float) else str(value)


def headline_lines(summary: dict[str, Any]) -> list[str]:
    """The lines printed above the run table: an invalid environment first, then the
    headline (mean score and reach per tier with 95 % intervals), reach, failures and
    interop (counted as failed; reach over served attempts beside it)."""
    head = summary["headline"]
    verdict = summary.get("validity") or {"valid": True}
    lines = []
    invalid = invalid_line(verdict, summary["run"]["id"])
    if invalid:
        lines.append(f"[bold red]{escape(invalid)}[/]")
        lines.append("[bold]mean score: not a measure of the model[/] (invalid environment)")
        reach = "[bold]reach: not a measure of the model[/] (invalid environment); "
    else:
        lines.append(f"[bold]{escape(headline_text(summary))}[/]")
        reach = f"reach {pct(head['reach'])} (median of {head['repeats']} repeat(s)); "
    lines.append(reach + f"{head['passed']}/{head['attempts']} attempts passed over {head['tasks']} tasks")
    if summary["failures"]["labels"]:
        lines.append("failures: " + ", ".join(f"{k} {v}" for k, v in summary["failures"]["labels"].items()))
    interop = summary["interop"]
    if interop["attempts"]:
        fields = ", ".join(interop["fields"]) or "?"
        pairs = ", ".join(interop.get("pairs") or {}) or "?"
        fixes = "; ".join(f"{k}: {v}" for k, v in (interop.get("fixes") or {}).items()) or "none known"
        lines.append(f"[yellow]interop failures (counted as failed): {interop['attempts']}[/] fields: {fields}; "
                     f"{escape(pairs)}; shims that would fix them: {fixes}")
        lines.append(f"reach over served attempts: {pct(head.get('reach_served'))} ({head.get('served_attempts')} attempts)")
    return lines + warning_lines(summary.get("warnings") or [])


#: Warning lines printed before "... and N more".
MAX_WARNING_LINES = 10


def warning_lines(warnings: list[str]) -> list[str]:
    """Capture warnings for the terminal: a count, then the first :data:`MAX_WARNING_LINES` (escaped for rich)."""
    if not warnings:
        return []
    lines = [f"[yellow]capture warnings: {len(warnings)}[/] (scored anyway; affected steps are marked corrupt_capture)"]
    lines += ["  " + escape(w) for w in warnings[:MAX_WARNING_LINES]]
    if len(warnings) > MAX_WARNING_LINES:
        lines.append(f"  ... and {len(warnings) - MAX_WARNING_LINES} more (summary.json: warnings)")
    return lines


def run_table(summary: dict[str, Any]) -> Table:
    """Mean score, reach, accuracy, misuse, depth and the five dimensions, overall and per tier."""
    run = summary["run"]
    table = Table(title=f"run {run['id']} · {run['model'] or '?'} · {run['harness'] or '?'} · {run['task_set']}")
    table.add_column("")
    for col in ("attempts", "score", "reach", "accuracy", "misuse", "depth", *DIMENSIONS):
        table.add_column(col, justify="right")
    for name, g in [("all", summary["overall"]), *sorted(summary["tiers"].items())]:
        dims = [pct(g["by_dimension"].get(d)) for d in DIMENSIONS]
        table.add_row(name, str(g["attempts"]), pct(g.get("score_mean")), pct(g["reach"]), pct(g["accuracy"]),
                      pct(g["misuse_rate"]), pct(g["path_depth"]), *dims)
    return table


def trace_table(trajectory: Trajectory) -> Table:
    """One trajectory step by step: output, parsed action, parse status, probe, observation."""
    table = Table(title=f"{trajectory.run_id} / {trajectory.task_id} / attempt {trajectory.attempt}", show_lines=True)
    for col in ("step", "thr", "output", "action", "parse", "probe", "observation"):
        table.add_column(col, overflow="fold")
    probes = {p.index: p for p in trajectory.probe_calls}
    for step in trajectory.steps:
        probe = probes.get(step.probe_call) if step.probe_call is not None else None
        action = f"{step.tool_name}({json.dumps(step.tool_args, ensure_ascii=False)})" if step.tool_name else "–"
        parse = " ".join([step.parse, step.parse_kind, *step.parse_notes])
        obs = step.observation
        obs_text = "" if obs is None else obs if isinstance(obs, str) else json.dumps(obs, ensure_ascii=False)
        table.add_row(str(step.step_id), str(step.thread), (step.raw_output or "")[:400], action, parse,
                      f"#{probe.index} {probe.status} via {probe.door}" if probe else "–", obs_text[:300])
    return table


def trace_footer(trajectory: Trajectory) -> list[str]:
    """Probe calls no step claimed, the final answer, loop and max-steps flags."""
    lines = [f"probe call #{p.index} {p.tool} {p.status} via {p.door} (no step claimed it)"
             for p in trajectory.probe_calls if p.joined_by != "call"]
    flags = [f"loop ({trajectory.loop.rule})" if trajectory.loop else "", "max steps hit" if trajectory.max_steps_hit else ""]
    lines.append(f"final answer: {trajectory.final_answer!r} {' '.join(f for f in flags if f)}".rstrip())
    return lines + warning_lines(trajectory.warnings)


def parse_table(chosen: dict[str, Any]) -> Table:
    """The calls the winning parser read (``debug-parse``)."""
    table = Table(title=f"chosen: {chosen['kind']} ({chosen['status']})")
    for col in ("tool", "arguments", "status", "notes"):
        table.add_column(col, overflow="fold")
    for call in chosen["calls"]:
        table.add_row(call["name"], json.dumps(call["arguments"], ensure_ascii=False), call["status"], ", ".join(call["notes"]))
    return table


def interval_cell(value: Any, interval: list[float] | None, percent: bool) -> str:
    """A value with its 95 % interval: ``50.0 % [30.1–69.9]``."""
    if percent and value is not None:
        return percent_interval(float(value), interval)
    shown = cell(value, percent)
    if interval is None or value is None:
        return shown
    low, high = interval
    return f"{shown} [{low:.2f}–{high:.2f}]"


#: What an invalid run's headline cell says instead of a number.
INVALID_HEADLINE = "invalid environment"


def row_cells(data: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """The cells of one comparison row, a value with its 95 % interval each; an invalid
    run's headline cell says ``invalid environment`` instead of a number."""
    intervals = row.get("intervals") or [None] * len(row["values"])
    cells = [interval_cell(v, i, row["percent"]) for v, i in zip(row["values"], intervals, strict=True)]
    if row["metric"] == HEADLINE_METRIC:
        cells = [INVALID_HEADLINE if not (run.get("validity") or {"valid": True}).get("valid", True) else c
                 for run, c in zip(data["runs"], cells, strict=True)]
    return cells


def invalid_lines(data: dict[str, Any]) -> list[str]:
    """One ``INVALID ENVIRONMENT`` line per invalid run of a comparison (plain text)."""
    return [line for run in data["runs"] if (line := invalid_line(run.get("validity") or {"valid": True}, run["id"]))]


def provenance_differs_line(data: dict[str, Any]) -> str | None:
    """A warning when the compared runs' numbers came from different places (plain text):
    ``provenance differs between the runs: model file, quantization`` (``None`` when it
    does not). ``data`` is :func:`compare_table`'s."""
    differs = data.get("provenance_differs") or []
    return f"provenance differs between the runs: {', '.join(differs)}" if differs else None


def provenance_summary_line(summary: dict[str, Any]) -> str | None:
    """The run's provenance in one line for the terminal (escaped for rich; ``None`` without it)."""
    line = provenance_line(summary.get("provenance"))
    return escape(line) if line else None


def compare_tables(data: dict[str, Any]) -> tuple[Table, Table]:
    """The metrics side by side, and the pass rate of every task per run."""
    table = Table(title="compare")
    table.add_column("metric")
    for run in data["runs"]:
        settings = run.get("settings") or {}
        feedback = settings.get("feedback")
        extra = f" · {feedback}" if feedback else ""
        extra += "".join(f" · {name} {settings[name]}" for name in ("protocol", "memory")
                         if settings.get(name) not in (None, "off"))
        table.add_column(f"{run['id']}\n{run['model'] or '?'} · {run['harness'] or '?'}{extra}", justify="right")
    for row in data["rows"]:
        metric = f"[yellow]{escape(row['metric'])} ≠[/]" if row.get("differs") else escape(row["metric"])
        table.add_row(metric, *(escape(c) for c in row_cells(data, row)),
                      style="bold" if row["metric"] == HEADLINE_METRIC else None)
    tasks = Table(title="pass rate per task")
    tasks.add_column("task")
    tasks.add_column("tier")
    for run in data["runs"]:
        tasks.add_column(run["id"], justify="right")
    for row in data["tasks"]:
        tasks.add_row(row["task"], row["tier"] or "", *(pct(v) for v in row["pass_rates"]))
    return table, tasks


def ablation_rich_table(data: dict[str, Any]) -> Table | None:
    """The seeds' ablation table of a comparison (``None`` when the runs are all in one arm):
    per run its arm, the mean score with partial credit and reach with 95 % intervals, and
    the score's change against the baseline arm of the same harness and model."""
    ablation = data.get("ablation")
    if not ablation:
        return None
    base = ablation["baseline"]
    table = Table(title="ablation (baseline: " + ", ".join(f"{k} {v}" for k, v in base.items()) + ")")
    for column in ("arm", "run", "harness", "protocol · memory · feedback", "mean score (partial credit)",
                   "reach", "score vs baseline"):
        table.add_column(column, justify="right" if column in ("mean score (partial credit)", "reach",
                                                                "score vs baseline") else "left")
    for row in ablation["rows"]:
        change = row["score_change"]
        table.add_row(
            row["arm"], str(row["run"]), str(row["harness"] or "?"), " · ".join(map(str, row["settings"].values())),
            interval_cell(row["score"], row["score_ci"], True), interval_cell(row["reach"], row["reach_ci"], True),
            "–" if change is None else f"{change * 100:+.1f} pt",
        )
    return table


def compare_markdown(data: dict[str, Any]) -> str:
    """The metrics side by side as a Markdown table (for a README or a pull request).

    One column per run, headed by its harness (by its id when two runs share one);
    rows where no run has a value are left out. ``data`` is :func:`compare_table`'s.
    """
    heads = run_headings(data)
    lines = ["| metric | " + " | ".join(f"`{h}`" for h in heads) + " |", "|---" * (len(heads) + 1) + "|"]
    for row in data["rows"]:
        if all(v is None for v in row["values"]):
            continue
        cells = (c.replace("|", "\\|") for c in row_cells(data, row))
        lines.append(f"| {row['metric']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _ci(interval: tuple[float, float] | None) -> str:
    return "" if interval is None else f" [{interval[0] * 100:.1f}–{interval[1] * 100:.1f}]"


def _verdict(t: Any) -> str:
    noise = " (within noise)" if t.within_noise else ""
    if t.regressed:
        return f"[red]REGRESSED[/]{noise}"
    return f"ok{noise}"


def diff_lines(result: RunDiff) -> list[str]:
    """The lines printed around the diff tables: invalid runs first, then the paired test."""
    lines = [line for side in result.invalid if (line := invalid_line((result.validity or {})[side], getattr(result, side)))]
    paired = result.paired
    if paired is not None:
        verdict = "more than noise" if paired.significant else "within noise"
        lines.append(f"paired test (exact McNemar over {paired.tasks} shared tasks): {paired.fixed} fixed, {paired.broken} broken, "
                     f"p = {paired.p_value:.3g}: {verdict}")
    for t in result.tiers:
        if t.regressed and t.within_noise:
            lines.append(f"{t.tier}: below {REGRESSION_RATIO:.0%} of old, but the drop is within noise (95 % intervals, paired test)")
    return lines


def diff_tables(result: RunDiff) -> tuple[Table, Table]:
    """Tier verdicts (reach with 95 % Wilson intervals, McNemar p per tier) and the tasks that changed."""
    tiers = Table(title=f"{result.old} -> {result.new} (regression: below {REGRESSION_RATIO:.0%} of old)")
    for col in ("tier", "old", "new", "change", "paired p", "verdict"):
        tiers.add_column(col, justify="right")
    for t in result.tiers:
        change = "–" if t.old is None or t.new is None else f"{(t.new - t.old) * 100:+.1f} pt"
        p = "–" if t.paired is None else f"{t.paired.p_value:.3g}"
        tiers.add_row(t.tier, pct(t.old) + _ci(t.old_ci), pct(t.new) + _ci(t.new_ci), change, p, _verdict(t))
    tasks = Table(title="tasks that changed")
    for col in ("task", "tier", "old pass", "new pass", "status"):
        tasks.add_column(col)
    for c in result.tasks:
        if c.status != "same":
            tasks.add_row(c.task, c.tier or "", pct(c.old_pass), pct(c.new_pass), c.status)
    return tiers, tasks


def selftest_table(report: SelftestReport) -> Table:
    """The cases where the grader misbehaved."""
    table = Table(title="grader failures")
    for col in ("task", "plan", "score", "labels", "problem"):
        table.add_column(col, overflow="fold")
    for c in report.failures():
        table.add_row(c.task_id, c.plan, cell(c.value), ", ".join(c.labels), c.problem or "")
    return table


def audit_table(data: dict[str, Any]) -> Table:
    """The agent audit (``selftest --agents``): per agent, its figures and broken ceilings."""
    table = Table(title=f"agent audit of {data['task_set']}")
    for col in ("agent", "passed", "reach", "mean score", "valid", "problems"):
        table.add_column(col, overflow="fold")
    for row in data["agents"]:
        valid = "–" if row["valid"] is None else ("yes" if row["valid"] else "INVALID")
        problems = "; ".join(row["problems"]) or "ok"
        table.add_row(row["agent"], f"{row['passed']}/{row['attempts']}", pct(row["reach"]), cell(row["score_mean"]) if row["score_mean"] is None else f"{row['score_mean']:.3f}",
                      valid, escape(problems))
    return table
