"""Comparing scored runs: the side-by-side table and the regression diff. Pure.

Both work on summaries (``summary.json`` dicts), so a CI job can diff a fresh run
against a committed baseline file as well as against another run in the store.
Every reach figure carries a 95 % interval (:mod:`probegate.scorer.report.stats`), the
diff of two runs on the same tasks an exact McNemar test, and every run its validity
(:mod:`probegate.scorer.report.validity`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from probegate.scorer.judge.reach import DIMENSIONS
from probegate.scorer.report.headline import (
    HEADLINE_METRIC,
    headline_figures,
    reach_interval,
    score_interval,
    score_value,
)
from probegate.scorer.report.stats import PairedTest, mcnemar_paired, pass_map, rate_interval, wilson
from probegate.scorer.report.provenance import COMPARE as PROVENANCE_COMPARE
from probegate.scorer.report.provenance import provenance_differs, provenance_rows
from probegate.scorer.report.summary import TIERS
from probegate.scorer.report.validity import DEFAULT_MAX_INTEROP, summary_validity

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


#: The seeds' ablation variables (run settings) and their values in the ablation's baseline arm.
ABLATION_BASELINE: dict[str, str] = {"protocol": "off", "memory": "off", "feedback": "plain"}
#: The same settings' values in a run that does not record them (runs made before the
#: option existed ran without it; ``feedback`` has always been recorded, default ``actionable``).
SETTING_DEFAULTS: dict[str, str] = {"protocol": "off", "memory": "off", "feedback": "actionable"}


def setting(summary: dict[str, Any], name: str) -> Any:
    """A run setting from ``summary.run.settings``, or its default when the run does not record it."""
    settings = lookup(summary, ("run", "settings"))
    value = settings.get(name) if isinstance(settings, dict) else None
    return SETTING_DEFAULTS.get(name) if value is None else value


def ablation_arm(summary: dict[str, Any]) -> str:
    """The run's arm in the seeds' ablation: ``baseline`` (protocol off, memory off, plain
    feedback), else the variables it changes, ``+ protocol``, ``+ memory``, ``+ feedback``
    (several when it changes several: ``+ protocol + memory``)."""
    changed = [name for name, base in ABLATION_BASELINE.items() if setting(summary, name) != base]
    return " ".join(f"+ {name}" for name in changed) or "baseline"


def ablation_settings(summary: dict[str, Any]) -> str:
    """``protocol · memory · feedback`` of the run, ``steps · off · plain``."""
    return " · ".join(str(setting(summary, name)) for name in ABLATION_BASELINE)


RowSource = tuple[str, ...] | Callable[[dict[str, Any]], Any]

#: Rows of the comparison table: (label, path into the summary, or a function of it).
#: The headline leads (docs/metrics.md §7): the mean score, which separates harnesses
#: when reach is 0 for all of them, then reach per tier; then the rest.
COMPARE_ROWS: tuple[tuple[str, RowSource], ...] = (
    (HEADLINE_METRIC, ("overall", "score_mean")),
    *((f"reach {t}", ("tiers", t, "reach")) for t in TIERS),
    ("validity", lambda s: "valid" if (s.get("validity") or {"valid": True})["valid"] else "INVALID ENVIRONMENT"),
    ("reach (median of repeats)", ("headline", "reach")),
    ("reach over served attempts", ("headline", "reach_served")),
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
    ("ablation arm", ablation_arm),
    ("protocol · memory · feedback", ablation_settings),
    ("interop failures", ("interop", "attempts")),
    ("most common primary failure", top_primary_failure),
    ("shims that rewrote a request", shim_list),
)

def _provenance_row(label: str) -> Callable[[dict[str, Any]], Any]:
    def value(summary: dict[str, Any]) -> Any:
        return provenance_rows(summary.get("provenance"))[label] if summary.get("provenance") else None

    return value


#: Provenance rows of the comparison table (after :data:`COMPARE_ROWS`): where each run's numbers came from.
PROVENANCE_ROWS: tuple[tuple[str, RowSource], ...] = tuple(
    (f"provenance · {label}", _provenance_row(label)) for label in PROVENANCE_COMPARE)
PERCENT_ROWS = {"reach", "mean score", "path depth", "tool-call accuracy", "misuse rate", "pass^k", "reach spread"}


def _counted(summary: dict[str, Any], path: Sequence[str]) -> tuple[int, int] | None:
    group = lookup(summary, path)
    if not isinstance(group, dict) or not group.get("attempts"):
        return None
    return int(group.get("passed") or 0), int(group["attempts"])


def _tier_interval(tier: str) -> Callable[[dict[str, Any]], Any]:
    def interval(summary: dict[str, Any]) -> Any:
        found = _counted(summary, ("tiers", tier))
        return wilson(*found) if found else None

    return interval


def _dimension_interval(dim: str) -> Callable[[dict[str, Any]], Any]:
    def interval(summary: dict[str, Any]) -> Any:
        n = lookup(summary, ("overall", "dimension_attempts", dim))
        return rate_interval(lookup(summary, ("overall", "by_dimension", dim)), n)

    return interval


def _served_interval(summary: dict[str, Any]) -> Any:
    head = summary.get("headline") or {}
    n = head.get("served_attempts")
    return wilson(int(head.get("passed") or 0), int(n)) if n else None




#: 95 % intervals of the comparison rows that have one: Wilson for rates (pooled
#: passed / attempts for the headline reach), a bootstrap over tasks for the mean score.
INTERVALS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "reach (median of repeats)": lambda s: wilson(*c) if (c := _counted(s, ("overall",))) else None,
    **{f"reach {t}": _tier_interval(t) for t in TIERS},
    "reach over served attempts": _served_interval,
    HEADLINE_METRIC: score_interval,
    **{f"reach · {d}": _dimension_interval(d) for d in DIMENSIONS},
}


def run_headings(data: dict[str, Any]) -> list[str]:
    """What heads each run of a comparison (``data`` is :func:`compare_table`'s): its
    harness, or its id when two runs share a harness."""
    harnesses = [run["harness"] or run["id"] for run in data["runs"]]
    return harnesses if len(set(harnesses)) == len(harnesses) else [run["id"] for run in data["runs"]]


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


def with_validity(summary: dict[str, Any], max_interop: float = DEFAULT_MAX_INTEROP) -> dict[str, Any]:
    """``summary`` with its ``validity`` judged under ``max_interop`` (any summary version)."""
    return {**summary, "validity": summary_validity(summary, max_interop)}


def compare_table(summaries: Sequence[dict[str, Any]], max_interop: float = DEFAULT_MAX_INTEROP) -> dict[str, Any]:
    """The side-by-side comparison of several runs.

    Args:
        summaries: the runs' summaries.
        max_interop: the share of interop attempts above which a run is invalid.

    Returns:
        ``{"runs": [{"id", "model", "harness", "task_set", "settings", "validity", "headline"}], "rows":
        [{"metric", "percent", "values": [...], "intervals": [[low, high] | None, ...], "differs"}],
        "tasks": [{"task", "tier", "pass_rates": [...]}], "provenance_differs": [label, ...],
        "ablation": ABLATION | None}``; ``intervals`` are 95 % (Wilson for rates, a bootstrap
        over tasks for the mean score), ``None`` for rows without one; ``ablation`` is
        :func:`ablation_table`'s. The first rows are the headline: the mean score, then
        reach per tier. ``headline`` is :func:`~probegate.scorer.report.headline.headline_figures`
        (mean score and reach per tier with intervals: what the chart draws). The
        ``provenance · ...`` rows say where each run's numbers came from, ``differs`` (and
        ``provenance_differs``) which of them are not the same for every run that recorded
        provenance.
    """
    summaries = [with_validity(s, max_interop) for s in summaries]
    runs = [
        {**{k: s["run"].get(k) for k in ("id", "model", "harness", "task_set")}, "settings": s["run"].get("settings", {}),
         "validity": s["validity"], "headline": headline_figures(s)}
        for s in summaries
    ]
    differs = provenance_differs(summaries)
    rows = [
        {
            "metric": label,
            "percent": any(label.startswith(p) for p in PERCENT_ROWS),
            "values": [path(s) if callable(path) else lookup(s, path) for s in summaries],
            "intervals": [_interval(label, s) for s in summaries],
            "differs": label.removeprefix("provenance · ") in differs if label.startswith("provenance · ") else False,
        }
        for label, path in (*COMPARE_ROWS, *PROVENANCE_ROWS)
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
    return {"runs": runs, "rows": rows, "tasks": tasks, "provenance_differs": differs,
            "ablation": ablation_table(summaries)}


def ablation_table(summaries: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The seeds' ablation table, when the runs differ in protocol, memory or feedback.

    One row per run, in the order given: its arm (:func:`ablation_arm`), the mean score
    with partial credit (the seeds' headline figure) and reach, each with its 95 %
    interval, and the change of the mean score against the baseline arm of the same
    harness and model (``None`` without one).

    Returns:
        ``{"baseline": {"protocol", "memory", "feedback"}, "rows": [{"run", "harness",
        "model", "arm", "settings", "score", "score_ci", "reach", "reach_ci",
        "score_change"}]}``, or ``None`` when every run is in the same arm.
    """
    arms = [ablation_arm(s) for s in summaries]
    if len(set(arms)) < 2:
        return None
    baselines: dict[tuple[Any, Any], float] = {}
    for summary, arm in zip(summaries, arms, strict=True):
        score = score_value(summary)
        key = (lookup(summary, ("run", "harness")), lookup(summary, ("run", "model")))
        if arm == "baseline" and isinstance(score, (int, float)) and key not in baselines:
            baselines[key] = float(score)
    rows = []
    for summary, arm in zip(summaries, arms, strict=True):
        score = score_value(summary)
        base = baselines.get((lookup(summary, ("run", "harness")), lookup(summary, ("run", "model"))))
        score_ci, reach_ci = score_interval(summary), reach_interval(summary)
        rows.append({
            "run": lookup(summary, ("run", "id")),
            "harness": lookup(summary, ("run", "harness")),
            "model": lookup(summary, ("run", "model")),
            "arm": arm,
            "settings": {name: setting(summary, name) for name in ABLATION_BASELINE},
            "score": score,
            "score_ci": list(score_ci) if score_ci else None,
            "reach": lookup(summary, ("headline", "reach")),
            "reach_ci": list(reach_ci) if reach_ci else None,
            "score_change": None if base is None or not isinstance(score, (int, float)) else round(score - base, 6),
        })
    return {"baseline": dict(ABLATION_BASELINE), "rows": rows}


