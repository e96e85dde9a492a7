"""The code sandbox: real subprocesses, each stopped by the limit it hits."""

from __future__ import annotations

import signal

import pytest

from probegate.harnesses.sandbox import SandboxLimits, pinned_tools_url, run_sandboxed, stop_reason
from probegate.harnesses.sandbox_prelude import BLOCKED_EXIT, BLOCKED_MARK

LIMITS = SandboxLimits(cpu_s=1, memory_bytes=256 * 1024 * 1024, file_bytes=64 * 1024, wall_s=3.0)
# nothing listens there: the tools are not called in these tests
TOOLS_URL = "http://127.0.0.1:9/r/run/task/0/tools"


def run(code: str):
    return run_sandboxed(code, [], TOOLS_URL, LIMITS)


@pytest.mark.parametrize(
    ("exit_code", "stderr", "reason"),
    [
        (0, "", None),
        (1, "ZeroDivisionError", None),
        (None, "", "wall-clock limit (3 s) exceeded"),
        (-signal.SIGXCPU, "", "CPU time limit (1 s) exceeded"),
        (-signal.SIGXFSZ, "", "output or file size limit (65536 bytes) exceeded"),
        (1, "OSError: [Errno 27] File too large", "output or file size limit (65536 bytes) exceeded"),
        (1, "MemoryError", "memory limit (256 MiB) exceeded"),
        (BLOCKED_EXIT, f"\n{BLOCKED_MARK}open /etc/passwd\n", "blocked: open /etc/passwd"),
        (BLOCKED_EXIT, "no marker", None),
    ],
)
def test_stop_reason(exit_code: int | None, stderr: str, reason: str | None) -> None:
    assert stop_reason(exit_code, stderr, LIMITS) == reason


def test_prints_and_uses_its_own_directory() -> None:
    result = run('open("note.txt", "w").write("hi")\nimport json\nprint(json.dumps({"note": open("note.txt").read()}))')
    assert (result.ok, result.stdout) == (True, '{"note": "hi"}\n')


def test_environment_is_empty() -> None:
    result = run("import os\nprint(sorted(k for k in os.environ if k != 'LC_CTYPE'))")
    assert result.stdout == "[]\n"


def test_an_exception_is_not_a_stop() -> None:
    result = run("1 / 0")
    assert (result.ok, result.stopped, result.exit_code) == (False, None, 1)
    assert 'File "<agent-code>", line 1' in result.stderr and "ZeroDivisionError" in result.stderr
    assert "<string>" not in result.stderr  # the prelude's frames are hidden


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ('open("/etc/passwd").read()', "blocked: open /etc/passwd"),
        ('open("/tmp/probegate-escape.txt", "w")', "blocked: open /tmp/probegate-escape.txt"),
        ('import os\nos.listdir("/")', "blocked: os.listdir /"),
        ('import os\nos.remove("/tmp/nothing-here")', "blocked: os.remove /tmp/nothing-here"),
        ('import subprocess\nsubprocess.run(["true"])', "blocked: subprocess.Popen"),
        ('import os\nos.system("true")', "blocked: os.system"),
        ("import os\nos.fork()", "blocked: os.fork"),
        ('import socket\nsocket.create_connection(("127.0.0.1", 22), timeout=1)',
         "blocked: connect to ('127.0.0.1', 22)"),
        ('import urllib.request\nurllib.request.urlopen("http://example.com")', "blocked: request to http://example.com"),
        ('import socket\nsocket.getaddrinfo("example.com", 80)', "blocked: socket.getaddrinfo example.com"),
        ("import ctypes\nctypes.CDLL(None)", "blocked: import _ctypes"),
        # a blocked call cannot be caught and ignored: the process ends
        ('try:\n    open("/etc/hostname")\nexcept BaseException:\n    print("escaped")', "blocked: open /etc/hostname"),
    ],
)
def test_blocked_operations(code: str, reason: str) -> None:
    result = run(code)
    assert (result.stopped, result.exit_code, result.stdout) == (reason, BLOCKED_EXIT, "")


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("while True:\n    pass", "CPU time limit (1 s) exceeded"),
        ("import time\ntime.sleep(60)", "wall-clock limit (3 s) exceeded"),
        ("x = bytearray(1024 * 1024 * 1024)", "memory limit (256 MiB) exceeded"),
        ('print("x" * 1_000_000)', "output or file size limit (65536 bytes) exceeded"),
    ],
)
def test_limits(code: str, reason: str) -> None:
    assert run(code).stopped == reason


def test_pinned_tools_url_resolves_the_host() -> None:
    assert pinned_tools_url("http://localhost:8700/r/a/b/0/tools/") == (
        "http://127.0.0.1:8700/r/a/b/0/tools", "127.0.0.1", 8700,
    )
    with pytest.raises(ValueError, match="without a host"):
        pinned_tools_url("/no/host")
