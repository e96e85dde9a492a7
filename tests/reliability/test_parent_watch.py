"""A child under probegate.runner.parent_watch ends when its parent dies (no orphaned model server)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from probegate.runner.embedded import server_command

# The parent starts `http.server` under the watch, prints the child's pid, then waits.
PARENT = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-m", "probegate.runner.parent_watch", str(os.getpid()),
                          "http.server", "0", "--bind", "127.0.0.1"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
print(child.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())  # a zombie has exited


def test_the_child_exits_when_its_parent_is_killed() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        time.sleep(1.5)
        assert _alive(child), "the watched module should run while its parent lives"
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 15
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child), "the child outlived its parent"
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
        parent.kill()
        parent.wait(10)
        parent.stdout.close()


def test_usage_errors_exit_2() -> None:
    for args in ([], ["notapid", "http.server"], ["123"]):
        proc = subprocess.run([sys.executable, "-m", "probegate.runner.parent_watch", *args], capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 2 and proc.stderr.startswith("usage:"), (args, proc.stderr)


def test_an_already_orphaned_child_does_not_start() -> None:
    proc = subprocess.run([sys.executable, "-m", "probegate.runner.parent_watch", "1", "http.server", "0"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1


def test_the_embedded_server_runs_under_the_watch() -> None:
    command = server_command(Path("m.gguf"), 8080, n_ctx=4096, alias="m", threads=2, parent_pid=4242)
    assert command[1:5] == ["-m", "probegate.runner.parent_watch", "4242", "probegate.runner.llama_server"]
    assert server_command(Path("m.gguf"), 8080, n_ctx=4096, alias="m", threads=2)[1:3] == ["-m", "probegate.runner.llama_server"]
