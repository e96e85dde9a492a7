"""The code sandbox: real subprocesses under bubblewrap, each stopped by the limit it hits;
its pure parts (the stop reason, the bubblewrap command line, the tools channel's requests)."""

from __future__ import annotations

import signal

import pytest

from probegate.harnesses.sandbox import SandboxLimits, run_sandboxed, stop_reason
from probegate.harnesses.sandbox_isolation import WORK_DIR, bwrap_argv
from probegate.harnesses.sandbox_prelude import BLOCKED_EXIT
from probegate.harnesses.sandbox_relay import parse_request

LIMITS = SandboxLimits(cpu_s=1, memory_bytes=256 * 1024 * 1024, file_bytes=64 * 1024, wall_s=8.0)
# nothing listens there: the tools are not called in these tests
TOOLS_URL = "http://127.0.0.1:9/r/run/task/0/tools"


def run(code: str):
    return run_sandboxed(code, [], TOOLS_URL, LIMITS)


@pytest.mark.parametrize(
    ("exit_code", "verdict", "stderr", "reason"),
    [
        (0, "", "", None),
        (1, "", "ZeroDivisionError", None),
        (None, "", "", "wall-clock limit (8 s) exceeded"),
        (-signal.SIGXCPU, "", "", "CPU time limit (1 s) exceeded"),
        (-signal.SIGKILL, "", "", "CPU time limit (1 s) exceeded"),
        (-signal.SIGXFSZ, "", "", "output or file size limit (65536 bytes) exceeded"),
        (-signal.SIGSEGV, "", "", "killed by signal 11"),
        (1, "", "OSError: [Errno 27] File too large", "output or file size limit (65536 bytes) exceeded"),
        (1, "", "OSError: [Errno 28] No space left on device", f"disk limit ({16 * 1024 * 1024} bytes) exceeded"),
        (1, "", "MemoryError", "memory limit (256 MiB) exceeded"),
        (BLOCKED_EXIT, "open /etc/passwd\n", "", "blocked: open /etc/passwd"),
        # the verdict decides, not the exit status the code may forge or the stderr it controls
        (0, "open /etc/passwd\n", "", "blocked: open /etc/passwd"),
        (BLOCKED_EXIT, "", "", "blocked: (the reason was not reported: the code closed the verdict descriptor)"),
        (0, "", "MemoryError", None),
    ],
)
def test_stop_reason(exit_code: int | None, verdict: str, stderr: str, reason: str | None) -> None:
    assert stop_reason(exit_code, verdict, stderr, LIMITS) == reason


def test_bwrap_argv() -> None:
    argv = bwrap_argv("/usr/bin/bwrap", [("--ro-bind", "/usr", "/usr"), ("--symlink", "usr/lib", "/lib")],
                      1024, 7, ["/usr/bin/python3", "-c", "pass"])
    assert argv[:2] == ["/usr/bin/bwrap", "--unshare-all"]
    for flags in (["--unshare-user"], ["--disable-userns"], ["--die-with-parent"], ["--new-session"],
                  ["--cap-drop", "ALL"], ["--clearenv"], ["--ro-bind", "/usr", "/usr"], ["--symlink", "usr/lib", "/lib"],
                  ["--size", "1024", "--tmpfs", WORK_DIR], ["--remount-ro", "/"], ["--remount-ro", "/dev"],
                  ["--chdir", WORK_DIR], ["--seccomp", "7"]):
        assert any(argv[i:i + len(flags)] == flags for i in range(len(argv))), flags
    assert "--share-net" not in argv and "--bind" not in argv and "--proc" not in argv
    assert argv.index("--remount-ro") > argv.index("--tmpfs")  # the tmpfs stays writable, nothing else does
    assert argv[-4:] == ["--", "/usr/bin/python3", "-c", "pass"]


TOOLS = frozenset({"lookup"})


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        (b'{"tool": "lookup", "arguments": {"q": "x"}}\n', ("lookup", {"q": "x"})),
        (b'{"tool": "lookup", "arguments": {}}', ("lookup", {})),
        (b"not json\n", "the request is not JSON"),
        (b'["lookup", {}]\n', 'a request is {"tool": NAME, "arguments": {...}}'),
        (b'{"tool": "lookup", "arguments": {}, "url": "/x"}\n', 'a request is {"tool": NAME, "arguments": {...}}'),
        (b'{"tool": "../reset", "arguments": {}}\n', "no tool '../reset' in this attempt"),
        (b'{"tool": 1, "arguments": {}}\n', "no tool '1' in this attempt"),
        (b'{"tool": "lookup", "arguments": "q=x"}\n', "the arguments are not a JSON object"),
    ],
)
def test_parse_request(line: bytes, parsed: object) -> None:
    assert parse_request(line, TOOLS) == parsed


def test_prints_and_uses_its_own_directory() -> None:
    result = run('open("note.txt", "w").write("hi")\nimport json\nprint(json.dumps({"note": open("note.txt").read()}))')
    assert (result.ok, result.stdout) == (True, '{"note": "hi"}\n')


def test_environment_is_empty() -> None:
    # LC_CTYPE: set by the interpreter itself (-X utf8); PWD: by bubblewrap (--chdir)
    result = run("import os\nprint(sorted(k for k in os.environ if k not in ('LC_CTYPE', 'PWD')))")
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
        ('open("/var/tmp/probegate-escape.txt", "w")', "blocked: open /var/tmp/probegate-escape.txt"),
        ('import os\nos.listdir("/")', "blocked: os.listdir /"),
        ('import os\nos.remove("/usr/nothing-here")', "blocked: os.remove /usr/nothing-here"),
        ('import subprocess\nsubprocess.run(["true"])', "blocked: subprocess.Popen"),
        ('import os\nos.system("true")', "blocked: os.system"),
        ("import os\nos.fork()", "blocked: os.fork"),
        ('import socket\nsocket.create_connection(("127.0.0.1", 22), timeout=1)',
         "blocked: socket.getaddrinfo 127.0.0.1"),
        ('import urllib.request\nurllib.request.urlopen("http://example.com")', "blocked: socket.getaddrinfo example.com"),
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
        ("import time\ntime.sleep(60)", "wall-clock limit (8 s) exceeded"),
        ("x = bytearray(1024 * 1024 * 1024)", "memory limit (256 MiB) exceeded"),
        ('print("x" * 1_000_000)', "output or file size limit (65536 bytes) exceeded"),
    ],
)
def test_limits(code: str, reason: str) -> None:
    assert run(code).stopped == reason


def test_tool_functions_reach_the_probe_through_the_harness() -> None:
    # nothing listens at the probe's port: the harness's relay answers status 0, the code sees a ToolError
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}}}}}]
    result = run_sandboxed("try:\n    lookup('x')\nexcept ToolError as exc:\n    print(exc.status, exc.body['error'])",
                           tools, TOOLS_URL, LIMITS)
    assert (result.ok, result.stdout) == (True, "0 unreachable\n")
