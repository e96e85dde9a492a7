"""``probegate run`` as a user runs it: a subprocess against a scripted model on loopback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlmodel import Session, select

from probegate.store import Exchange, Run, open_store
from probegate.testing import (
    ReceivedRequest,
    Reply,
    RunningServer,
    ScriptedUpstream,
    Turn,
    chat_completion,
    serve_in_thread,
)
from probegate.testing.signals import default_sigint

PROBEGATE = [sys.executable, "-m", "probegate", "run"]
TASKS = str(Path(__file__).parent / "tasks")


def stock_model(request: ReceivedRequest) -> Turn:
    last = request.json()["messages"][-1]
    if last["role"] == "user":
        return Turn(tool_calls=[{"name": "search_products", "arguments": {"query": "office chair"}}])
    result = json.loads(last["content"])
    if "products" in result:
        return Turn(tool_calls=[{"name": "check_stock", "arguments": {"sku": result["products"][0]["sku"]}}])
    return Turn(f"We have {result['in_stock']} chairs in stock.")


@pytest.fixture
def model() -> tuple[ScriptedUpstream, RunningServer]:
    script = ScriptedUpstream(handler=stock_model)
    server = serve_in_thread(script)
    yield script, server
    server.stop()


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PROBEGATE, *args], capture_output=True, text=True, cwd=cwd, timeout=120, check=False)


def test_a_run_end_to_end(model, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    done = run_cli("--task-set", TASKS, "--tasks", "stock-total", "--harness", "fc", "--model", "test-model",
                   "--model-endpoint", model[1].url, "--store", store, "--run-id", "cli-1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "stock-total" in done.stdout and "run cli-1 (done)" in done.stdout
    assert "reach 1.00 | 1/1 attempts passed" in done.stdout
    # the headline leads: mean score, then reach per tier, with 95 % intervals
    assert done.stdout.index("\nmean score 100.0 % [100.0–100.0] · reach P1 100.0 % [20.7–100.0]") < done.stdout.index("reach 1.00 |")
    assert f"report: {Path('runs') / 'cli-1' / 'report.html'}" in done.stdout
    assert (tmp_path / "runs" / "cli-1" / "summary.json").exists()
    assert "1 passed 0 failed 0 running" in done.stderr  # the progress bar's last state
    engine = open_store(store)
    with Session(engine) as session:
        run = session.get(Run, "cli-1")
        assert run is not None and run.status == "done"
        assert len(list(session.exec(select(Exchange).where(Exchange.run_id == "cli-1")))) == 3
    engine.dispose()


@pytest.mark.parametrize(
    ("args", "first_line"),
    [
        (["--harness", "nope"], "error: unknown harness 'nope': choose one of fc, react, plan, code, langchain, "
                                'crewai, openai-agents, openai-agents-chat, langchain-mcp, crewai-mcp, ollama, cmd:"COMMAND"'),
        (["--harness", "fc", "--task-set", "/no/such/set"], "error: no task set '/no/such/set'"),
        (["--harness", "fc", "--repeats", "0"], "error (probegate run): Invalid value for '--repeats'"),
        (["--harness", "fc", "--temperature", "nan"], "error (probegate run): Invalid value for '--temperature': 'nan' is not a finite number"),
        (["--harness", "fc", "--output-dir", "/proc/nope"], "error: --output-dir '/proc/nope': cannot write in '/proc'"),
        (["--harness", "fc", "--tasks", "missing-task"], "error: unknown task id(s) in tasks: missing-task"),
        (["--harness", "fc", "--run-id", "a/b"], "error: --run-id 'a/b' is not usable"),
        (["--harness", "fc", "--compat", "none", "--compat", "null-content"],
         "error: --compat none means no shim: give it alone"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args: list[str], first_line: str, tmp_path: Path) -> None:
    base = ["--model", "m", "--model-endpoint", "http://127.0.0.1:9", "--store", f"sqlite:///{tmp_path / 's.db'}"]
    if "--task-set" not in args:
        base += ["--task-set", TASKS]
    result = run_cli(*base, *args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(first_line)
    assert "Traceback" not in result.stderr


def test_a_broken_task_set_exits_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "bad.yaml").write_text("id: bad\ntier: P9\n", encoding="utf-8")
    result = run_cli("--task-set", str(broken), "--harness", "fc", "--model", "m",
                     "--model-endpoint", "http://127.0.0.1:9", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == f"error: task set {broken} has 7 problem(s):"
    assert "bad.yaml: tier: 'P9' is not one of ['P0', 'P1', 'P2']" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_marks_the_run_interrupted(model, tmp_path: Path, sig: signal.Signals) -> None:
    """Ctrl-C, and SIGTERM (a CI timeout, kill, docker stop), end the run cleanly."""
    script, server = model
    slow = Reply.json(chat_completion("Let me think.", model="test-model"), delay_s=2.0)
    script.handler = lambda request: slow
    store = f"sqlite:///{tmp_path / 'store.db'}"
    proc = subprocess.Popen(
        [*PROBEGATE, "--task-set", TASKS, "--harness", "react", "--model", "test-model", "--repeats", "3",
         "--model-endpoint", server.url, "--store", store, "--run-id", "cli-int"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
    )
    deadline = time.monotonic() + 60
    while not script.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "run cli-int (interrupted)" in out
    engine = open_store(store)
    with Session(engine) as session:
        run = session.get(Run, "cli-int")
        assert run is not None and run.status == "interrupted"
        assert len(run.params["outcomes"]) < 6  # the attempts not started were never run
    engine.dispose()
