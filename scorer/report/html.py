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
from probegate.scorer.report.metrics import AttemptResult
from probegate.scorer.report.provenance import provenance_rows
from probegate.scorer.judge.reach import DIMENSIONS
from probegate.scorer.report.summary import TIERS, RunScore

STAGES = ("first_action", "mid_chain", "final_answer")
TEMPLATES = Path(__file__).parent / "templates"
_CLIP = 4000
#: Provenance rows in the report header's line (all of them are in its table).
PROVENANCE_HEAD = ("server", "model file", "quantization", "context", "chat handler", "shims")
_CONFIG = {"displaylogo": False, "displayModeBar": False, "responsive": True}


def pct(value: float | None) -> str:
    """``0.8333`` -> ``83.3 %``; ``None`` -> ``–``."""
    return "–" if value is None else f"{value * 100:.1f} %"


def num(value: float | None, places: int = 2) -> str:
    """A number for a table cell; ``None`` -> ``–``."""
    if value is None:
        return "–"
    return f"{value:,.{places}f}" if isinstance(value, float) else f"{value:,}"


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
    charts = [
        _figure_html(radar_figure(summary), "chart-radar", True),
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
        charts=charts,
        labels=_label_rows(summary),
        tasks=[{"id": tid, "entry": summary["tasks"][tid], "attempts": rs} for tid, rs in sorted(by_task.items())],
        traces=[_trace_view(r) for r in results],
        dimensions=DIMENSIONS,
        tiers=[t for t in TIERS if t in summary["tiers"]],
        provenance=provenance_rows(summary.get("provenance")) if summary.get("provenance") else None,
        provenance_head=PROVENANCE_HEAD,
    )
