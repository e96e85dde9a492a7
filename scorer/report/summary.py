"""A scored run and its summary (the content of ``summary.json``). Pure.

The summary is deterministic: tasks and attempts sorted, no wall-clock time, floats
rounded to 6 places (:func:`stable`), so the same store gives the same bytes.

Shape (``version`` 2)::

    {"version", "run": {"id", "task_set", "harness", "model", "status", "call_source", "shims",
             "settings": {"feedback", "protocol", "memory", "temperature", "max_steps", "repeats", "lang",
                          "chat_handler", "task_subset", "task_set_size"}},
     "provenance": {"server", "model", "chat", "sampling", "launcher", "shims", "probegate",
                    "frameworks", "headers", "sources", ...} | null,
     "headline": {"reach", "tasks", "attempts", "passed", "repeats", "interop_attempts",
                  "served_attempts", "reach_served", "valid", "invalid_reason"},
     "validity": {"valid", "attempts", "interop_attempts", "interop_share", "max_interop", "reason"},
     "overall": GROUP, "tiers": {"P0"|"P1"|"P2": GROUP + {"tasks"}},
     "repeats": {"k", "per_repeat_reach", "pass_rate", "pass_hat_k", "reach_median",
                 "reach_range", "reach_stdev", "reach_min", "reach_max"},
     "cost": {"mean": COST, "per_task": {task: COST}},
     "failures": {"labels", "primary", "rules", "stages", "by_tier": {tier: {label: n}}},
     "interop": {"attempts", "tasks", "fields", "pairs": {pair: n}, "fixes": {rule: shim},
                 "details": [{"task", "attempt", "rule", "evidence"}]},
     "tasks": {task: {"tier", "category", "dimensions", "attempts", "served", "passed",
                      "pass_rate", "pass_hat_k", "score_mean", "score_median", "accuracy",
                      "path_depth", "labels", "stages", "interop"}},
     "coverage": {"missing_tasks", "unknown_tasks"},
     "warnings": ["<task>/<attempt>: exchange 3: completion is a string, not an object", ...]}

where GROUP = {"attempts", "passed", "reach", "score_mean", "accuracy", "misuse_rate",
"misuse": {"wrong_tool", "wrong_args", "extra", "missing"}, "recoveries", "loops",
"max_steps_hit", "path_depth", "by_dimension": {dim: rate | null}, "dimension_attempts": {dim: n},
"cost": COST} and COST =
{"model_calls", "prompt_tokens", "completion_tokens"}.

Every attempt is in the denominator of every figure (interop failures included);
``headline.reach_served`` is the pass rate over the attempts the server served
properly, a second figure that is never the headline. Version 1 summaries excluded
interop attempts from every figure.

``provenance`` is where the run's numbers came from (server software and version, model
file, size, quantization, sha256, context size, chat handler, sampling, shims, framework
versions; shape in :mod:`probegate.runner.provenance`), as the run recorded it before its
attempts; ``null`` for a run recorded before provenance existed.

``warnings`` (``[]`` when the captures read cleanly) lists what the store held that
could not be read, run-level lines first, then each scored attempt's in order
(:func:`capture_warnings`); it is derived from the store alone, so it stays
deterministic.

Measured time (model latency) is not part of the summary, so replaying a run gives
the same bytes; :func:`timing` gives it for ``timing.json``.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from typing import Any

from probegate.scorer.judge.failures import offending_field
from probegate.scorer.report.metrics import (
    AttemptResult,
    cost,
    count,
    latency,
    group_metrics,
    mean,
    pass_hat_k,
    rate,
    repeat_metrics,
    served,
)
from probegate.scorer.report.validity import DEFAULT_MAX_INTEROP, validity
from probegate.scorer.rebuild.rows import RunInfo

#: Version of the summary format (2: every attempt counts, interop included; validity).
SUMMARY_VERSION = 2
TIERS = ("P0", "P1", "P2")
#: Run params copied into ``summary.run.settings`` (what ``compare`` tells runs apart by).
SETTINGS = ("feedback", "protocol", "memory", "temperature", "max_steps", "repeats", "lang", "chat_handler",
            "task_subset", "task_set_size")


@dataclass(frozen=True)
class RunScore:
    """A scored run.

    Attributes:
        run: the run's fields.
        task_set: the task set name it was scored against.
        results: every scored attempt, sorted by (task, attempt).
        missing_tasks: tasks of the set with no recorded attempt.
        unknown_tasks: task ids in the store that the set does not have (not scored).
        max_interop: the share of interop attempts above which the run is an invalid
            environment (0-1).
    """

    run: RunInfo
    task_set: str
    results: tuple[AttemptResult, ...]
    missing_tasks: tuple[str, ...] = ()
    unknown_tasks: tuple[str, ...] = ()
    max_interop: float = DEFAULT_MAX_INTEROP

    def summary(self) -> dict[str, Any]:
        """The summary dict (see the module docstring)."""
        return summarize(self)

    def timing(self) -> dict[str, Any]:
        """Measured model latency (ms per attempt): overall and per task."""
        return timing(self)

    def warnings(self) -> list[str]:
        """What the store held that could not be read (see :func:`capture_warnings`)."""
        return capture_warnings(self)

    def result(self, task_id: str, attempt: int = 0) -> AttemptResult:
        """One attempt's result.

        Raises:
            KeyError: no such attempt.
        """
        for r in self.results:
            if r.task_id == task_id and r.attempt == attempt:
                return r
        raise KeyError((task_id, attempt))


def stable(value: Any, places: int = 6) -> Any:
    """``value`` with floats rounded and dict keys sorted (recursively)."""
    if isinstance(value, float):
        rounded = round(value, places)
        return 0.0 if rounded == 0 else rounded
    if isinstance(value, dict):
        return {str(k): stable(v, places) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [stable(v, places) for v in value]
    return value


def _task_entry(results: list[AttemptResult]) -> dict[str, Any]:
    task = results[0].task
    counted = results
    passes = sum(r.score.passed for r in counted)
    values = [r.score.value for r in counted]
    return {
        "tier": task.tier,
        "category": task.category,
        "dimensions": list(task.dimensions),
        "attempts": len(results),
        "served": len(served(results)),
        "passed": passes,
        "pass_rate": rate(r.score.passed for r in counted),
        "pass_hat_k": {str(k): pass_hat_k(len(counted), passes, k) for k in range(1, len(counted) + 1)},
        "score_mean": mean(values),
        "score_median": statistics.median(values) if values else None,
        "accuracy": mean(r.score.alignment.accuracy for r in counted),
        "path_depth": mean(r.score.depth / 4 for r in counted),
        "labels": count(label for r in counted for label in r.score.labels),
        "stages": count(r.score.stage for r in counted if r.score.stage),
        "interop": len(results) - len(served(results)),
    }


def _failures(results: list[AttemptResult]) -> dict[str, Any]:
    failed = [r for r in results if not r.score.passed]
    by_tier = {t: count(l for r in failed if r.task.tier == t for l in r.score.labels) for t in TIERS}
    return {
        "labels": count(label for r in failed for label in r.score.labels),
        "primary": count(r.score.labels[0] for r in failed if r.score.labels),
        "rules": count(a.rule for r in failed for a in r.score.attributions),
        "stages": count(r.score.stage for r in failed if r.score.stage),
        "by_tier": {t: v for t, v in by_tier.items() if v},
    }


def _interop(results: tuple[AttemptResult, ...]) -> dict[str, Any]:
    hit = [r for r in results if r.score.interop]
    details = [
        {"task": r.task_id, "attempt": r.attempt, "rule": a.rule, "evidence": a.evidence}
        for r in hit
        for a in r.score.attributions
        if a.label == "interop"
    ]
    fields = sorted({f for d in details if (f := _field(str(d["evidence"])))})
    pairs = count(m.group(1) for d in details if (m := _PAIR.search(str(d["evidence"]))))
    fixes = {str(d["rule"]): fix for d in details if (fix := _fix(str(d["evidence"])))}
    return {"attempts": len(hit), "tasks": sorted({r.task_id for r in hit}), "fields": fields, "pairs": pairs,
            "fixes": dict(sorted(fixes.items())), "details": details}


_PAIR = re.compile(r"\((client [^()]*? -> server [^()]*?)\)")
_FIX = re.compile(r"(?:the |a )?([\w-]+(?: or [\w-]+)?) shims? (?:may|would|will) (?:bring|fix)[^;.)]*")


#: Request shims (``probegate serve --compat``) that fix a rejected field.
FIELD_FIXES = (("content", "null-content"), ("arguments", "args-as-string"), ("max_completion_tokens", "max-tokens-alias"))


def _fix(evidence: str) -> str | None:
    """The shim that would fix an interop fault: the one its evidence names
    (``tool-choice-auto or system-for-tools``), else the one for the rejected field."""
    found = _FIX.search(evidence)
    if found:
        return found.group(1)
    field = _field(evidence) or ""
    return next((shim for end, shim in FIELD_FIXES if field.endswith(end)), None)


def _field(evidence: str) -> str | None:
    found = re.search(r"at field (\S+):", evidence)
    return found.group(1) if found else offending_field(evidence)


def shims_used(run_score: RunScore) -> list[str]:
    """Every request shim the gateway applied during the run (from the exchanges'
    ``compat`` records), sorted; ``[]`` for a run seen as the agent sent it."""
    return sorted({s for r in run_score.results for ex in r.trajectory.exchanges for s in ex.shims})


def capture_warnings(run_score: RunScore) -> list[str]:
    """What the store held that could not be read: the run's lines, then ``"<task>/<attempt>: ..."``."""
    lines = list(run_score.run.warnings)
    for r in sorted(run_score.results, key=lambda r: (r.task_id, r.attempt)):
        lines.extend(f"{r.task_id}/{r.attempt}: {w}" for w in r.trajectory.warnings)
    return lines


