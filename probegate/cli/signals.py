"""Signals for the long-running commands (``run``, ``intercept``)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Treat ``SIGTERM`` like Ctrl-C while the block runs (``KeyboardInterrupt`` in the main thread).

    A CI timeout, ``kill`` or ``docker stop`` sends SIGTERM; a background job of a
    non-interactive shell cannot get Ctrl-C at all (it inherits SIGINT ignored). Without
    this, ``probegate run`` would end with the run left ``running`` and unscored, and
    ``probegate intercept`` without flushing its probe log. Only the main thread can
    install a handler; elsewhere the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
