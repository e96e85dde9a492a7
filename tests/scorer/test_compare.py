"""compare and diff over summaries (docs/metrics.md §11)."""

from __future__ import annotations

import pytest

from probegate.scorer.report.compare import compare_table, diff_runs, lookup, tier_regressed
from probegate.scorer.report.console import compare_markdown, compare_tables
from probegate.scorer.report.headline import HEADLINE_METRIC


def summary(run: str, tiers: dict[str, float], tasks: dict[str, tuple[str, float]], k: int = 1) -> dict:
    return {
        "version": 1,
        "run": {"id": run, "model": "m", "harness": "fc", "task_set": "default"},
        "headline": {"reach": 0.5},
        "overall": {"accuracy": 0.7, "misuse": {"extra": 2}, "by_dimension": {"tool": 1.0}},
        "tiers": {t: {"reach": r} for t, r in tiers.items()},
        "repeats": {"k": k, "pass_hat_k": {"1": 0.5, "2": 0.25}},
        "tasks": {t: {"tier": tier, "pass_rate": p, "score_mean": p} for t, (tier, p) in tasks.items()},
    }


REGRESSION = [
    ("equal", 0.8, 0.8, False),
    ("within 5 %", 0.8, 0.761, False),
    ("exactly 95 %", 0.8, 0.76, False),
    ("below 95 %", 0.8, 0.759, True),
    ("tier gone counts as 0", 0.8, None, True),
    ("new tier", None, 0.5, False),
    ("old zero", 0.0, 0.0, False),
]


@pytest.mark.parametrize(("rule", "old", "new", "regressed"), REGRESSION, ids=[c[0] for c in REGRESSION])
def test_tier_regression_threshold(rule: str, old: float | None, new: float | None, regressed: bool) -> None:
    assert tier_regressed(old, new) is regressed, rule


def test_diff_per_tier_and_task() -> None:
    old = summary("a", {"P0": 1.0, "P1": 0.5}, {"t0": ("P0", 1.0), "t1": ("P1", 0.5), "t2": ("P1", 0.0), "gone": ("P1", 1.0)})
    new = summary("b", {"P0": 0.9, "P1": 0.6}, {"t0": ("P0", 0.5), "t1": ("P1", 1.0), "t2": ("P1", 0.0), "fresh": ("P2", 1.0)})
    d = diff_runs(old, new)
    assert [(t.tier, t.regressed) for t in d.tiers] == [("P0", True), ("P1", False)]
    assert d.regressed
    assert {t.task: t.status for t in d.tasks} == {"t0": "broken", "t1": "fixed", "t2": "same", "gone": "gone", "fresh": "new"}
    assert d.to_json()["regressed"] is True
    assert not diff_runs(old, old).regressed


def test_compare_table_rows_and_tasks() -> None:
    table = compare_table([summary("a", {"P0": 1.0}, {"t0": ("P0", 1.0)}, k=2), summary("b", {"P1": 0.5}, {"t1": ("P1", 0.0)})])
    assert [r["id"] for r in table["runs"]] == ["a", "b"]
    rows = {r["metric"]: r["values"] for r in table["rows"]}
    assert rows["reach P0"] == [1.0, None] and rows["reach P1"] == [None, 0.5]
    assert rows["pass^k"] == [0.25, 0.5]
    assert rows["extra calls"] == [2, 2]
    assert [(t["task"], t["pass_rates"]) for t in table["tasks"]] == [("t0", [1.0, None]), ("t1", [None, 0.0])]
    assert lookup({"a": {"b": 1}}, ("a", "c")) is None


def test_compare_rows_for_failures_shims_and_wall_time() -> None:
    a = {**summary("a", {}, {}), "failures": {"primary": {"retry_loop": 3, "loop": 3, "premature_finish": 5}},
         "timing": {"wall_min": 12.9}}
    a["run"] = {**a["run"], "shims": ["cap-max-length", "null-content"], "settings": {"chat_handler": "x"}}
    b = {**summary("b", {}, {}), "failures": {"primary": {}}}
    b["run"] = {**b["run"], "harness": "react", "shims": []}
    rows = {r["metric"]: r["values"] for r in compare_table([a, b])["rows"]}
    assert rows["most common primary failure"] == ["premature_finish (5)", None]
    assert rows["shims that rewrote a request"] == ["cap-max-length, null-content", "none"]
    assert rows["wall time min"] == [12.9, None]
    assert rows["chat handler (embedded server)"] == ["x", None]
    a["failures"]["primary"]["premature_finish"] = 3  # a tie: the first label by name
    tie = {r["metric"]: r["values"] for r in compare_table([a])["rows"]}
    assert tie["most common primary failure"] == ["loop (3)"]


def test_compare_markdown_one_column_per_run() -> None:
    a, b = summary("a", {"P0": 1.0}, {}), summary("b", {"P0": 0.25}, {})
    b["run"] = {**b["run"], "harness": "crewai", "shims": ["x|y"]}
    text = compare_markdown(compare_table([a, b]))
    lines = text.splitlines()
    assert lines[0] == "| metric | `fc` | `crewai` |" and lines[1] == "|---|---|---|"
    assert "| reach P0 | 100.0 % | 25.0 % |" in lines
    assert "| shims that rewrote a request | – | x\\|y |" in lines
    assert not any(line.startswith("| reach P2 ") for line in lines)  # no run has a value
    same = compare_markdown(compare_table([a, a | {"run": {**a["run"], "id": "a2"}}]))
    assert same.splitlines()[0] == "| metric | `a` | `a2` |"


