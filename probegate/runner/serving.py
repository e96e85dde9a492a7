"""Serving an ASGI app under uvicorn in a background thread (the runner's gateway).

The same job as :func:`probegate.testing.serve_in_thread`, kept here so the
runner does not depend on a testing module, and with the port chosen before the
app is built (the ``delegate`` probe's sub-agent must know the gateway's URL).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import uvicorn


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class BackgroundServer:
    """uvicorn serving ``app`` on ``host:port`` in a daemon thread.

    Args:
        app: an ASGI application.
        host: bind address (loopback by default).
        port: bind port.
        options: extra ``uvicorn.Config`` options.
    """

    def __init__(self, app: Any, host: str, port: int, **options: Any) -> None:
        options.setdefault("log_level", "warning")
        options.setdefault("lifespan", "on")
        self.host, self.port = host, port
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, **options))
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve()), daemon=True)

    @property
    def url(self) -> str:
        """``http://host:port``."""
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 30.0) -> BackgroundServer:
        """Start and wait until the server listens.

        Raises:
            RuntimeError: it did not start within ``timeout`` seconds.
        """
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the gateway on {self.host}:{self.port} did not start")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Shut down (the app's lifespan shutdown runs) and wait."""
        self.server.should_exit = True
        self.thread.join(timeout)
