"""Run attacker code against one layer of the code sandbox at a time.

``sandbox`` is what the ``code`` harness runs (bubblewrap and the audit hook),
``fence`` the audit hook alone (``--unsafe-no-sandbox``), ``os`` bubblewrap, the
seccomp filter and the resource limits alone, with no audit hook: the code
starts with the interpreter's full power, as if it had found a hole in the fence.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probegate.harnesses.sandbox import SandboxLimits, run_in_session, run_sandboxed, stop_reason
from probegate.harnesses.sandbox_isolation import (
    bwrap_argv,
    find_bwrap,
    interpreter,
    isolated_command,
    mounts,
)

LIMITS = SandboxLimits(cpu_s=2, file_bytes=1024 * 1024, disk_bytes=16 * 1024 * 1024, wall_s=20.0)
TOOLS_URL = "http://127.0.0.1:9/r/run/task/0/tools"  # nothing listens there: no tool is called
LAYERS = ("sandbox", "fence", "os")


@dataclass(frozen=True)
class Outcome:
    """What an attack ended with, as the harness sees it."""

    stdout: str
    stderr: str
    exit_code: int | None
    stopped: str | None

    @property
    def ok(self) -> bool:
        """What the harness would take for a run that ended well."""
        return self.exit_code == 0 and self.stopped is None


def marked_tools(mark: str | None) -> list[dict[str, Any]]:
    """One tool named ``mark``: the prelude's command line then holds it, so the host can find the
    sandbox's processes (bwrap's, the interpreter's and its forks) by it (:func:`witness.processes_with`)."""
    if mark is None:
        return []
    return [{"type": "function", "function": {"name": mark, "parameters": {"type": "object", "properties": {}}}}]


def attack(code: str, layer: str, limits: SandboxLimits = LIMITS, mark: str | None = None) -> Outcome:
    """Run ``code`` against ``layer`` (one of :data:`LAYERS`); ``mark`` goes into every command line."""
    if layer == "os":
        return run_os_layer(code if mark is None else f"# {mark}\n{code}", limits)
    result = run_sandboxed(code, marked_tools(mark), TOOLS_URL, limits, isolated=layer == "sandbox")
    return Outcome(result.stdout, result.stderr, result.exit_code, result.stopped)


def os_source(code: str, limits: SandboxLimits) -> str:
    """``code`` after the same resource limits the prelude sets, and nothing else."""
    return (f"import resource\nfor _n, _s, _h in {limits.rlimits()!r}:\n"
            f"    resource.setrlimit(getattr(resource, _n), (_s, _h))\n{code}")


def run_os_layer(code: str, limits: SandboxLimits = LIMITS, *, seccomp: bool = True) -> Outcome:
    """Run ``code`` under bubblewrap and the resource limits only (``seccomp=False``: no filter either)."""
    command = [interpreter(), "-I", "-S", "-u", "-X", "utf8", "-c", os_source(code, limits)]
    with tempfile.TemporaryDirectory() as folder, _argv(command, limits, seccomp) as (argv, fds):
        out, err = Path(folder, "out"), Path(folder, "err")
        with open("/dev/null", "rb") as stdin, out.open("wb") as stdout, err.open("wb") as stderr:
            exit_code = run_in_session(argv, (stdin, stdout, stderr), "/", limits.wall_s, fds)
        if exit_code is not None and exit_code > 128:
            exit_code = 128 - exit_code
        error = err.read_text(errors="replace")
        return Outcome(out.read_text(errors="replace"), error, exit_code, stop_reason(exit_code, "", error, limits))


@contextlib.contextmanager
def _argv(command: list[str], limits: SandboxLimits, seccomp: bool) -> Iterator[tuple[list[str], tuple[int, ...]]]:
    if seccomp:
        with isolated_command(command, limits.disk_bytes) as pair:
            yield pair
        return
    import pyseccomp

    allow_all = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    with tempfile.TemporaryFile() as compiled:
        allow_all.export_bpf(compiled)
        compiled.seek(0)
        fd = compiled.fileno()
        yield bwrap_argv(find_bwrap(), mounts(command[0]), limits.disk_bytes, fd, command), (fd,)


class Background:
    """An OS-layer run in a thread, for witnesses that must look while the code is alive.

    The code prints lines; :meth:`line` waits for the next one. The run is killed
    at ``limits.wall_s`` at the latest; :meth:`finish` waits for it.
    """

    def __init__(self, code: str, limits: SandboxLimits, *, seccomp: bool = True) -> None:
        self._folder = tempfile.TemporaryDirectory()
        self.out = Path(self._folder.name, "out")
        self.out.touch()
        self.outcome: Outcome | None = None
        self._seen = 0
        self._thread = threading.Thread(target=self._run, args=(code, limits, seccomp), daemon=True)

    def _run(self, code: str, limits: SandboxLimits, seccomp: bool) -> None:
        command = [interpreter(), "-I", "-S", "-u", "-c", os_source(code, limits)]
        with _argv(command, limits, seccomp) as (argv, fds), open("/dev/null", "rb") as stdin, \
                self.out.open("ab") as stdout, open("/dev/null", "wb") as stderr:
            exit_code = run_in_session(argv, (stdin, stdout, stderr), "/", limits.wall_s, fds)
        self.outcome = Outcome("", "", exit_code, None)

    def __enter__(self) -> Background:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._thread.join()
        self._folder.cleanup()

    def line(self, timeout_s: float = 20.0) -> str:
        """The next line the code printed (``AssertionError`` when none comes in time)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            lines = self.out.read_text(errors="replace").splitlines(keepends=True)
            if len(lines) > self._seen and lines[self._seen].endswith("\n"):
                self._seen += 1
                return lines[self._seen - 1].rstrip("\n")
            time.sleep(0.05)
        raise AssertionError(f"no line from the sandbox within {timeout_s} s: {self.out.read_text()!r}")

    def finish(self) -> Outcome:
        """Wait for the run to end (the wall-clock kill at the latest)."""
        self._thread.join()
        assert self.outcome is not None
        return self.outcome
