"""report.html: self-contained, escaped, and rendered for real in headless Chromium."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from probegate.scorer.report.metrics import AttemptResult
from probegate.scorer.report.outputs import write_outputs
from probegate.scorer.report.html import render_report
from probegate.scorer.rebuild.rows import RunInfo
from probegate.scorer.judge.task_score import task_scorer
from probegate.scorer.report.summary import RunScore
from probegate.tasks.loader import Task
from tests.scorer.cdp_render import chromium_binary, render
from tests.scorer.rowkit import AttemptBuilder, play

XSS = "<script>window.__pwned = 1</script><img src=x onerror=alert(1)>"


def _run(task_by_id: dict[str, Task]) -> RunScore:
    score = task_scorer()
    plays = [
        ("weather-berlin", [("get_weather", {"city": "Berlin"})], "It is cloudy."),
        ("weather-berlin", [], XSS),
        ("email-jonas", [("find_contact", {"query": "Jonas Becker"})], "I have sent it."),
        ("orders-unordered", [("get_order", {"order_id": "ORD-5001"}), ("get_order", {"order_id": "ORD-5002"})], "delivered, shipped"),
    ]
    results = []
    for attempt, (task_id, calls, answer) in enumerate(plays):
        task = task_by_id[task_id]
        t = play(task, calls, answer, builder=AttemptBuilder(task=task_id, attempt=attempt))
        results.append(AttemptResult(task, t, score(t, task)))
    return RunScore(RunInfo("rep", "tasks", "fc", "m"), "tasks", tuple(sorted(results, key=lambda r: (r.task_id, r.attempt))))


def test_report_is_self_contained_and_escapes_model_output(task_by_id: dict[str, Task]) -> None:
    html = render_report(_run(task_by_id))
    assert "plotly.js" in html.lower() or "Plotly" in html
    external = [src for src in re.findall(r'<script[^>]+src="([^"]+)"', html)]
    assert external == []
    assert re.findall(r'<link[^>]+href="https?://', html) == []
    assert XSS not in html and "&lt;script&gt;window.__pwned" in html
    for anchor in ("trace-weather-berlin-0", "trace-weather-berlin-1", "trace-email-jonas-2"):
        assert f'id="{anchor}"' in html and f'href="#{anchor}"' in html
    for section in ("chart-score", "chart-radar", "chart-tiers", "chart-stages", 'id="attribution"', 'id="tasks"'):
        assert section in html
    assert html.count("<script") >= 4 and html.lower().count("plotly.js v") == 1  # plotly.js embedded once


def test_report_headline_leads_with_the_mean_score_and_reach_per_tier(task_by_id: dict[str, Task]) -> None:
    run = _run(task_by_id)
    summary = run.summary()
    html = render_report(run, summary)
    head = html[html.index('id="headline"'):html.index('id="charts"')]
    # the mean score comes first, then reach per tier, then the median reach
    assert head.index('id="headline-score"') < head.index('id="headline-reach-P0"') < head.index('id="headline-reach"')
    score = summary["overall"]["score_mean"]
    assert f">{score * 100:.1f} % <span" in head and 'id="headline-score-ci">[' in head
    p0 = summary["tiers"]["P0"]
    assert f"reach P0 ({p0['passed']} / {p0['attempts']}; Wilson 95 %)" in head
    invalid = render_report(run, {**summary, "validity": {**summary["validity"], "valid": False, "reason": "3 of 4 attempts failed"}})
    head = invalid[invalid.index('id="headline"'):invalid.index('id="charts"')]
    assert '<div class="big invalid" id="headline-score">invalid environment</div>' in head and "3 of 4 attempts failed" in head
    assert 'id="headline-score-ci"' not in head and "headline-reach-P0" not in head


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


SETTLE = """(() => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  if (plots.length !== 4 || !plots.every(p => p._fullLayout)) return null;
  const radar = document.getElementById('chart-radar').getBoundingClientRect();
  const polar = document.querySelector('#chart-radar .polarlayer').getBoundingClientRect();
  return JSON.stringify({
    plots: plots.length,
    polarInside: polar.left >= radar.left - 1 && polar.right <= radar.right + 1 && polar.width > 50,
    bars: document.querySelectorAll('#chart-tiers .point').length,
    pwned: window.__pwned === 1,
    headline: document.getElementById('headline-score').textContent,
    scoreBars: document.querySelectorAll('#chart-score .point').length,
    errorBars: document.querySelectorAll('#chart-score .errorbar').length,
    tierReach: [...document.querySelectorAll('.tier-reach')].map(e => e.id),
  });
})()"""


@pytest.mark.skipif(chromium_binary() is None, reason="Debian's chromium is not installed (apt-get install -y chromium)")
def test_report_renders_in_headless_chromium_without_console_errors(task_by_id: dict[str, Task], tmp_path: Path) -> None:
    import json

    paths = write_outputs(_run(task_by_id), tmp_path / "run")
    page = render(paths["report"], tmp_path / "profile", SETTLE)
    assert page.errors == []
    state = json.loads(page.evaluated)
    assert state == {"plots": 4, "polarInside": True, "bars": state["bars"], "pwned": False, "headline": state["headline"],
                     "scoreBars": state["scoreBars"], "errorBars": state["errorBars"], "tierReach": ["headline-reach-P0", "headline-reach-P1"]}
    assert state["bars"] >= 3
    # the headline is the mean score with its 95 % interval, the chart its bars (all, P0, P1; score and reach) with error bars
    assert re.fullmatch(r"\d+\.\d % \[\d+\.\d–\d+\.\d\]", state["headline"]), state["headline"]
    assert state["scoreBars"] == 6 and state["errorBars"] == 6
    width, height = _png_size(page.screenshot)
    assert width == 1280 and height > 600
    assert len(set(page.screenshot[100:5000])) > 20  # not a blank image
