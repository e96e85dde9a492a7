"""Running model-written Python in a constrained subprocess (the ``code`` harness).

What bounds the code, in order of strength:

- **Resource limits** set by the child on itself before any agent code runs:
  ``RLIMIT_CPU`` (CPU seconds; SIGXCPU ends it), ``RLIMIT_AS`` (address space;
  allocations fail with ``MemoryError``), ``RLIMIT_FSIZE`` (largest file written;
  stdout and stderr are files here, so this also caps output: Python ignores
  SIGXFSZ, so the write fails with ``EFBIG``), ``RLIMIT_NPROC``
  (0: no new processes or threads; not enforced for root) and ``RLIMIT_CORE`` (0).
- **A wall-clock limit and a process-group kill**: the child leads its own
  session; after ``wall_s``, and in any case before it is reaped, its whole
  process group gets SIGKILL, so nothing it started outlives the run.
- **An empty environment, a fresh temporary working directory, isolated Python**
  (``-I -S``: no site-packages, no user site, no ``PYTHON*`` variables).
- **An audit hook** (:pep:`578`, :mod:`probegate.harnesses.sandbox_fence`) that ends the
  process on: ``socket.connect`` or name lookups for anything but the probe's
  host and port, sockets other than TCP/UDP/Unix; URLs outside the tools URL;
  ``open`` for writing outside the temporary directory, or for reading outside it
  and the standard library; file-system changes outside the directory; new
  processes and threads (``subprocess``, ``os.system``, ``os.exec*``,
  ``os.fork``, ``os.posix_spawn``, ``_thread``), signals (``os.kill``),
  ``ctypes`` and other native modules, tracing, ``gc`` object walks,
  ``sqlite3``. Its decisions cannot be changed by the code it watches, and
  functions that act without an audit event (``os.pidfd_open``, ``os.mkfifo``,
  ...) are replaced by refusals; ``pwd``/``grp`` look-ups find nothing.

The audit hook is a pure-Python fence, not a security boundary: C code and
crafted bytecode act without raising audit events. It keeps an honest model's
code in its lane and makes escapes visible; run untrusted agents in a container.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit, urlunsplit

from probegate.harnesses.sandbox_prelude import BLOCKED_EXIT, BLOCKED_MARK, prelude_source


@dataclass(frozen=True)
class SandboxLimits:
    """Bounds of one sandboxed run.

    Attributes:
        cpu_s: CPU seconds.
        memory_bytes: address space (bytes).
        file_bytes: largest file, stdout and stderr included (bytes).
        wall_s: wall-clock seconds.
        output_chars: characters of stdout/stderr kept in the result.
    """

    cpu_s: int = 10
    memory_bytes: int = 512 * 1024 * 1024
    file_bytes: int = 1024 * 1024
    wall_s: float = 60.0
    output_chars: int = 8000

    def rlimits(self) -> list[tuple[str, int, int]]:
        """``(RLIMIT_NAME, soft, hard)`` triples the child sets on itself."""
        return [
            ("RLIMIT_CORE", 0, 0),
            ("RLIMIT_CPU", self.cpu_s, self.cpu_s + 1),
            ("RLIMIT_AS", self.memory_bytes, self.memory_bytes),
            ("RLIMIT_FSIZE", self.file_bytes, self.file_bytes),
            ("RLIMIT_NPROC", 0, 0),
        ]


@dataclass(frozen=True)
class SandboxResult:
    """What a sandboxed run did.

    Attributes:
        stdout: printed output (cut to ``output_chars``).
        stderr: error output (the tail, cut to ``output_chars``), without the
            sandbox's own marker line.
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


