"""Writing a scored run: ``summary.json``, ``scores.csv``, ``traces/`` and ``report.html``.

Trace file shape (``traces/<task>-<attempt>.json``, ``version`` 1)::

    {"version": 1,
     "task": {"id", "tier", "category", "dimensions", "order", "expected_actions",
              "expected_answer", "verify", "trap", "max_steps"},
     "trajectory": {...},            # probegate.scorer.trajectory.Trajectory
     "score": {"value", "passed", "explanation", "evidence", "dimensions", "depth",
               "stage", "labels", "attributions", "interop"}}
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from probegate.ids import child_path
from probegate.redact import SECRETS
from probegate.scorer.report.metrics import AttemptResult
from probegate.scorer.report.summary import RunScore, stable

#: Version of the trace file format.
TRACE_FILE_VERSION = 1

CSV_COLUMNS = (
    "task_id", "attempt", "tier", "category", "passed", "score", "interop", "accuracy", "misuse_rate",
    "wrong_tool", "wrong_args", "extra", "missing", "recoveries", "loop", "max_steps_hit", "depth",
    "stage", "labels", "primary_rule", "model_calls", "prompt_tokens", "completion_tokens", "latency_ms",
)


def dump_json(value: Any) -> str:
    """Stable JSON text: sorted keys, rounded floats, two-space indent, final newline."""
    return json.dumps(stable(value), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def trace_document(result: AttemptResult) -> dict[str, Any]:
    """The trace file content of one attempt (see the module docstring)."""
    task = result.task
    return {
        "version": TRACE_FILE_VERSION,
        "task": {
            "id": task.id,
            "tier": task.tier,
            "category": task.category,
            "dimensions": list(task.dimensions),
            "order": task.order,
            "expected_actions": [a.model_dump() for a in task.expected_actions],
            "expected_answer": task.expected_answer.model_dump(by_alias=True, exclude_defaults=True) if task.expected_answer else None,
            "verify": [{"check": v.check, **v.params()} for v in task.verify],
            "trap": task.trap.model_dump(),
            "max_steps": task.max_steps,
        },
        "trajectory": result.trajectory.model_dump(mode="json"),
        "score": result.score.to_json(),
    }


def trace_name(result: AttemptResult) -> str:
    """``<task>-<attempt>.json``."""
    return f"{result.task_id}-{result.attempt}.json"


def score_row(result: AttemptResult) -> dict[str, Any]:
    """One ``scores.csv`` row."""
    s, t = result.score, result.trajectory
    misuse = s.alignment.misuse()
    return {
        "task_id": result.task_id,
        "attempt": result.attempt,
        "tier": result.task.tier,
        "category": result.task.category,
        "passed": int(s.passed),
        "score": round(s.value, 6),
        "interop": int(s.interop),
        "accuracy": round(s.alignment.accuracy, 6),
        "misuse_rate": round(s.alignment.misuse_rate, 6),
        **misuse,
        "recoveries": len(s.alignment.recoveries),
        "loop": int(t.loop_detected),
        "max_steps_hit": int(t.max_steps_hit),
        "depth": s.depth,
        "stage": s.stage or "",
        "labels": ";".join(s.labels),
        "primary_rule": s.attributions[0].rule if s.attributions else "",
        "model_calls": t.usage.model_calls,
        "prompt_tokens": t.usage.prompt_tokens,
        "completion_tokens": t.usage.completion_tokens,
        "latency_ms": round(t.usage.latency_ms, 3),
    }


def scores_csv(run_score: RunScore) -> str:
    """``scores.csv`` text: one row per attempt, sorted by task and attempt."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for result in sorted(run_score.results, key=lambda r: (r.task_id, r.attempt)):
        writer.writerow(score_row(result))
    return buffer.getvalue()


def write_outputs(run_score: RunScore, out_dir: Path) -> dict[str, Path]:
    """Write every output of a scored run into ``out_dir`` (normally ``runs/<run>``).

    Trace files of attempts no longer present are removed from ``out_dir/traces``.
    Every file is scrubbed of secrets (:data:`probegate.redact.SECRETS`), whatever the
    store holds (a store written by an older probegate may hold some); a trace file is
    written only inside ``out_dir/traces`` (:func:`probegate.ids.child_path`).

    Returns:
        ``{"summary": path, "scores": path, "traces": dir, "report": path}``.

    Raises:
        OSError: the folder cannot be written.
        UsageError: a task id would name a file outside ``out_dir/traces``.
    """
    from probegate.scorer.report.html import render_report

    out_dir.mkdir(parents=True, exist_ok=True)
    traces = out_dir / "traces"
    traces.mkdir(exist_ok=True)
    summary = run_score.summary()
    paths = {"summary": out_dir / "summary.json", "scores": out_dir / "scores.csv", "traces": traces,
             "report": out_dir / "report.html", "timing": out_dir / "timing.json"}
    paths["summary"].write_text(dump_json(SECRETS.json(summary)), encoding="utf-8")
    paths["timing"].write_text(dump_json(run_score.timing()), encoding="utf-8")
    paths["scores"].write_text(SECRETS.text(scores_csv(run_score)), encoding="utf-8")
    written = set()
    for result in run_score.results:
        name = trace_name(result)
        child_path(traces, name).write_text(dump_json(SECRETS.json(trace_document(result))), encoding="utf-8")
        written.add(name)
    for stale in traces.glob("*.json"):
        if stale.name not in written:
            stale.unlink()
    paths["report"].write_text(render_report(run_score, summary), encoding="utf-8")
    return paths
