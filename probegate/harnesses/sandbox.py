"""Running model-written Python in a sandbox (the ``code`` harness).

Two layers bound the code:

1. **The operating system** (:mod:`probegate.harnesses.sandbox_isolation`): bubblewrap
   namespaces (user, PID, network, IPC, mount), a read-only root without ``/etc``
   or home folders, one size-capped writable tmpfs, a seccomp filter that allows
   no new process or thread, and resource limits the child sets on itself before
   any agent code runs: ``RLIMIT_CPU`` (SIGXCPU, then SIGKILL one second later),
   ``RLIMIT_AS`` (``MemoryError``), ``RLIMIT_FSIZE`` (one file, stdout and stderr
   included: ``EFBIG``), ``RLIMIT_NOFILE``, ``RLIMIT_NPROC`` (0) and ``RLIMIT_CORE`` (0).
2. **An audit hook** (:pep:`578`, :mod:`probegate.harnesses.sandbox_fence`) that stops
   the process, with a reason, on what honest code never does.

The code has no network: its tool functions reach the probe only through the
harness (:mod:`probegate.harnesses.sandbox_relay`). A wall-clock limit and a
process-group kill end the run; the PID namespace takes everything the code
started with it. The outcome is decided here, outside the sandbox: from the
exit status, the signal, and the verdict file the fence writes to (never from
the sandbox's stderr, which the code controls).

``isolated=False`` (``probegate run --unsafe-no-sandbox``) keeps only the second
layer, the limits and the process-group kill, with the work directory a host
temporary directory: for machines without bubblewrap, at the user's own risk.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from probegate.harnesses.sandbox_isolation import interpreter, isolated_command
from probegate.harnesses.sandbox_prelude import BLOCKED_EXIT, prelude_source
from probegate.harnesses.sandbox_relay import ToolRelay
from probegate.harnesses.tools_client import Observation


@dataclass(frozen=True)
class SandboxLimits:
    """Bounds of one sandboxed run.

    Attributes:
        cpu_s: CPU seconds.
        memory_bytes: address space (bytes).
        file_bytes: largest file, stdout and stderr included (bytes).
        disk_bytes: all files written, together (bytes; the tmpfs size, isolated runs only).
        open_files: descriptors open at once.
        wall_s: wall-clock seconds.
        output_chars: characters of stdout/stderr kept in the result.
    """

    cpu_s: int = 10
    memory_bytes: int = 512 * 1024 * 1024
    file_bytes: int = 1024 * 1024
    disk_bytes: int = 16 * 1024 * 1024
    open_files: int = 64
    wall_s: float = 60.0
    output_chars: int = 8000

    def rlimits(self) -> list[tuple[str, int, int]]:
        """``(RLIMIT_NAME, soft, hard)`` triples the child sets on itself."""
        return [
            ("RLIMIT_CORE", 0, 0),
            ("RLIMIT_CPU", self.cpu_s, self.cpu_s + 1),
            ("RLIMIT_AS", self.memory_bytes, self.memory_bytes),
            ("RLIMIT_FSIZE", self.file_bytes, self.file_bytes),
            ("RLIMIT_NOFILE", self.open_files, self.open_files),
            ("RLIMIT_NPROC", 0, 0),
        ]


@dataclass(frozen=True)
class SandboxResult:
    """What a sandboxed run did.

    Attributes:
        stdout: printed output (cut to ``output_chars``).
        stderr: error output (the tail, cut to ``output_chars``).
        exit_code: the process's exit status (negative: killed by that signal);
            ``None`` when the wall-clock limit killed it.
        stopped: why the sandbox stopped the code (``None`` when it ran to its
            end, even with an exception).
    """

    stdout: str
    stderr: str
    exit_code: int | None
    stopped: str | None = None

    @property
    def ok(self) -> bool:
        """The code ran to its end without an exception."""
        return self.exit_code == 0 and self.stopped is None


#: Exit status bwrap gives for a child killed by a signal: 128 + the signal.
SIGNALLED = 128


def stop_reason(exit_code: int | None, verdict: str, stderr: str, limits: SandboxLimits) -> str | None:
    """Why the sandbox stopped a process (pure).

    Args:
        exit_code: the exit status (negative: killed by that signal); ``None``
            when the wall-clock limit killed it.
        verdict: what the fence wrote to the verdict file (the code cannot erase it).
        stderr: the process's error output, used only to name the limit a failed
            run hit; it never turns a run into a success.
        limits: the bounds, for the message.
    """
    if verdict.strip():
        return "blocked: " + verdict.strip().splitlines()[0]
    if exit_code == BLOCKED_EXIT:
        return "blocked: (the reason was not reported: the code closed the verdict descriptor)"
    if exit_code is None:
        return f"wall-clock limit ({limits.wall_s:g} s) exceeded"
    if exit_code in (-signal.SIGXCPU, -signal.SIGKILL):
        return f"CPU time limit ({limits.cpu_s} s) exceeded"
    if exit_code == -signal.SIGXFSZ or (exit_code != 0 and "File too large" in stderr):
        return f"output or file size limit ({limits.file_bytes} bytes) exceeded"
    if exit_code != 0 and "No space left on device" in stderr:
        return f"disk limit ({limits.disk_bytes} bytes) exceeded"
    if exit_code != 0 and "MemoryError" in stderr:
        return f"memory limit ({limits.memory_bytes // (1024 * 1024)} MiB) exceeded"
    if exit_code != 0 and exit_code < 0:
        return f"killed by signal {-exit_code}"
    return None


def _read(path: Path, chars: int, *, tail: bool) -> str:
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    return text[-chars:] if tail else text[:chars]


def python_command(prelude: str) -> list[str]:
    """The interpreter command that runs ``prelude``: isolated (``-I -S``: no site-packages, no
    ``PYTHON*`` variables), unbuffered (``-u``: nothing printed is lost when the process dies)."""
    return [interpreter(), "-I", "-S", "-u", "-X", "utf8", "-c", prelude]


def run_sandboxed(
    code: str, tools: list[dict[str, Any]], tools_url: str, limits: SandboxLimits | None = None,
    *, isolated: bool = True, observe: Callable[[dict[str, Any], Observation], None] | None = None,
) -> SandboxResult:
    """Run ``code`` with one function per tool, inside the limits.

    Args:
        code: the model's Python source.
        tools: OpenAI tool objects, each exposed as a function the harness relays to the probe.
        tools_url: ``{gateway}/r/{run}/{task}/{attempt}/tools``.
        limits: the bounds (defaults: :class:`SandboxLimits`).
        isolated: run under bubblewrap (``False``: the audit hook and limits only).
        observe: called with each tool call's arguments and observation (from the relay's thread).

    Returns:
        The :class:`SandboxResult`; never raises for anything the code does.

    Raises:
        SandboxUnavailable: ``isolated`` and bubblewrap or libseccomp is missing.
    """
    limits = limits or SandboxLimits()
    with tempfile.TemporaryDirectory(prefix="probegate-code-") as host_dir, \
            ToolRelay(tools, tools_url, timeout=limits.wall_s, observe=observe) as relay:
        work = Path(host_dir, "work")
        work.mkdir()
        source, out, err, verdict = (Path(host_dir, name) for name in ("code", "stdout", "stderr", "verdict"))
        source.write_text(code, encoding="utf-8")
        with source.open("rb") as stdin, out.open("wb") as stdout, err.open("wb") as stderr, \
                verdict.open("wb") as verdict_file:
            fds = (relay.sandbox_end, verdict_file.fileno())
            command = python_command(prelude_source(tools, limits.rlimits(), *fds))
            with _wrapped(command, str(work), limits, isolated) as (argv, cwd, extra_fds):
                exit_code = run_in_session(argv, (stdin, stdout, stderr), cwd, limits.wall_s, (*fds, *extra_fds),
                                           on_start=relay.release_sandbox_end)
        if isolated and exit_code is not None and exit_code > SIGNALLED:
            exit_code = SIGNALLED - exit_code  # bwrap reports a signalled child as 128 + signal
        error_text = _read(err, limits.output_chars, tail=True)
        reason = stop_reason(exit_code, _read(verdict, 2000, tail=False), error_text, limits)
        if isolated and exit_code == 1 and error_text.startswith("bwrap: "):
            reason = "the sandbox did not start: " + error_text.splitlines()[0]
        return SandboxResult(_read(out, limits.output_chars, tail=False), error_text, exit_code, reason)


@contextlib.contextmanager
def _wrapped(command: list[str], work: str, limits: SandboxLimits,
             isolate: bool) -> Iterator[tuple[list[str], str, tuple[int, ...]]]:
    """``(argv, cwd, descriptors to pass)`` for the command, under bubblewrap or not."""
    if not isolate:
        yield command, work, ()
        return
    with isolated_command(command, limits.disk_bytes) as (argv, fds):
        yield argv, "/", fds


def run_in_session(argv: list[str], files: tuple[IO[bytes], IO[bytes], IO[bytes]], cwd: str,
                   wall_s: float, pass_fds: tuple[int, ...] = (),
                   on_start: Callable[[], None] | None = None) -> int | None:
    """Run ``argv`` as the leader of a new session; its exit status, ``None`` on timeout.

    The whole process group is killed before the leader is reaped (a zombie still
    holds its group id, so the id cannot have been reused). Under bubblewrap that
    kill also ends the sandbox's PID namespace, and with it every process inside,
    whatever session or group it made for itself.

    Args:
        argv: the command.
        files: its stdin, stdout and stderr.
        cwd: its working directory.
        wall_s: seconds before the group is killed.
        pass_fds: descriptors it inherits (same numbers).
        on_start: called once the process exists (to close the parent's copies of its descriptors).
    """
    stdin, stdout, stderr = files
    proc = subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd, env={},
                            start_new_session=True, pass_fds=pass_fds)
    try:
        if on_start is not None:
            on_start()
        finished = _wait_unreaped(proc.pid, wall_s)
    finally:
        kill_group(proc.pid)
        proc.wait()
    return proc.returncode if finished else None
def _wait_unreaped(pid: int, timeout_s: float) -> bool:
    """Wait up to ``timeout_s`` for ``pid`` to end without reaping it; whether it ended."""
    pidfd = os.pidfd_open(pid)
    try:
        return bool(select.select([pidfd], [], [], max(timeout_s, 0.0))[0])
    finally:
        os.close(pidfd)


def kill_group(pgid: int) -> None:
    """SIGKILL every process in the group ``pgid`` (none left is fine)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