def _interval(label: str, summary: dict[str, Any]) -> list[float] | None:
    found = INTERVALS[label](summary) if label in INTERVALS else None
    return list(found) if found else None


@dataclass(frozen=True)
class TierChange:
    """Reach of one tier in the old and new run, with 95 % Wilson intervals and the
    exact McNemar test over the tier's tasks both runs have."""

    tier: str
    old: float | None
    new: float | None
    regressed: bool
    old_ci: tuple[float, float] | None = None
    new_ci: tuple[float, float] | None = None
    paired: PairedTest | None = None

    @property
    def within_noise(self) -> bool:
        """A drop (regressed or not) that the paired test cannot tell from chance
        (McNemar p >= 0.05); without a paired test, the 95 % intervals overlap."""
        if self.old is None or (self.new or 0.0) >= self.old:
            return False
        if self.paired is not None:
            return not self.paired.significant
        if self.old_ci is None or self.new_ci is None:
            return False
        return self.new_ci[1] >= self.old_ci[0]

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form."""
        return {"tier": self.tier, "old": self.old, "new": self.new, "regressed": self.regressed,
                "old_ci": list(self.old_ci) if self.old_ci else None, "new_ci": list(self.new_ci) if self.new_ci else None,
                "paired": self.paired.to_json() if self.paired else None, "within_noise": self.within_noise}


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
    """``probegate diff OLD NEW``: per tier and per task; ``regressed`` and ``invalid`` gate CI.

    Attributes:
        old, new: the run ids.
        tiers: per tier, reach old and new with intervals and the paired test.
        tasks: per task, pass rate and mean score old and new.
        paired: the exact McNemar test over every task both runs have.
        validity: ``{"old": VALIDITY, "new": VALIDITY}`` (see :func:`~probegate.scorer.report.validity.validity`).
    """

    old: str
    new: str
    tiers: tuple[TierChange, ...]
    tasks: tuple[TaskChange, ...]
    paired: PairedTest | None = None
    validity: dict[str, dict[str, Any]] | None = None

    @property
    def regressed(self) -> bool:
        """Some tier's new reach fell below 95 % of its old reach."""
        return any(t.regressed for t in self.tiers)

    @property
    def invalid(self) -> list[str]:
        """``old`` / ``new``: the runs marked invalid environment."""
        return [side for side, v in (self.validity or {}).items() if not v.get("valid", True)]

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form."""
        return {
            "old": self.old,
            "new": self.new,
            "regressed": self.regressed,
            "invalid": self.invalid,
            "validity": self.validity,
            "ratio": REGRESSION_RATIO,
            "paired": self.paired.to_json() if self.paired else None,
            "tiers": [t.to_json() for t in self.tiers],
            "tasks": [t.to_json() for t in self.tasks],
        }


def tier_regressed(old: float | None, new: float | None, ratio: float = REGRESSION_RATIO) -> bool:
    """Whether ``new`` is below ``ratio`` x ``old``; a tier absent from NEW counts as 0."""
    if old is None:
        return False
    return (new or 0.0) < ratio * old - 1e-12


def diff_runs(old: dict[str, Any], new: dict[str, Any], max_interop: float = DEFAULT_MAX_INTEROP) -> RunDiff:
    """Compare two summaries per tier and per task (docs/metrics.md §11).

    Args:
        old: the baseline's summary.
        new: the candidate's summary.
        max_interop: the share of interop attempts above which a run is invalid.
    """
    tiers = []
    for tier in TIERS:
        before, after = lookup(old, ("tiers", tier, "reach")), lookup(new, ("tiers", tier, "reach"))
        if before is None and after is None:
            continue
        old_ci, new_ci = (_tier_interval(tier)(s) for s in (old, new))
        paired = mcnemar_paired(pass_map(old, tier), pass_map(new, tier))
        tiers.append(TierChange(tier, before, after, tier_regressed(before, after), old_ci, new_ci, paired))
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
    verdicts = {"old": summary_validity(old, max_interop), "new": summary_validity(new, max_interop)}
    paired = mcnemar_paired(pass_map(old), pass_map(new))
    return RunDiff(old["run"]["id"], new["run"]["id"], tuple(tiers), tuple(tasks), paired, verdicts)
