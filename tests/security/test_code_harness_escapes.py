"""Escapes end to end: a scripted model writes the escape, the real ``code`` harness runs it.

The attempt ends with ``error`` and the sandbox's reason; the model is not asked
again (a stop is not feedback); the host witness saw nothing.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from probegate.runner.attempt import AttemptOutcome, AttemptSettings, run_attempt
from probegate.harnesses.code import CodeHarness
from probegate.runner.local_gateway import LocalGateway
from probegate.store import open_store
from probegate.testing import ScriptedUpstream, Turn, serve_in_thread
from probegate.tasks.loader import TaskSet, load_task_set
from tests.security.witness import Listener, survivors

TASKS_DIR = Path(__file__).parents[1] / "harnesses" / "tasks"
MODEL = "test-model"


@pytest.fixture
def store(sqlite_url: str) -> Iterator[Engine]:
    engine = open_store(sqlite_url)
    yield engine
    engine.dispose()


@pytest.fixture
def model_and_gateway(store: Engine) -> Iterator[tuple[ScriptedUpstream, LocalGateway]]:
    script = ScriptedUpstream()
    server = serve_in_thread(script)
    with LocalGateway(server.url, store, model=MODEL) as gateway:
        yield script, gateway
    server.stop()


def attempt(model_and_gateway: tuple[ScriptedUpstream, LocalGateway], reply: str) -> AttemptOutcome:
    script, gateway = model_and_gateway
    script.push(Turn(f"```python\n{reply}\n```"), Turn("```python\nprint('a second try')\n```"))
    task_set: TaskSet = load_task_set(str(TASKS_DIR))
    outcome = run_attempt(CodeHarness(), task_set.get("stock-total"), 0, AttemptSettings(gateway.url, "run1", MODEL))
    gateway.writer.flush()
    assert len(script.requests) == 1  # stopped at the first reply: no second turn
    return outcome


def test_a_command_escape_fails_the_task(model_and_gateway, tmp_path: Path) -> None:
    outcome = attempt(model_and_gateway, f'import os\nos.system("touch {tmp_path}/ran")')
    assert (outcome.result.stop, outcome.result.error) == ("error", "the sandbox stopped the code: blocked: os.system")
    assert not (tmp_path / "ran").exists()


def test_a_socket_escape_fails_the_task(model_and_gateway, listener: Listener) -> None:
    outcome = attempt(model_and_gateway, f'import socket\nsocket.create_connection(("127.0.0.1", {listener.port}))')
    assert (outcome.result.stop, outcome.result.error) == (
        "error", "the sandbox stopped the code: blocked: socket.getaddrinfo 127.0.0.1")
    assert listener.contacts() == 0


def test_a_fork_bomb_fails_the_task(model_and_gateway) -> None:
    outcome = attempt(model_and_gateway, "import os\nwhile True:\n    os.fork()")
    assert (outcome.result.stop, outcome.result.error) == ("error", "the sandbox stopped the code: blocked: os.fork")


def test_a_kill_of_a_host_process_fails_the_task(model_and_gateway, victim: subprocess.Popen[bytes]) -> None:
    outcome = attempt(model_and_gateway, f"import os\nos.kill({victim.pid}, 9)")
    assert (outcome.result.stop, outcome.result.error) == ("error", "the sandbox stopped the code: blocked: os.kill")
    assert victim.poll() is None


def test_survivors_helper_sees_a_live_session() -> None:
    # the witness itself must be able to fail: a session with a live member is reported
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        assert survivors(proc.pid, patience_s=0.2) == [proc.pid]
    finally:
        proc.kill()
        proc.wait()
