"""Starting a command under test as a terminal would, whatever the test runner's signals."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """``preexec_fn`` for :class:`subprocess.Popen`: the child starts with SIGINT at its default.

    A background job of a non-interactive shell (a CI runner, say) runs with SIGINT
    ignored, children inherit that, and Python then never raises ``KeyboardInterrupt``,
    so a test that sends Ctrl-C would wait for nothing.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
