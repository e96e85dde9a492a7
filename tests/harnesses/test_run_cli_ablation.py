"""``probegate run`` as a user runs it, for the progress lines of a two-harness run (not a
terminal: plain lines) and the ablation options (--protocol, --memory) recorded on the run
and compared."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sqlmodel import Session

from probegate.store import Run, open_store
from probegate.testing import ReceivedRequest, RunningServer, ScriptedUpstream, Turn, serve_in_thread
from tests.harnesses.test_run_cli import TASKS, run_cli

COMPLETION_CHECK = "Before answering: have you done every action the task asks?"


def two_styles(request: ReceivedRequest) -> Turn:
    """fc (tools offered) and react (text): search, check the stock, answer; the notes the
    ablation options add (step markers, digest, completion check) change nothing."""
    body = request.json()
    messages = body["messages"]
    if body.get("tools"):
        results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
        if not results:
            return Turn(tool_calls=[{"name": "search_products", "arguments": {"query": "office chair"}}])
        if "products" in results[-1]:
            return Turn(tool_calls=[{"name": "check_stock", "arguments": {"sku": results[-1]["products"][0]["sku"]}}])
        return Turn(f"We have {results[-1]['in_stock']} chairs in stock.")
    observed = [json.loads(m["content"][len("Observation: "):].split("\n\n")[0]) for m in messages
                if m["role"] == "user" and m["content"].startswith("Observation: ")]
    if not observed:
        return Turn('Thought: find it\nAction: search_products\nAction Input: {"query": "office chair"}')
    if "products" in observed[-1]:
        sku = observed[-1]["products"][0]["sku"]
        return Turn(f'Thought: stock\nAction: check_stock\nAction Input: {{"sku": "{sku}"}}')
    return Turn(f"Thought: done\nFinal Answer: We have {observed[-1]['in_stock']} chairs in stock.")


@pytest.fixture
def model() -> tuple[ScriptedUpstream, RunningServer]:
    script = ScriptedUpstream(handler=two_styles)
    server = serve_in_thread(script)
    yield script, server
    server.stop()


def test_a_two_harness_run_prints_a_progress_line_per_attempt(model, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    done = run_cli("--task-set", TASKS, "--tasks", "stock-total", "--harness", "fc,react", "--repeats", "2",
                   "--model", "test-model", "--model-endpoint", model[1].url, "--store", store, "--run-id", "p",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[0] == "fc: run p-fc, 2 attempts"
    step = r"in \d+\.\d s · "
    eta = r" · ETA (\d+ s|\d+ min \d\d s) \((fc|react) \d+ s/attempt\)$"
    expected = [
        rf"^fc 1/2 · harness 1/2 · overall 1/4 · stock-total/0 passed {step}1 passed 0 failed [01] running{eta}",
        rf"^fc 2/2 · harness 1/2 · overall 2/4 · stock-total/1 passed {step}2 passed 0 failed [01] running{eta}",
        r"^react: run p-react, 2 attempts$",
        rf"^react 1/2 · harness 2/2 · overall 3/4 · stock-total/0 passed {step}1 passed 0 failed [01] running{eta}",
        rf"^react 2/2 · harness 2/2 · overall 4/4 · stock-total/1 passed {step}2 passed 0 failed 0 running"
        r" · ETA 0 s \(react \d+ s/attempt\)$",
    ]
    assert len(lines) == 1 + len(expected), done.stderr
    for line, pattern in zip(lines[1:], expected, strict=True):
        assert re.match(pattern, line), (line, pattern)
    assert "\x1b[" not in done.stderr  # no terminal codes in a log


def test_framework_harnesses_refuse_the_ablation_options(tmp_path: Path) -> None:
    for option, value in (("--protocol", "steps"), ("--memory", "digest")):
        result = run_cli("--task-set", TASKS, "--harness", "crewai", option, value, "--model", "m",
                         "--model-endpoint", "http://127.0.0.1:9", "--store", f"sqlite:///{tmp_path / 's.db'}",
                         cwd=tmp_path)
        assert result.returncode == 2
        assert result.stderr.splitlines() == [
            f"error: {option} {value}: the crewai harness does not implement it; these options are for the "
            "reference harnesses (fc, react, plan, code)"]
    bad = run_cli("--task-set", TASKS, "--harness", "fc", "--protocol", "yes", "--model", "m",
                  "--model-endpoint", "http://127.0.0.1:9", cwd=tmp_path)
    assert bad.returncode == 2 and "Invalid value for '--protocol'" in bad.stderr


def test_the_ablation_runs_are_recorded_and_compared(model, tmp_path: Path) -> None:
    script, server = model
    store = f"sqlite:///{tmp_path / 'store.db'}"
    arms = {
        "baseline": [],
        "protocol": ["--protocol", "steps"],
        "memory": ["--memory", "digest"],
        "feedback": ["--feedback", "actionable"],
    }
    for name, options in arms.items():
        feedback = [] if name == "feedback" else ["--feedback", "plain"]
        before = len(script.requests)
        done = run_cli("--task-set", TASKS, "--tasks", "stock-total", "--harness", "fc", *feedback, *options,
                       "--model", "test-model", "--model-endpoint", server.url, "--store", store, "--run-id", name,
                       cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        sent = "\n".join(json.dumps(r.json()["messages"]) for r in script.requests[before:])
        assert ("Step 1/8" in sent, COMPLETION_CHECK in sent) == ((True, True) if name == "protocol" else (False, False))
        assert ("Known so far: search_products(office chair)" in sent) is (name == "memory")
    engine = open_store(store)
    with Session(engine) as session:
        params = {name: session.get(Run, name).params for name in arms}  # type: ignore[union-attr]
    engine.dispose()
    assert {n: (p["protocol"], p["memory"], p["feedback"]) for n, p in params.items()} == {
        "baseline": ("off", "off", "plain"), "protocol": ("steps", "off", "plain"),
        "memory": ("off", "digest", "plain"), "feedback": ("off", "off", "actionable")}
    summary = json.loads((tmp_path / "runs" / "protocol" / "summary.json").read_text(encoding="utf-8"))
    assert summary["run"]["settings"]["protocol"] == "steps" and summary["run"]["settings"]["memory"] == "off"


    compared = probegate("compare", *arms, "--store", store, "--json", cwd=tmp_path)
    assert compared.returncode == 0, compared.stderr
    ablation = json.loads(compared.stdout)["ablation"]
    assert [(r["run"], r["arm"], r["score_change"]) for r in ablation["rows"]] == [
        ("baseline", "baseline", 0.0), ("protocol", "+ protocol", 0.0), ("memory", "+ memory", 0.0),
        ("feedback", "+ feedback", 0.0)]
    shown = probegate("compare", *arms, "--store", store, cwd=tmp_path, columns="200")
    assert shown.returncode == 0, shown.stderr
    assert "ablation (baseline: protocol off, memory off, feedback plain)" in shown.stdout
    assert re.search(r"\+ protocol .*protocol .*steps · off · plain", shown.stdout)


def probegate(*args: str, cwd: Path, columns: str = "100") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": columns}
    return subprocess.run([sys.executable, "-m", "probegate", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, check=False, env=env)
