"""The code harness refuses to run without bubblewrap, unless the user passes ``--unsafe-no-sandbox``.

"Without bubblewrap" is a PATH that does not hold ``bwrap``; the runs are real
``probegate run`` subprocesses against a scripted model on loopback.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlmodel import Session

from probegate.errors import UsageError
from probegate.harnesses.code import CodeHarness
from probegate.harnesses.registry import HarnessOptions, expand_harnesses, get_harness
from probegate.harnesses.sandbox_isolation import BWRAP_MISSING, find_bwrap
from probegate.store import Run, open_store
from probegate.testing import ReceivedRequest, RunningServer, ScriptedUpstream, Turn, serve_in_thread

TASKS = str(Path(__file__).parent / "tasks")
CODE = ("```python\nsku = search_products(query='office chair')['products'][0]['sku']\n"
        "print(check_stock(sku)['in_stock'])\n```")


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A PATH without bwrap (an empty folder), set for this process too."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return str(empty)


def test_the_message_says_what_is_missing_and_how_to_install_it() -> None:
    assert "`bwrap` is not on PATH" in BWRAP_MISSING and "apt-get install bubblewrap" in BWRAP_MISSING
    assert "--unsafe-no-sandbox" in BWRAP_MISSING and "\n" not in BWRAP_MISSING


@pytest.mark.filterwarnings("ignore::ImportWarning")  # "all" imports CrewAI when installed: it warns about itself
def test_without_bwrap_the_harness_is_refused(no_bwrap: str) -> None:
    with pytest.raises(UsageError) as caught:
        get_harness("code")
    assert str(caught.value) == BWRAP_MISSING
    names, notes = expand_harnesses("all")
    assert "code" not in names and f"code left out: {BWRAP_MISSING}" in notes


@pytest.mark.filterwarnings("ignore::ImportWarning")
def test_without_bwrap_the_unsafe_flag_lets_it_run(no_bwrap: str) -> None:
    harness = get_harness("code", HarnessOptions(unsafe_no_sandbox=True))
    assert isinstance(harness, CodeHarness) and harness.isolated is False
    assert "code" in expand_harnesses("all", HarnessOptions(unsafe_no_sandbox=True))[0]


def test_with_bwrap_the_harness_is_isolated() -> None:
    find_bwrap()  # this machine has it (.ci/run installs bubblewrap)
    harness = get_harness("code")
    assert isinstance(harness, CodeHarness) and harness.isolated is True


def coder(request: ReceivedRequest) -> Turn:
    return Turn(CODE)


@pytest.fixture
def model() -> RunningServer:
    server = serve_in_thread(ScriptedUpstream(handler=coder))
    yield server
    server.stop()


def run_cli(*args: str, cwd: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = None if path is None else {"PATH": path, "HOME": str(cwd)}
    return subprocess.run([sys.executable, "-m", "probegate", "run", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=180, check=False, env=env)


def base_args(model: RunningServer, tmp_path: Path, run_id: str) -> list[str]:
    return ["--task-set", TASKS, "--tasks", "stock-total", "--harness", "code", "--model", "test-model",
            "--model-endpoint", model.url, "--store", f"sqlite:///{tmp_path / 'store.db'}", "--run-id", run_id]


def params(tmp_path: Path, run_id: str) -> dict:
    engine = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    with Session(engine) as session:
        run = session.get(Run, run_id)
        assert run is not None
        result = dict(run.params or {})
    engine.dispose()
    return result


def test_cli_without_bwrap_exits_2_with_one_line(model: RunningServer, tmp_path: Path, no_bwrap: str) -> None:
    done = run_cli(*base_args(model, tmp_path, "code-refused"), cwd=tmp_path, path=no_bwrap)
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {BWRAP_MISSING}"
    assert not (tmp_path / "store.db").exists()  # refused before the run existed


def test_cli_without_bwrap_runs_with_the_unsafe_flag(model: RunningServer, tmp_path: Path, no_bwrap: str) -> None:
    done = run_cli(*base_args(model, tmp_path, "code-unsafe"), "--unsafe-no-sandbox", cwd=tmp_path, path=no_bwrap)
    assert done.returncode == 0, done.stderr
    assert "reach 1.00 | 1/1 attempts passed" in done.stdout
    assert "--unsafe-no-sandbox: the code harness runs model-written code without OS isolation" in " ".join(
        done.stderr.split())  # the console wraps long lines
    assert params(tmp_path, "code-unsafe")["unsafe_no_sandbox"] is True


def test_cli_runs_the_code_harness_under_bwrap(model: RunningServer, tmp_path: Path) -> None:
    done = run_cli(*base_args(model, tmp_path, "code-safe"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "reach 1.00 | 1/1 attempts passed" in done.stdout
    recorded = params(tmp_path, "code-safe")
    assert recorded["unsafe_no_sandbox"] is False
    assert recorded["outcomes"]["stock-total/0"]["final_answer"] == "25"
