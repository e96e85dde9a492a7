"""Comparing scored runs: the side-by-side table and the regression diff. Pure.

Both work on summaries (``summary.json`` dicts), so a CI job can diff a fresh run
against a committed baseline file as well as against another run in the store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from probegate.scorer.judge.reach import DIMENSIONS
from probegate.scorer.report.summary import TIERS

#: A tier regresses when its new reach is below this share of the old one.
REGRESSION_RATIO = 0.95

def top_primary_failure(summary: dict[str, Any]) -> str | None:
    """The most common primary failure label with its count, ``"retry_loop (26)"``
    (ties: the label first in name order); ``None`` when no attempt failed with a label."""
    primary = lookup(summary, ("failures", "primary"))
    if not isinstance(primary, dict) or not primary:
        return None
    label, n = min(primary.items(), key=lambda item: (-item[1], item[0]))
    return f"{label} ({n})"


def shim_list(summary: dict[str, Any]) -> str | None:
    """The shims that rewrote at least one request of the run, ``"a, b"`` or ``"none"``."""
    shims = lookup(summary, ("run", "shims"))
    if shims is None:
        return None
    return ", ".join(shims) if shims else "none"


RowSource = tuple[str, ...] | Callable[[dict[str, Any]], Any]

#: Rows of the comparison table: (label, path into the summary, or a function of it).
COMPARE_ROWS: tuple[tuple[str, RowSource], ...] = (
    ("reach (median of repeats)", ("headline", "reach")),
    *((f"reach {t}", ("tiers", t, "reach")) for t in TIERS),
    ("mean score (partial credit)", ("overall", "score_mean")),
    *((f"reach · {d}", ("overall", "by_dimension", d)) for d in DIMENSIONS),
    ("path depth", ("overall", "path_depth")),
    ("tool-call accuracy", ("overall", "accuracy")),
    ("misuse rate", ("overall", "misuse_rate")),
    ("wrong tool", ("overall", "misuse", "wrong_tool")),
    ("wrong args", ("overall", "misuse", "wrong_args")),
    ("extra calls", ("overall", "misuse", "extra")),
    ("missing calls", ("overall", "misuse", "missing")),
    ("loops", ("overall", "loops")),
    ("pass^k", ("repeats", "pass_hat_k", "*")),
    ("repeats", ("repeats", "k")),
    ("reach spread", ("repeats", "reach_range")),
    ("model calls / attempt", ("cost", "mean", "model_calls")),
    ("tokens in / attempt", ("cost", "mean", "prompt_tokens")),
    ("tokens out / attempt", ("cost", "mean", "completion_tokens")),
    ("model latency ms / attempt", ("timing", "latency_ms", "mean")),
    ("wall time min", ("timing", "wall_min")),
    ("chat handler (embedded server)", ("run", "settings", "chat_handler")),
    ("interop failures", ("interop", "attempts")),
    ("most common primary failure", top_primary_failure),
    ("shims that rewrote a request", shim_list),
)
PERCENT_ROWS = {"reach", "mean score", "path depth", "tool-call accuracy", "misuse rate", "pass^k", "reach spread"}


def lookup(summary: dict[str, Any], path: Sequence[str]) -> Any:
    """The value at ``path`` in a summary (``None`` when absent); ``*`` means the key
    equal to the run's repeat count (``pass_hat_k`` at k)."""
    value: Any = summary
    for key in path:
        if key == "*":
            key = str(summary.get("repeats", {}).get("k", ""))
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def compare_table(summaries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The side-by-side comparison of several runs.

    Returns:
        ``{"runs": [{"id", "model", "harness", "task_set", "settings"}], "rows": [{"metric",
        "percent", "values": [...]}], "tasks": [{"task", "tier", "pass_rates": [...]}]}``.
    """
    runs = [{**{k: s["run"].get(k) for k in ("id", "model", "harness", "task_set")}, "settings": s["run"].get("settings", {})} for s in summaries]
    rows = [
        {
            "metric": label,
            "percent": any(label.startswith(p) for p in PERCENT_ROWS),
            "values": [path(s) if callable(path) else lookup(s, path) for s in summaries],
        }
        for label, path in COMPARE_ROWS
    ]
    task_ids = sorted({t for s in summaries for t in s.get("tasks", {})})
    tasks = [
        {
            "task": tid,
            "tier": next((s["tasks"][tid]["tier"] for s in summaries if tid in s.get("tasks", {})), None),
            "pass_rates": [lookup(s, ("tasks", tid, "pass_rate")) for s in summaries],
        }
        for tid in task_ids
    ]
    return {"runs": runs, "rows": rows, "tasks": tasks}


@dataclass(frozen=True)
class TierChange:
    """Reach of one tier in the old and new run."""

    tier: str
    old: float | None
    new: float | None
    regressed: bool

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form."""
        return {"tier": self.tier, "old": self.old, "new": self.new, "regressed": self.regressed}


@dataclass(frozen=True)
class TaskChange:
    """Pass rate and mean score of one task in the old and new run."""

    task: str
    tier: str | None
    old_pass: float | None
    new_pass: float | None
    old_score: float | None
    new_score: float | None

    @property
    def status(self) -> str:
        """``fixed``, ``broken``, ``better``, ``worse``, ``same``, ``new`` or ``gone``."""
        if self.old_pass is None:
            return "new"
        if self.new_pass is None:
            return "gone"
        if self.old_pass < 1 and self.new_pass == 1:
            return "fixed"
        if self.old_pass == 1 and self.new_pass < 1:
            return "broken"
        if self.new_pass != self.old_pass:
            return "better" if self.new_pass > self.old_pass else "worse"
        return "same"

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form."""
        return {
            "task": self.task,
            "tier": self.tier,
            "old_pass": self.old_pass,
            "new_pass": self.new_pass,
            "old_score": self.old_score,
            "new_score": self.new_score,
            "status": self.status,
        }


@dataclass(frozen=True)
class RunDiff:
    """``probegate diff OLD NEW``: per tier and per task; ``regressed`` gates CI."""

    old: str
    new: str
    tiers: tuple[TierChange, ...]
    tasks: tuple[TaskChange, ...]

    @property
    def regressed(self) -> bool:
        """Some tier's new reach fell below 95 % of its old reach."""
        return any(t.regressed for t in self.tiers)

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form."""
        return {
            "old": self.old,
            "new": self.new,
            "regressed": self.regressed,
            "ratio": REGRESSION_RATIO,
            "tiers": [t.to_json() for t in self.tiers],
            "tasks": [t.to_json() for t in self.tasks],
        }


def tier_regressed(old: float | None, new: float | None, ratio: float = REGRESSION_RATIO) -> bool:
    """Whether ``new`` is below ``ratio`` x ``old``; a tier absent from NEW counts as 0."""
    if old is None:
        return False
    return (new or 0.0) < ratio * old - 1e-12


def diff_runs(old: dict[str, Any], new: dict[str, Any]) -> RunDiff:
    """Compare two summaries per tier and per task (docs/metrics.md §11)."""
    tiers = []
    for tier in TIERS:
        before, after = lookup(old, ("tiers", tier, "reach")), lookup(new, ("tiers", tier, "reach"))
        if before is None and after is None:
            continue
        tiers.append(TierChange(tier, before, after, tier_regressed(before, after)))
    ids = sorted(set(old.get("tasks", {})) | set(new.get("tasks", {})))
    tasks = []
    for tid in ids:
        tier = lookup(new, ("tasks", tid, "tier")) or lookup(old, ("tasks", tid, "tier"))
        tasks.append(
            TaskChange(
                tid,
                tier,
                lookup(old, ("tasks", tid, "pass_rate")) if tid in old.get("tasks", {}) else None,
                lookup(new, ("tasks", tid, "pass_rate")) if tid in new.get("tasks", {}) else None,
                lookup(old, ("tasks", tid, "score_mean")),
                lookup(new, ("tasks", tid, "score_mean")),
            )
        )
    return RunDiff(old["run"]["id"], new["run"]["id"], tuple(tiers), tuple(tasks))
