"""``probegate serve`` as a real subprocess, the way a user starts it (for tests)."""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import IO

import httpx

from probegate.testing.server import free_port


@dataclass
class ServeProcess:
    """A running ``probegate serve`` process; its stderr goes to a file (a pipe nobody
    reads fills up and blocks the server's logging)."""

    proc: subprocess.Popen[bytes]
    port: int
    log: IO[bytes]

    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def terminate(self, timeout: float = 60) -> int:
        """SIGTERM (graceful: the capture queue drains); returns the exit status."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no drain."""
        self.proc.kill()
        self.proc.wait(30)

    def close(self) -> None:
        """Kill the server if it still runs and close its log."""
        if self.proc.poll() is None:
            self.kill()
        self.log.close()

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def start_serve(args: list[str], port: int | None = None) -> ServeProcess:
    """Start ``python -m probegate serve --port PORT ARGS`` and wait for its health route.

    Raises:
        AssertionError: it did not answer within 30 s (its stderr is in the message).
    """
    port = port or free_port()
    # a file, not a pipe: a pipe nobody reads fills up and blocks the server's logging
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen([sys.executable, "-m", "probegate", "serve", "--port", str(port), *args],
                            stdout=subprocess.DEVNULL, stderr=log)
    server = ServeProcess(proc, port, log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{server.url}/probegate/health", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError(server.stderr()[-3000:])
