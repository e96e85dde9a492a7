"""The scoring commands as users run them (score, report, trace, debug-parse, compare, diff, selftest)."""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from probegate.cli import app
from probegate.scorer.report.snapshot import browser_binary
from probegate.store import open_store
from probegate.store.models import Run
from tests.scorer.rowkit import TASKS_DIR, AttemptBuilder, write

runner = CliRunner()


@pytest.fixture
def store(tmp_path: Path) -> str:
    """A store with run 'good' (weather-berlin passes) and run 'bad' (it fails)."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    engine = open_store(url)
    for run, calls in (("good", [("get_weather", {"city": "Berlin"}, {"condition": "cloudy"})]), ("bad", [])):
        b = AttemptBuilder(run=run, task="weather-berlin")
        b.fc_chain("Weather in Berlin?", calls, "It is cloudy.")
        params = {"feedback": "actionable" if run == "good" else "plain", "outcomes": {}}
        times = {"created_at": datetime(2026, 11, 29, 10, 0, tzinfo=UTC),
                 "finished_at": datetime(2026, 11, 29, 10, 12, 54, tzinfo=UTC)} if run == "good" else {}
        write(engine, *b.rows, run=Run(id=run, task_set=str(TASKS_DIR), harness="fc", model="m", params=params, **times))
    engine.dispose()
    return url


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def test_score_writes_the_run_folder(store: str, tmp_path: Path) -> None:
    code, out = invoke("score", "good", "--store", store, "--out", str(tmp_path / "runs"))
    assert code == 0, out
    assert "reach 100.0 %" in out
    # the headline leads: the mean score, then reach per tier, each with its 95 % interval
    assert out.splitlines()[0] == "mean score 100.0 % [100.0–100.0] · reach P0 100.0 % [20.7–100.0]"
    folder = tmp_path / "runs" / "good"
    assert {p.name for p in folder.iterdir()} == {"summary.json", "timing.json", "scores.csv", "traces", "report.html"}
    code, out = invoke("score", "good", "--store", store, "--out", str(tmp_path / "runs"), "--json")
    assert code == 0 and json.loads(out)["headline"]["reach"] == 1.0


def test_report_prints_the_path(store: str, tmp_path: Path) -> None:
    code, out = invoke("report", "bad", "--store", store, "--out", str(tmp_path / "runs"))
    assert code == 0 and out.strip() == str(tmp_path / "runs" / "bad" / "report.html")


def test_trace_table_and_json(store: str) -> None:
    code, out = invoke("trace", "good", "weather-berlin", "--store", store)
    assert code == 0 and "get_weather" in out and "final answer: 'It is cloudy.'" in out
    code, out = invoke("trace", "good", "weather-berlin", "--attempt", "0", "--store", store, "--json")
    assert code == 0 and json.loads(out)["steps"][0]["tool_name"] == "get_weather"


def test_debug_parse_text_and_stdin() -> None:
    code, out = invoke("debug-parse", 'Action: get_weather\nAction Input: {"city": "Oslo"}', "--json")
    assert code == 0 and json.loads(out)["chosen"]["calls"][0]["arguments"] == {"city": "Oslo"}
    result = runner.invoke(app, ["debug-parse", "-", "--tools", "get_weather"], input='get_weather(city="Rome")')
    assert result.exit_code == 0 and "python" in result.output and "Rome" in result.output


def test_compare_runs_and_summary_files(store: str, tmp_path: Path) -> None:
    invoke("score", "good", "--store", store, "--out", str(tmp_path / "runs"))
    code, out = invoke("compare", str(tmp_path / "runs" / "good"), "bad", "--store", store, "--json")
    assert code == 0, out
    data = json.loads(out)
    assert [(r["id"], r["settings"]) for r in data["runs"]] == [("good", {"feedback": "actionable"}), ("bad", {"feedback": "plain"})]
    assert next(r for r in data["rows"] if r["metric"] == "reach P0")["values"] == [1.0, 0.0]
    code, out = invoke("compare", "good", "bad", "--store", store)
    assert code == 0 and "reach P0" in out and "weather-berlin" in out and "plain" in out
    code, out = invoke("compare", "good", "bad", "--store", store, "--markdown")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == "| metric | `good` | `bad` |"  # both are fc: headed by run id
    assert "| reach P0 | 100.0 % [20.7–100.0] | 0.0 % [0.0–79.3] |" in lines  # Wilson 95 % of 1/1 and 0/1
    assert "| wall time min | 12.9 | – |" in lines  # 'bad' never finished


def test_compare_leads_with_the_mean_score(store: str) -> None:
    code, out = invoke("compare", "good", "bad", "--store", store, "--markdown")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[2] == "| mean score (partial credit) | 100.0 % [100.0–100.0] | 0.0 % [0.0–0.0] |"  # one task: no spread
    assert lines[3] == "| reach P0 | 100.0 % [20.7–100.0] | 0.0 % [0.0–79.3] |"


@pytest.mark.skipif(browser_binary() is None, reason="Debian's chromium is not installed (apt-get install -y chromium)")
def test_compare_writes_the_chart_as_html_and_png(store: str, tmp_path: Path) -> None:
    page, image = tmp_path / "out" / "compare.html", tmp_path / "out" / "compare.png"
    code, out = invoke("compare", "good", "bad", "--store", store, "--html", str(page), "--png", str(image))
    assert code == 0, out
    assert f"chart and table: {page}" in out and f"chart: {image}" in out and "mean score" in out
    data = image.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1000, 540)
    html = page.read_text(encoding="utf-8")
    assert re.findall(r'<script[^>]+src="', html) == []  # self-contained: plotly.js inline
    plot = json.loads(re.search(r'Plotly\.newPlot\(\s*"chart-compare",\s*(\[.*?\]),\s*\{', html, re.S).group(1))
    assert [t["name"] for t in plot] == ["all tasks", "P0"]
    assert all(t["x"] == ["good", "bad"] for t in plot) and plot[0]["y"] == [1.0, 0.0]  # every run, its mean score
    assert "<td>mean score (partial credit)</td>" in html
    result = runner.invoke(app, ["compare", "good", "bad", "--store", store, "--json", "--html", str(page)])
    assert result.exit_code == 0 and f"chart and table: {page}" in result.stderr  # stdout carries the JSON alone
    assert json.loads(result.stdout)["rows"][0]["metric"] == "mean score (partial credit)"


def test_diff_gates_on_a_tier_regression(store: str) -> None:
    code, out = invoke("diff", "good", "bad", "--store", store)
    assert code == 1 and "REGRESSED" in out
    assert "within noise" in out  # one task: 1/1 -> 0/1 cannot be told from chance (McNemar p = 1)
    code, out = invoke("diff", "bad", "good", "--store", store, "--json")
    assert code == 0 and json.loads(out)["tasks"][0]["status"] == "fixed"


def test_selftest_command(tmp_path: Path) -> None:
    code, out = invoke("selftest", "--task-set", str(TASKS_DIR))
    assert code == 0 and "0 failing" in out
    code, out = invoke("selftest", "--task-set", str(TASKS_DIR), "--json")
    assert code == 0 and json.loads(out)["ok"] is True


def test_user_mistakes_are_one_line_and_exit_2(store: str, tmp_path: Path) -> None:
    cases = [
        ["score", "nope", "--store", store],
        ["trace", "good", "zz", "--store", store],
        ["score", "good", "--store", str(tmp_path / "missing.db")],
        ["compare", "good", "--store", store],
        ["compare", "good", "bad", "--store", store, "--json", "--markdown"],
        ["compare", "good", "bad", "--store", store, "--html", str(tmp_path)],
        ["diff", str(tmp_path / "store.db"), "good", "--store", store],
    ]
    for args in cases:
        proc = subprocess.run([sys.executable, "-m", "probegate", *args], check=False, capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert proc.returncode == 2, (args, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, proc.stderr)


REJECTED = {"error": {"message": "[{'type': 'string_type', 'loc': ('body', 'messages', 1, 'content'), 'msg': 'Input should be a valid string'}]"}}


@pytest.fixture
def poisoned(store: str) -> str:
    """Run 'poisoned' next to 'good': its attempt ends on a request the server rejected."""
    engine = open_store(store)
    b = AttemptBuilder(run="poisoned", task="weather-berlin")
    b.exchange([{"role": "user", "content": "Weather in Berlin?"}], None, status=500, response_body=REJECTED)
    write(engine, *b.rows, run=Run(id="poisoned", task_set=str(TASKS_DIR), harness="fc", model="m", params={"outcomes": {}}))
    engine.dispose()
    return store


def test_an_interop_dominated_run_is_an_invalid_environment_in_every_first_line(poisoned: str, tmp_path: Path) -> None:
    code, out = invoke("score", "poisoned", "--store", poisoned, "--out", str(tmp_path / "runs"))
    assert code == 0
    assert out.splitlines()[0].startswith("INVALID ENVIRONMENT: run poisoned: 1 of 1 attempts (100.0 %) failed on interop faults")
    assert "\nmean score: not a measure of the model (invalid environment)\n" in out
    assert "reach: not a measure of the model" in out and "reach over served attempts" in out
    html = (tmp_path / "runs" / "poisoned" / "report.html").read_text()
    assert 'id="headline-invalid"' in html and ">invalid environment<" in html
    code, out = invoke("compare", "good", "poisoned", "--store", poisoned)
    assert code == 0 and out.splitlines()[0].startswith("INVALID ENVIRONMENT: run poisoned:")
    code, out = invoke("diff", "good", "poisoned", "--store", poisoned)
    assert code == 3 and out.splitlines()[0].startswith("INVALID ENVIRONMENT: run poisoned:")
    code, out = invoke("diff", "good", "poisoned", "--store", poisoned, "--max-interop", "1")
    assert code == 1 and "INVALID" not in out  # the threshold is an option: at 100 % only the regression gates