def timing(run_score: RunScore) -> dict[str, Any]:
    """``{"version", "run", "wall_min", "latency_ms": {"mean", "per_task": {task: ms}}}`` (rounded).

    ``wall_min`` is the run's wall time in minutes (creation to end; ``None`` if unknown).
    """
    by_task: dict[str, list[AttemptResult]] = {}
    for result in run_score.results:
        by_task.setdefault(result.trajectory.task_id, []).append(result)
    return stable(
        {
            "version": SUMMARY_VERSION,
            "run": run_score.run.id,
            "wall_min": None if run_score.run.wall_s is None else round(run_score.run.wall_s / 60, 1),
            "latency_ms": {
                "mean": latency(run_score.results),
                "per_task": {t: latency(v) for t, v in sorted(by_task.items())},
            },
        }
    )


def summarize(run_score: RunScore) -> dict[str, Any]:
    """Build the summary of a scored run (see the module docstring for the shape)."""
    results = list(run_score.results)
    counted = results  # every attempt counts (docs/metrics.md §7)
    ok = served(results)
    by_task: dict[str, list[AttemptResult]] = {}
    for r in results:
        by_task.setdefault(r.task_id, []).append(r)
    repeats = repeat_metrics(counted)
    verdict = validity(len(results), len(results) - len(ok), run_score.max_interop)
    tiers = {}
    for tier in TIERS:
        group = [r for r in counted if r.task.tier == tier]
        if any(r.task.tier == tier for r in results):
            tiers[tier] = {**group_metrics(group), "tasks": len({r.task_id for r in results if r.task.tier == tier})}
    sources = {r.trajectory.call_source for r in results}
    call_source = sources.pop() if len(sources) == 1 else "probes"
    summary = {
        "version": SUMMARY_VERSION,
        "run": {
            "id": run_score.run.id,
            "task_set": run_score.task_set,
            "harness": run_score.run.harness,
            "model": run_score.run.model,
            "status": run_score.run.status,
            "call_source": call_source,
            "shims": shims_used(run_score),
            "settings": {k: run_score.run.params[k] for k in SETTINGS if run_score.run.params.get(k) is not None},
        },
        "provenance": provenance if isinstance(provenance := run_score.run.params.get("provenance"), dict) else None,
        "headline": {
            "reach": repeats["reach_median"],
            "tasks": len(by_task),
            "attempts": len(results),
            "passed": sum(r.score.passed for r in counted),
            "repeats": repeats["k"],
            "interop_attempts": len(results) - len(ok),
            "served_attempts": len(ok),
            "reach_served": rate(r.score.passed for r in ok),
            "valid": verdict["valid"],
            "invalid_reason": verdict["reason"],
        },
        "validity": verdict,
        "overall": group_metrics(counted),
        "tiers": tiers,
        "repeats": repeats,
        "cost": {"mean": cost(results), "per_task": {t: cost(v) for t, v in sorted(by_task.items())}},
        "failures": _failures(counted),
        "interop": _interop(run_score.results),
        "tasks": {t: _task_entry(v) for t, v in sorted(by_task.items())},
        "coverage": {"missing_tasks": sorted(run_score.missing_tasks), "unknown_tasks": sorted(run_score.unknown_tasks)},
        "warnings": capture_warnings(run_score),
    }
    return stable(summary)
