"""Helpers for reliability tests: ``probegate serve`` as a real subprocess."""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import httpx
import pytest

from probegate.testing import free_port


@dataclass
class ServeProcess:
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
        return f"http://127.0.0.1:{self.port}"

    def terminate(self, timeout: float = 60) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(30)


def start_serve(args: list[str], port: int | None = None) -> ServeProcess:
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


@pytest.fixture
def serve() -> Iterator:
    started: list[ServeProcess] = []

    def start(args: list[str], port: int | None = None) -> ServeProcess:
        process = start_serve(args, port)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.proc.poll() is None:
            process.kill()
        process.log.close()
