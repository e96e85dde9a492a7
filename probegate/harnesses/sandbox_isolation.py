"""The code sandbox's first layer: operating-system isolation with bubblewrap.

Model-written code runs under ``bwrap`` (Debian's ``bubblewrap``, the sandbox of
Flatpak) with:

- new user, PID, network, IPC, UTS, cgroup and mount namespaces (``--unshare-all
  --unshare-user``), no capabilities (``--cap-drop ALL``), no further user
  namespaces (``--disable-userns``), a new session (no ``TIOCSTI`` into the
  harness's terminal), and ``--die-with-parent``: when the harness kills bwrap,
  the PID namespace's init dies and the kernel kills every process in it, ``setsid``
  or not;
- a read-only root that holds only ``/usr`` (with the ``/bin``, ``/lib`` ...
  links of a merged-``/usr`` system) and the interpreter's own prefix: no ``/etc``,
  ``/home``, ``/root``, ``/proc``, ``/sys``, ``/run`` or ``/var``; a ``/dev`` of the
  usual null, zero, random and tty nodes, read-only;
- one writable ``tmpfs`` at :data:`WORK_DIR` (the working directory) whose total
  size is capped (``--size``);
- a seccomp filter (:data:`DENIED_SYSCALLS`, built with libseccomp through
  ``pyseccomp``) that refuses with ``EPERM`` every way to create a process or
  thread, to trace one, to enter or make namespaces, to mount, to set the clock,
  and a few kernel interfaces the code has no use for (``bpf``, ``io_uring``,
  ``userfaultfd``, ``perf_event_open``, keyrings, ``memfd_create``).

Inside, the prelude sets the resource limits (CPU, address space, file size,
open files, processes) before any agent code runs. Run as root, the sandbox's
user maps to root outside, and Linux does not apply ``RLIMIT_NPROC`` to root:
the seccomp filter is what keeps the process count at one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator

#: The sandbox's working directory: its only writable place (a size-capped tmpfs).
WORK_DIR = "/tmp"
#: The user and group the code runs as inside its user namespace ("nobody").
SANDBOX_ID = "65534"
#: System calls the seccomp filter refuses (``EPERM``); other architectures' names are skipped.
DENIED_SYSCALLS = (
    "fork", "vfork", "clone", "clone3", "ptrace", "process_vm_readv", "process_vm_writev", "unshare", "setns",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig",
    "clock_settime", "clock_adjtime", "settimeofday", "adjtimex", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl", "add_key", "request_key", "memfd_create",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff",
    "acct", "quotactl", "personality", "syslog", "sethostname", "setdomainname",
)
#: The one line shown when bubblewrap is missing.
BWRAP_MISSING = (
    "the code harness runs model-written code under bubblewrap, and `bwrap` is not on PATH: "
    "install it (apt-get install bubblewrap), or pass --unsafe-no-sandbox to run that code without OS isolation"
)


class SandboxUnavailable(RuntimeError):
    """bubblewrap (or libseccomp) is missing or cannot start a sandbox here; the message says what to do."""


def find_bwrap() -> str:
    """The ``bwrap`` executable on PATH.

    Raises:
        SandboxUnavailable: it is not installed (:data:`BWRAP_MISSING`).
    """
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailable(BWRAP_MISSING)
    return path


def interpreter() -> str:
    """The Python that runs the code: the harness's own interpreter, symlinks resolved."""
    return os.path.realpath(sys.executable)


def mounts(python: str) -> list[tuple[str, str, str]]:
    """``(option, source, destination)`` triples that make ``python`` runnable read-only.

    ``/usr`` is bound; each of ``/bin``, ``/sbin``, ``/lib*`` is recreated as the
    link it is (merged ``/usr``) or bound when it is a directory; the interpreter's
    prefix is bound when it lies outside ``/usr`` (pyenv, a tool-managed Python).
    """
    binds = [("--ro-bind", "/usr", "/usr")]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            binds.append(("--symlink", os.readlink(top), top))
        elif os.path.isdir(top):
            binds.append(("--ro-bind", top, top))
    for prefix in {os.path.realpath(sys.base_prefix), os.path.dirname(os.path.dirname(python))}:
        if prefix != "/" and not any(prefix == b[2] or prefix.startswith(b[2] + "/") for b in binds):
            binds.append(("--ro-bind", prefix, prefix))
    return sorted(binds, key=lambda b: b[2])


def bwrap_argv(bwrap: str, binds: list[tuple[str, str, str]], disk_bytes: int, seccomp_fd: int,
               command: list[str]) -> list[str]:
    """The bubblewrap command line around ``command`` (pure).

    Args:
        bwrap: the executable.
        binds: from :func:`mounts`.
        disk_bytes: size cap of the writable tmpfs at :data:`WORK_DIR`.
        seccomp_fd: an inherited descriptor holding the compiled filter.
        command: the program and its arguments, as seen inside.
    """
    argv = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
            "--cap-drop", "ALL", "--uid", SANDBOX_ID, "--gid", SANDBOX_ID, "--hostname", "sandbox", "--clearenv"]
    for option, source, destination in binds:
        argv += [option, source, destination]
    argv += ["--dev", "/dev", "--size", str(disk_bytes), "--tmpfs", WORK_DIR,
             "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", WORK_DIR, "--seccomp", str(seccomp_fd)]
    return [*argv, "--", *command]


@contextlib.contextmanager
def seccomp_filter() -> Iterator[int]:
    """A descriptor of the compiled seccomp filter (a temporary file), open for the block.

    Raises:
        SandboxUnavailable: libseccomp (``pyseccomp``) cannot build the filter here.
    """
    try:
        import pyseccomp
    except (ImportError, RuntimeError) as exc:  # RuntimeError: pyseccomp found no libseccomp.so
        raise SandboxUnavailable(f"cannot build the sandbox's seccomp filter: {exc} "
                                 "(install libseccomp2 and pyseccomp)") from exc
    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            rules.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
        except OSError:  # EINVAL: not a system call on this architecture
            continue
    with tempfile.TemporaryFile() as compiled:
        rules.export_bpf(compiled)
        compiled.seek(0)
        yield compiled.fileno()


@contextlib.contextmanager
def isolated_command(command: list[str], disk_bytes: int) -> Iterator[tuple[list[str], tuple[int, ...]]]:
    """``(argv, descriptors to pass)`` that run ``command`` in the sandbox, valid for the block.

    Raises:
        SandboxUnavailable: bubblewrap or libseccomp is missing.
    """
    bwrap = find_bwrap()
    with seccomp_filter() as seccomp_fd:
        yield bwrap_argv(bwrap, mounts(command[0]), disk_bytes, seccomp_fd, command), (seccomp_fd,)


def check_isolation(timeout_s: float = 30.0) -> None:
    """Start one empty sandbox, so a machine where bubblewrap cannot work fails before a run.

    Raises:
        SandboxUnavailable: bwrap is missing, or it failed (its own message is quoted).
    """
    with isolated_command([interpreter(), "-I", "-S", "-c", "pass"], 1024 * 1024) as (argv, fds):
        try:
            done = subprocess.run(argv, pass_fds=fds, capture_output=True, timeout=timeout_s, env={})
        except subprocess.TimeoutExpired as exc:
            raise SandboxUnavailable(f"bubblewrap did not start a sandbox within {timeout_s:g} s") from exc
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SandboxUnavailable(
            f"bubblewrap cannot start a sandbox here ({detail[-1] if detail else f'exit {done.returncode}'}): "
            "fix that, or pass --unsafe-no-sandbox to run model-written code without OS isolation")
