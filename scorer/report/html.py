"""``report.html``: one self-contained page that opens offline.

Charts are Plotly figures with plotly.js embedded once (inline, no CDN); tables and
the step-by-step trace views come from a Jinja2 template with autoescaping (model
output is untrusted text). Every value the template prints is scrubbed of secrets
first (the environment's ``finalize``), whatever the store holds.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
import plotly.graph_objects as go  # type: ignore[import-untyped]

from probegate.redact import SECRETS
from probegate.scorer.judge.failures import LABELS
from probegate.scorer.report.compare import run_headings
from probegate.scorer.report.headline import ALL, HEADLINE_METRIC, headline_figures, percent_interval
from probegate.scorer.report.metrics import AttemptResult
from probegate.scorer.judge.reach import DIMENSIONS
from probegate.scorer.report.summary import TIERS, RunScore

STAGES = ("first_action", "mid_chain", "final_answer")
TEMPLATES = Path(__file__).parent / "templates"
_CLIP = 4000
_CONFIG = {"displaylogo": False, "displayModeBar": False, "responsive": True}


def pct(value: float | None) -> str:
    """``0.8333`` -> ``83.3 %``; ``None`` -> ``–``."""
    return "–" if value is None else f"{value * 100:.1f} %"


def num(value: float | None, places: int = 2) -> str:
    """A number for a table cell; ``None`` -> ``–``."""
    if value is None:
        return "–"
    return f"{value:,.{places}f}" if isinstance(value, float) else f"{value:,}"


def ci(interval: Any) -> str:
    """A 95 % interval as ``[11.2–22.4]`` (percent); ``""`` without one."""
    return "" if not interval else f"[{interval[0] * 100:.1f}–{interval[1] * 100:.1f}]"


def _scrubbed(value: Any) -> Any:
    """What the template prints: text without secrets; markup (the charts) as it is."""
    if value is None or isinstance(value, (markupsafe.Markup, bool, int, float)):
        return value
    return SECRETS.text(value if isinstance(value, str) else str(value))


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        finalize=_scrubbed,
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = pct
    env.filters["num"] = num
    env.filters["ci"] = ci
    return env


def _figure_html(fig: go.Figure, div_id: str, first: bool) -> str:
    fig.update_layout(margin={"l": 40, "r": 20, "t": 50, "b": 40}, height=340, template="plotly_white")
    return str(fig.to_html(full_html=False, include_plotlyjs=first, div_id=div_id, config=_CONFIG))


def radar_figure(summary: dict[str, Any]) -> go.Figure:
    """Reach per dimension (0-1) as a radar chart; dimensions no task lists show 0."""
    dims = summary["overall"]["by_dimension"]
    values = [dims.get(d) or 0.0 for d in DIMENSIONS]
    fig = go.Figure(go.Scatterpolar(r=values + values[:1], theta=list(DIMENSIONS) + [DIMENSIONS[0]], fill="toself", name="reach"))
    fig.update_layout(title="Reach per dimension", polar={"radialaxis": {"range": [0, 1]}}, showlegend=False)
    return fig


def tier_figure(summary: dict[str, Any]) -> go.Figure:
    """Reach, tool-call accuracy and path depth per tier."""
    tiers = [t for t in TIERS if t in summary["tiers"]]
    fig = go.Figure()
    for key, name in (("reach", "reach"), ("accuracy", "tool-call accuracy"), ("path_depth", "path depth")):
        fig.add_trace(go.Bar(x=tiers, y=[summary["tiers"][t].get(key) or 0.0 for t in tiers], name=name))
    fig.update_layout(title="Per tier", barmode="group", yaxis={"range": [0, 1]}, legend={"orientation": "h", "y": -0.15})
    return fig


#: One colour per group of tasks, the same in every score chart.
GROUP_COLORS = {ALL: "#1f6feb", "P0": "#2da44e", "P1": "#bf8700", "P2": "#cf222e"}


def _error_bars(values: list[float | None], intervals: list[Any]) -> dict[str, Any]:
    """Asymmetric plotly error bars from 95 % intervals (none where a value or interval is missing)."""
    up = [None if v is None or ci is None else max(0.0, ci[1] - v) for v, ci in zip(values, intervals, strict=True)]
    down = [None if v is None or ci is None else max(0.0, v - ci[0]) for v, ci in zip(values, intervals, strict=True)]
    return {"type": "data", "symmetric": False, "array": up, "arrayminus": down, "thickness": 1.5, "width": 4}


def _hover(values: list[float | None], intervals: list[Any]) -> list[str]:
    return [percent_interval(v, ci) for v, ci in zip(values, intervals, strict=True)]


def score_figure(summary: dict[str, Any]) -> go.Figure:
    """The headline as a chart: mean score (partial credit) and reach, of every task and
    per tier, each bar with its 95 % interval (bootstrap over tasks; Wilson) as error bars."""
    figures = headline_figures(summary)
    groups = list(figures["tiers"])
    fig = go.Figure()
    for key, name in (("score", HEADLINE_METRIC), ("reach", "reach")):
        values = [figures["tiers"][g][key] for g in groups]
        intervals = [figures["tiers"][g][f"{key}_interval"] for g in groups]
        fig.add_trace(go.Bar(x=groups, y=values, name=name, error_y=_error_bars(values, intervals),
                             customdata=_hover(values, intervals), hovertemplate="%{x}: %{customdata}<extra>" + name + "</extra>"))
    title = "Mean score and reach per tier (95 % intervals)"
    if not figures["valid"]:
        title = "Invalid environment: not a measure of the model"
    fig.update_layout(title=title, barmode="group", yaxis={"tickformat": ".0%", "rangemode": "tozero"},
                      legend={"orientation": "h", "y": -0.15})
    return fig


def compare_figure(data: dict[str, Any]) -> go.Figure:
    """Mean score (partial credit) by harness and tier: grouped bars (one group per run,
    one bar per tier and for every task), error bars = 95 % bootstrap intervals over tasks.

    ``data`` is :func:`~probegate.scorer.report.compare.compare_table`'s. An invalid run
    gets no bars: its label says ``invalid environment`` instead of a number.
    """
    heads = run_headings(data)
    labels = [h if (run.get("validity") or {"valid": True}).get("valid", True) else f"{h}<br>(invalid environment)"
              for h, run in zip(heads, data["runs"], strict=True)]
    fig = go.Figure()
    for group in (ALL, *TIERS):
        found = [(run.get("headline") or {}).get("tiers", {}).get(group) for run in data["runs"]]
        if not any(found):
            continue
        valid = [(run.get("validity") or {"valid": True}).get("valid", True) for run in data["runs"]]
        values = [g["score"] if g and ok else None for g, ok in zip(found, valid, strict=True)]
        intervals = [g["score_interval"] if g and ok else None for g, ok in zip(found, valid, strict=True)]
        fig.add_trace(go.Bar(x=labels, y=values, name="all tasks" if group == ALL else group, marker_color=GROUP_COLORS[group],
                             error_y=_error_bars(values, intervals), customdata=_hover(values, intervals),
                             hovertemplate="%{x}: %{customdata}<extra>" + group + "</extra>"))
    models = sorted({run.get("model") or "?" for run in data["runs"]})
    fig.update_layout(title=f"Mean score (partial credit) by harness and tier · {', '.join(models)} · 95 % intervals",
                      barmode="group", yaxis={"tickformat": ".0%", "rangemode": "tozero", "title": HEADLINE_METRIC},
                      legend={"orientation": "h", "y": -0.12}, template="plotly_white",
                      margin={"l": 60, "r": 20, "t": 60, "b": 60})
    return fig


def stage_figure(summary: dict[str, Any]) -> go.Figure:
    """How many failed attempts died at each stage."""
    stages = summary["failures"]["stages"]
    fig = go.Figure(go.Bar(x=list(STAGES), y=[stages.get(s, 0) for s in STAGES], marker_color="#d62728"))
    fig.update_layout(title="Where failed attempts died", yaxis={"title": "attempts"})
    return fig


def _clip(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1, default=str)
    return text if len(text) <= _CLIP else text[:_CLIP] + f"\n… ({len(text) - _CLIP} more characters)"


def _trace_view(result: AttemptResult) -> dict[str, Any]:
    t, s = result.trajectory, result.score
    probes = {p.index: p for p in t.probe_calls}
    steps = []
    for step in t.steps:
        probe = probes.get(step.probe_call) if step.probe_call is not None else None
        steps.append(
            {
                "step": step,
                "raw": _clip(step.raw_output),
                "args": _clip(step.tool_args),
                "observation": _clip(step.observation),
                "probe": probe,
                "probe_result": _clip(probe.result) if probe else "",
            }
        )
    unjoined = [p for p in t.probe_calls if p.joined_by != "call"]
    return {
        "anchor": f"trace-{result.task_id}-{result.attempt}",
        "result": result,
        "score": s,
        "steps": steps,
        "unjoined": [{"probe": p, "args": _clip(p.args), "result": _clip(p.result)} for p in unjoined],
        "final_answer": _clip(t.final_answer),
    }


def _label_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    failures = summary["failures"]
    rows = []
    for label in LABELS:
        rules = {r: n for r, n in failures["rules"].items() if r.split(".")[0] == label}
        if failures["labels"].get(label) or rules:
            rows.append({"label": label, "count": failures["labels"].get(label, 0), "primary": failures["primary"].get(label, 0), "rules": rules})
    return rows


def render_report(run_score: RunScore, summary: dict[str, Any] | None = None) -> str:
    """The whole report page as HTML text.

    Args:
        run_score: the scored run.
        summary: its summary (computed when not given).
    """
    summary = summary or run_score.summary()
    headline_chart = _figure_html(score_figure(summary), "chart-score", True)
    charts = [
        _figure_html(radar_figure(summary), "chart-radar", False),
        _figure_html(tier_figure(summary), "chart-tiers", False),
        _figure_html(stage_figure(summary), "chart-stages", False),
    ]
    results = sorted(run_score.results, key=lambda r: (r.task_id, r.attempt))
    by_task: dict[str, list[AttemptResult]] = {}
    for r in results:
        by_task.setdefault(r.task_id, []).append(r)
    template = _environment().get_template("report.html")
    return template.render(
        summary=summary,
        headline=headline_figures(summary),
        headline_chart=headline_chart,
        charts=charts,
        labels=_label_rows(summary),
        tasks=[{"id": tid, "entry": summary["tasks"][tid], "attempts": rs} for tid, rs in sorted(by_task.items())],
        traces=[_trace_view(r) for r in results],
        dimensions=DIMENSIONS,
        tiers=[t for t in TIERS if t in summary["tiers"]],
    )


#: Size of the compare chart's PNG (CSS pixels).
PNG_WIDTH, PNG_HEIGHT = 1000, 540


def render_compare(data: dict[str, Any]) -> str:
    """``probegate compare --html``: the chart of mean score by harness and tier, then the
    comparison table, as one self-contained page (plotly.js inline, no network).

    ``data`` is :func:`~probegate.scorer.report.compare.compare_table`'s.
    """
    from probegate.scorer.report.console import invalid_lines, row_cells

    fig = compare_figure(data)
    fig.update_layout(height=480)
    chart = str(fig.to_html(full_html=False, include_plotlyjs=True, div_id="chart-compare", config=_CONFIG))
    rows = [{"metric": row["metric"], "cells": row_cells(data, row)} for row in data["rows"]
            if any(v is not None for v in row["values"])]
    return _environment().get_template("compare.html").render(
        chart=chart, rows=rows, runs=data["runs"], heads=run_headings(data), invalid=invalid_lines(data),
    )


def compare_chart_page(data: dict[str, Any], width: int = PNG_WIDTH, height: int = PNG_HEIGHT) -> str:
    """The compare chart alone on a page of exactly ``width`` x ``height`` CSS pixels,
    drawn once without interaction (``staticPlot``): what ``--png`` screenshots."""
    fig = compare_figure(data)
    fig.update_layout(width=width, height=height)
    div = fig.to_html(full_html=False, include_plotlyjs=True, div_id="chart-compare",
                      config={"staticPlot": True, "displayModeBar": False})
    return ('<!DOCTYPE html><html><head><meta charset="utf-8"><style>html, body { margin: 0; background: #fff; }'
            f"</style></head><body>{div}</body></html>")
