"""The headline: mean score and reach per tier with 95 % intervals, their formatting and charts (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from probegate.errors import UsageError
from probegate.scorer.report.compare import compare_table
from probegate.scorer.report.headline import (
    headline_figures,
    headline_text,
    percent_interval,
    reach_interval,
    score_interval,
    task_scores,
)
from probegate.scorer.report.html import compare_chart_page, compare_figure, score_figure
from probegate.scorer.report.snapshot import html_to_png
from probegate.scorer.report.stats import bootstrap_mean, wilson
from probegate.scorer.report.validity import summary_validity
from tests.scorer.test_compare import FC, REACT, scored


@pytest.mark.parametrize(
    ("value", "interval", "text"),
    [
        (0.166, (0.112, 0.224), "16.6 % [11.2–22.4]"),
        (0.0, [0.0, 0.0957], "0.0 % [0.0–9.6]"),
        (1.0, None, "100.0 %"),
        (None, (0.1, 0.2), "–"),
    ],
)
def test_percent_interval_is_compact(value: float | None, interval: object, text: str) -> None:
    assert percent_interval(value, interval) == text


def test_intervals_are_the_stats_modules() -> None:
    s = scored("r1", "fc", FC)
    assert task_scores(s) == [0.4, 0.2, 0.1, 0.0] and task_scores(s, "P0") == [0.4, 0.2]
    assert score_interval(s) == bootstrap_mean([0.4, 0.2, 0.1, 0.0])  # scipy's bootstrap over tasks, seeded
    assert score_interval(s, "P2") == (0.0, 0.0) and score_interval(s, "P9") is None
    assert reach_interval(s, "P0") == wilson(0, 2) and reach_interval(s) == wilson(0, 4)
    assert reach_interval({"tiers": {}}, "P0") is None


def test_headline_text_leads_with_the_mean_score_and_an_invalid_run_says_why() -> None:
    s = scored("r1", "fc", FC)
    low, high = score_interval(s) or (0, 0)
    assert headline_text(s) == (f"mean score 17.5 % [{low * 100:.1f}–{high * 100:.1f}] · reach P0 0.0 % [0.0–65.8]"
                                " · P1 0.0 % [0.0–79.3] · P2 0.0 % [0.0–79.3]")
    bad = scored("r2", "react", REACT, interop=3)
    bad["validity"] = summary_validity(bad)
    text = headline_text(bad)
    assert text.startswith("mean score: not a measure of the model (invalid environment: 3 of 4 attempts (75.0 %)")
    assert "%" not in text.split("(invalid")[0]
    assert headline_figures(bad)["valid"] is False


def test_score_figure_has_score_and_reach_per_tier_with_error_bars() -> None:
    fig = score_figure(scored("r1", "fc", FC))
    assert [t.name for t in fig.data] == ["mean score (partial credit)", "reach"]
    score = fig.data[0]
    assert list(score.x) == ["all", "P0", "P1", "P2"] and score.y[1] == pytest.approx(0.3)
    assert score.error_y.array[3] == 0.0 and score.error_y.arrayminus[0] > 0  # asymmetric, from the intervals


def test_compare_figure_groups_tiers_per_harness_and_leaves_out_invalid_runs() -> None:
    fig = compare_figure(compare_table([scored("r1", "fc", FC), scored("r2", "react", REACT, interop=3)]))
    assert [t.name for t in fig.data] == ["all tasks", "P0", "P1", "P2"]
    assert list(fig.data[0].x) == ["fc", "react<br>(invalid environment)"]
    assert fig.data[0].y[0] == pytest.approx(0.175) and fig.data[0].y[1] is None  # no number for the invalid run
    assert fig.layout.barmode == "group" and "95 % intervals" in fig.layout.title.text


def test_the_png_page_is_self_contained() -> None:
    page = compare_chart_page(compare_table([scored("r1", "fc", FC), scored("r2", "react", REACT)]), 640, 360)
    assert "<script src=" not in page and '"staticPlot": true' in page and '"width":640' in page.replace(" ", "")


def test_png_export_failures_are_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"wrote no PNG \(exit 1\)"):
        html_to_png("<html></html>", tmp_path / "x.png", 100, 100, binary="/bin/false")
    assert not (tmp_path / "x.png").exists()
