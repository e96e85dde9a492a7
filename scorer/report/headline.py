"""The headline of a run: the figure that separates harnesses, then reach per tier (docs/metrics.md §7). Pure.

A small model rarely passes a task, so reach is 0 for every harness and tells them
apart by nothing. The **mean score** (partial credit, §5, after the precision rules)
does: it leads every table and report, with its 95 % interval (a percentile
bootstrap over tasks), followed by **reach per tier** with 95 % Wilson intervals.
Both are read from a summary (``summary.json``, any version) and computed with
:mod:`probegate.scorer.report.stats`; nothing here is stored in the summary, so old
summaries get intervals too.

An invalid run (:mod:`probegate.scorer.report.validity`) has no headline number: its
headline says why instead.
"""

from __future__ import annotations

from typing import Any

from probegate.scorer.report.stats import Interval, bootstrap_mean, wilson
from probegate.scorer.report.summary import TIERS

#: What the headline's first figure is called everywhere (tables, report, chart).
HEADLINE_METRIC = "mean score (partial credit)"
#: The group of every task, beside the tiers.
ALL = "all"


def task_scores(summary: dict[str, Any], tier: str | None = None) -> list[float]:
    """The mean score of each task of a summary (of one tier, when given), in task order."""
    return [
        float(entry["score_mean"])
        for _, entry in sorted((summary.get("tasks") or {}).items())
        if entry.get("score_mean") is not None and (tier is None or entry.get("tier") == tier)
    ]


def score_interval(summary: dict[str, Any], tier: str | None = None) -> Interval | None:
    """95 % percentile bootstrap interval (over tasks, seeded) of the mean score, 0-1;
    ``None`` when the summary has no scored task (of that tier)."""
    return bootstrap_mean(task_scores(summary, tier))


def reach_interval(summary: dict[str, Any], tier: str | None = None) -> Interval | None:
    """95 % Wilson interval of the pass rate (passed / attempts, every attempt counted)
    of a tier, or of the whole run; ``None`` without attempts."""
    group = (summary.get("tiers") or {}).get(tier) if tier else summary.get("overall")
    if not isinstance(group, dict) or not group.get("attempts"):
        return None
    return wilson(int(group.get("passed") or 0), int(group["attempts"]))


def score_value(summary: dict[str, Any], tier: str | None = None) -> float | None:
    """The mean score (0-1) over every attempt of a tier, or of the run."""
    group = (summary.get("tiers") or {}).get(tier) if tier else summary.get("overall")
    value = group.get("score_mean") if isinstance(group, dict) else None
    return None if value is None else float(value)


def headline_figures(summary: dict[str, Any]) -> dict[str, Any]:
    """The headline of one run.

    Returns:
        ``{"valid", "reason", "score": {"value", "interval"},
        "tiers": {"all"|"P0"|"P1"|"P2": {"score", "score_interval", "reach", "reach_interval",
        "passed", "attempts"}}}``: rates 0-1, intervals ``[low, high]`` (95 %) or ``None``;
        only the tiers the run has. ``reason`` says why an invalid run has no headline
        (``None`` for a valid one).
    """
    verdict = summary.get("validity") or {"valid": True}
    groups: dict[str, Any] = {}
    for name in (ALL, *TIERS):
        tier = None if name == ALL else name
        group = summary.get("overall") if tier is None else (summary.get("tiers") or {}).get(tier)
        if not isinstance(group, dict):
            continue
        score_ci, reach_ci = score_interval(summary, tier), reach_interval(summary, tier)
        groups[name] = {
            "score": score_value(summary, tier),
            "score_interval": list(score_ci) if score_ci else None,
            "reach": group.get("reach"),
            "reach_interval": list(reach_ci) if reach_ci else None,
            "passed": group.get("passed"),
            "attempts": group.get("attempts"),
        }
    overall = groups.get(ALL) or {}
    return {
        "valid": bool(verdict.get("valid", True)),
        "reason": verdict.get("reason"),
        "score": {"value": overall.get("score"), "interval": overall.get("score_interval")},
        "tiers": groups,
    }


def percent_interval(value: float | None, interval: Any = None) -> str:
    """A rate with its 95 % interval, compactly: ``0.166, (0.112, 0.224)`` ->
    ``16.6 % [11.2–22.4]``; ``–`` for no value; the bare rate without an interval."""
    if value is None:
        return "–"
    shown = f"{value * 100:.1f} %"
    if not interval:
        return shown
    low, high = interval
    return f"{shown} [{low * 100:.1f}–{high * 100:.1f}]"


def headline_text(summary: dict[str, Any]) -> str:
    """The headline as one plain line: ``mean score 16.6 % [11.2–22.4] · reach P0 0.0 %
    [0.0–27.8] · P1 ...``; an invalid run's says why instead of a number."""
    figures = headline_figures(summary)
    if not figures["valid"]:
        return f"mean score: not a measure of the model (invalid environment: {figures['reason']})"
    text = f"mean score {percent_interval(figures['score']['value'], figures['score']['interval'])}"
    tiers = [f"{t} {percent_interval(g['reach'], g['reach_interval'])}" for t, g in figures["tiers"].items() if t != ALL]
    return text + (" · reach " + " · ".join(tiers) if tiers else "")
