"""``python -m probegate run`` refuses what cannot work with one clear line and exit 2, and
writes nothing a later score could trip on: a broken task file, an unknown harness,
an unreachable model endpoint or gateway.

The store already holds one good run; after each refusal it holds exactly that run,
and scoring the refused run id says there is no such run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlmodel import Session, select

from probegate.store import Exchange, ProbeCall, Run, WorldState, open_store
from probegate.testing import free_port

TASKS = str(Path(__file__).parents[1] / "harnesses" / "tasks")
REFUSED = "refused-run"


def probegate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "probegate", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.fixture
def store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    engine = open_store(url)
    with Session(engine) as session:
        session.add(Run(id="earlier", task_set=TASKS, harness="fc", model="m", status="done", params={}))
        session.commit()
    engine.dispose()
    return url


def broken_task_set(tmp_path: Path) -> str:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "bad.yaml").write_text("id: bad\ntier: P9\n", encoding="utf-8")
    (folder / "worse.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    return str(folder)


def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}"  # a free port: nothing listens there


CASES = {
    "broken task file": (lambda tmp: ["--task-set", broken_task_set(tmp), "--harness", "fc", "--model", "m",
                                      "--model-endpoint", "http://127.0.0.1:9"],
                         "error: task set {tmp}/broken has 8 problem(s):"),
    "unknown harness": (lambda tmp: ["--task-set", TASKS, "--harness", "nope", "--model", "m",
                                     "--model-endpoint", "http://127.0.0.1:9"],
                        ("error: unknown harness 'nope': choose one of fc, react, plan, code, langchain, crewai, openai-agents, "
                         "openai-agents-chat, langchain-mcp, crewai-mcp, ollama, cmd:\"COMMAND\"")),
    "ollama harness on the embedded server": (lambda tmp: ["--task-set", TASKS, "--harness", "ollama"],
                                              ("error: --harness ollama needs --model-endpoint URL (and --model NAME): "
                                               "it calls Ollama's native /api/chat, which the embedded model server lacks")),
    "unreachable model endpoint": (lambda tmp: ["--task-set", TASKS, "--harness", "fc", "--model", "m",
                                                "--model-endpoint", "DEAD"],
                                   ("error: cannot reach --model-endpoint DEAD ([Errno 111] Connection refused): "
                                   "start the server or fix the URL")),
    "unreachable gateway": (lambda tmp: ["--task-set", TASKS, "--harness", "fc", "--model", "m", "--gateway", "DEAD"],
                            ("error: cannot reach --gateway DEAD ([Errno 111] Connection refused): "
                            "start the server or fix the URL")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_refused_with_one_line_exit_2_and_nothing_stored(case: str, store: str, tmp_path: Path) -> None:
    make_args, first_line = CASES[case]
    dead = dead_url()
    args = [a.replace("DEAD", dead) for a in make_args(tmp_path)]
    done = probegate("run", *args, "--store", store, "--run-id", REFUSED, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == first_line.replace("DEAD", dead).replace("{tmp}", str(tmp_path))
    assert "Traceback" not in done.stderr + done.stdout
    if case != "broken task file":  # that one lists each problem on its own line after the first
        assert len(lines) == 1
    assert not (tmp_path / "runs").exists()
    engine = open_store(store)
    with Session(engine) as session:
        assert [r.id for r in session.exec(select(Run))] == ["earlier"]
        for table in (Exchange, ProbeCall, WorldState):
            assert list(session.exec(select(table))) == []
    engine.dispose()
    scored = probegate("score", REFUSED, "--store", store, cwd=tmp_path)
    assert scored.returncode == 2 and scored.stderr.startswith(f"error: no run {REFUSED!r} in this store")
