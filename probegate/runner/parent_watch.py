"""Run a Python module as a child process that exits when its parent is gone.

``python -m probegate.runner.parent_watch PARENT_PID MODULE [ARG...]`` runs ``MODULE`` as
``python -m MODULE ARG...`` would, plus a daemon thread that checks once a second
whether the process is still the child of ``PARENT_PID``. When the parent dies (a
``SIGKILL``, a test timeout, a crash), the kernel hands the child to another
process, ``os.getppid()`` changes, and the child exits with code 1.

The embedded llama.cpp server runs this way, so a ``probegate run`` that is killed
does not leave a model server holding 1-2 GiB and two cores. ``prctl``'s
``PR_SET_PDEATHSIG`` would not do: it fires when the *thread* that spawned the child
ends, and the supervisor respawns the server from its own thread.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading

#: How often the child checks its parent (s).
POLL_S = 1.0
USAGE = "usage: python -m probegate.runner.parent_watch PARENT_PID MODULE [ARG...]"


def orphaned(parent_pid: int) -> bool:
    """Whether this process is no longer the child of ``parent_pid``."""
    return os.getppid() != parent_pid


def watch(parent_pid: int, poll_s: float = POLL_S) -> threading.Thread:
    """Start the daemon thread that ends this process (exit code 1) once orphaned."""

    def run() -> None:
        stop = threading.Event()
        while not stop.wait(poll_s):
            if orphaned(parent_pid):
                os._exit(1)  # no cleanup to wait for: the parent that wanted the output is gone

    thread = threading.Thread(target=run, name="probegate-parent-watch", daemon=True)
    thread.start()
    return thread


def main(argv: list[str]) -> None:
    """Parse ``PARENT_PID MODULE [ARG...]``, start the watch, run the module as ``__main__``."""
    if len(argv) < 2 or not argv[0].isdigit():
        sys.stderr.write(USAGE + "\n")
        raise SystemExit(2)
    parent_pid, module, args = int(argv[0]), argv[1], argv[2:]
    if orphaned(parent_pid):  # the parent died before we started
        raise SystemExit(1)
    watch(parent_pid)
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