def scored(run: str, harness: str, scores: dict[str, tuple[str, float]], interop: int = 0) -> dict:
    """A summary whose tasks have the given tier and mean score (one attempt each, none passed)."""
    tiers = {}
    for tier in sorted({t for t, _ in scores.values()}):
        values = [v for t, v in scores.values() if t == tier]
        tiers[tier] = {"reach": 0.0, "attempts": len(values), "passed": 0, "score_mean": sum(values) / len(values)}
    n = len(scores)
    return {
        "version": 2,
        "run": {"id": run, "model": "m", "harness": harness, "task_set": "default"},
        "headline": {"reach": 0.0, "attempts": n, "passed": 0, "tasks": n, "repeats": 1},
        "interop": {"attempts": interop},
        "overall": {"reach": 0.0, "attempts": n, "passed": 0, "score_mean": sum(v for _, v in scores.values()) / n},
        "tiers": tiers,
        "tasks": {t: {"tier": tier, "pass_rate": 0.0, "score_mean": v} for t, (tier, v) in scores.items()},
    }


FC = {"a": ("P0", 0.4), "b": ("P0", 0.2), "c": ("P1", 0.1), "d": ("P2", 0.0)}
REACT = {"a": ("P0", 0.0), "b": ("P0", 0.05), "c": ("P1", 0.0), "d": ("P2", 0.0)}


def test_the_table_leads_with_the_mean_score_then_reach_per_tier() -> None:
    table = compare_table([scored("r1", "fc", FC), scored("r2", "react", REACT)])
    assert [r["metric"] for r in table["rows"][:5]] == [HEADLINE_METRIC, "reach P0", "reach P1", "reach P2", "validity"]
    head = table["rows"][0]
    assert head["values"] == pytest.approx([0.175, 0.0125]) and head["percent"]
    low, high = head["intervals"][0]
    assert 0.0 <= low < 0.175 < high <= 0.4  # a bootstrap over the four task scores
    assert table["rows"][1]["intervals"][0] == pytest.approx([0.0, 0.6576], abs=1e-4)  # Wilson 0 of 2
    # each run carries its headline figures for the chart: every tier's mean score with its interval
    fc = table["runs"][0]["headline"]
    assert fc["valid"] and fc["score"]["value"] == pytest.approx(0.175) and list(fc["tiers"]) == ["all", "P0", "P1", "P2"]
    assert fc["tiers"]["P0"]["score"] == pytest.approx(0.3) and fc["tiers"]["P1"]["score_interval"] == [0.1, 0.1]


def test_an_invalid_runs_headline_cell_says_why_not_a_number() -> None:
    data = compare_table([scored("r1", "fc", FC), scored("r2", "react", REACT, interop=3)])
    lines = compare_markdown(data).splitlines()
    assert lines[2].startswith("| mean score (partial credit) | 17.5 % [") and lines[2].endswith(" | invalid environment |")
    assert lines[3] == "| reach P0 | 0.0 % [0.0–65.8] | 0.0 % [0.0–65.8] |"
    assert data["rows"][0]["values"][1] == pytest.approx(0.0125)  # the JSON keeps the number
    from rich.console import Console

    console = Console(record=True, width=200)
    for t in compare_tables(data):
        console.print(t)
    text = console.export_text()
    first = next(line for line in text.splitlines() if "mean score" in line)
    assert "17.5 % [" in first and "invalid environment" in first


def test_the_ablation_table_of_four_runs() -> None:
    def arm(run: str, score: float, **settings: str) -> dict:
        s = summary(run, {"P0": score}, {"t0": ("P0", score), "t1": ("P0", score / 2)})
        s["run"] = {**s["run"], "settings": {"feedback": "plain", **settings}}
        s["overall"] = {**s["overall"], "score_mean": score, "passed": 1, "attempts": 2}
        return s

    runs = [arm("base", 0.2), arm("protocol", 0.5, protocol="steps"), arm("memory", 0.3, memory="digest"),
            arm("feedback", 0.25, feedback="actionable")]
    table = compare_table(runs)
    rows = table["ablation"]["rows"]
    assert [(r["arm"], r["score_change"]) for r in rows] == [
        ("baseline", 0.0), ("+ protocol", 0.3), ("+ memory", 0.1), ("+ feedback", 0.05)]
    assert rows[1]["settings"] == {"protocol": "steps", "memory": "off", "feedback": "plain"}
    assert rows[0]["reach_ci"] is not None and rows[0]["score_ci"] is not None
    metrics = {r["metric"]: r["values"] for r in table["rows"]}
    assert metrics["ablation arm"] == ["baseline", "+ protocol", "+ memory", "+ feedback"]
    assert metrics["protocol · memory · feedback"][1] == "steps · off · plain"
    assert compare_table(runs[:1] * 2)["ablation"] is None  # one arm: no ablation table
    both = arm("both", 0.6, protocol="steps", memory="digest")
    assert compare_table([runs[1], both])["ablation"]["rows"][1] == {**compare_table([runs[1], both])["ablation"]["rows"][1],
                                                                      "arm": "+ protocol + memory", "score_change": None}