def pinned_tools_url(tools_url: str) -> tuple[str, str, int]:
    """The tools URL with its host resolved to an address, and that address and port.

    The audit hook compares socket addresses, so the URL the code uses must name
    the address it will connect to.

    Raises:
        ValueError: the URL has no host or the host does not resolve.
    """
    parts = urlsplit(tools_url)
    if not parts.hostname:
        raise ValueError(f"tools URL without a host: {tools_url!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
        address = str(min(infos, key=lambda info: info[0] != socket.AF_INET)[4][0])  # IPv4 first
    except OSError as exc:
        raise ValueError(f"cannot resolve {parts.hostname!r}: {exc}") from exc
    netloc = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", "")), address, port


def stop_reason(exit_code: int | None, stderr: str, limits: SandboxLimits) -> str | None:
    """Why the sandbox stopped a process, from its exit status and stderr (pure)."""
    if exit_code is None:
        return f"wall-clock limit ({limits.wall_s:g} s) exceeded"
    if exit_code == BLOCKED_EXIT and BLOCKED_MARK in stderr:
        return "blocked: " + stderr.rsplit(BLOCKED_MARK, 1)[1].strip().splitlines()[0]
    if exit_code in (-signal.SIGXCPU, -signal.SIGKILL):
        return f"CPU time limit ({limits.cpu_s} s) exceeded"
    if exit_code == -signal.SIGXFSZ or (exit_code != 0 and "File too large" in stderr):
        return f"output or file size limit ({limits.file_bytes} bytes) exceeded"
    if exit_code != 0 and "MemoryError" in stderr:
        return f"memory limit ({limits.memory_bytes // (1024 * 1024)} MiB) exceeded"
    return None


def _read(path: Path, chars: int, *, tail: bool) -> str:
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    return text[-chars:] if tail else text[:chars]


def run_sandboxed(
    code: str, tools: list[dict[str, Any]], tools_url: str, limits: SandboxLimits | None = None
) -> SandboxResult:
    """Run ``code`` with one function per tool, inside the limits.

    Args:
        code: the model's Python source.
        tools: OpenAI tool objects, each exposed as a function posting to the probe.
        tools_url: ``{gateway}/r/{run}/{task}/{attempt}/tools``.
        limits: the bounds (defaults: :class:`SandboxLimits`).

    Returns:
        The :class:`SandboxResult`; never raises for anything the code does.

    Raises:
        ValueError: ``tools_url`` has no resolvable host.
    """
    limits = limits or SandboxLimits()
    url, host, port = pinned_tools_url(tools_url)
    prelude = prelude_source(tools, url, host, port, limits.rlimits(), http_timeout=limits.wall_s)
    with tempfile.TemporaryDirectory(prefix="probegate-code-") as workdir:
        source, out, err = Path(workdir, ".code"), Path(workdir, ".stdout"), Path(workdir, ".stderr")
        source.write_text(code, encoding="utf-8")
        with source.open("rb") as stdin, out.open("wb") as stdout, err.open("wb") as stderr:
            exit_code = run_in_session(
                [sys.executable, "-I", "-S", "-X", "utf8", "-c", prelude], (stdin, stdout, stderr),
                workdir, limits.wall_s)
        error_text = _read(err, limits.output_chars, tail=True)
        reason = stop_reason(exit_code, error_text, limits)
        if BLOCKED_MARK in error_text:
            error_text = error_text.rsplit(BLOCKED_MARK, 1)[0].rstrip()
        return SandboxResult(_read(out, limits.output_chars, tail=False), error_text, exit_code, reason)


def run_in_session(argv: list[str], files: tuple[IO[bytes], IO[bytes], IO[bytes]], cwd: str,
                      wall_s: float) -> int | None:
    """Run ``argv`` as the leader of a new session; its exit status, ``None`` on timeout.

    The whole process group is killed before the leader is reaped (a zombie still
    holds its group id, so the id cannot have been reused): nothing the code
    started outlives the run, even for root, whom ``RLIMIT_NPROC`` does not bind.
    """
    stdin, stdout, stderr = files
    proc = subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd, env={},
                            start_new_session=True)
    try:
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
