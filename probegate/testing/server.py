"""Running an ASGI app under a real uvicorn server on loopback, in a thread."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import uvicorn


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free right now on ``host``."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class RunningServer:
    """A uvicorn server started by :func:`serve_in_thread`."""

    server: uvicorn.Server
    thread: threading.Thread
    host: str
    port: int

    @property
    def url(self) -> str:
        """``http://host:port`` of the server."""
        return f"http://{self.host}:{self.port}"

    def stop(self, timeout: float = 30.0) -> None:
        """Ask uvicorn to shut down (lifespan shutdown runs) and wait for it."""
        self.server.should_exit = True
        self.thread.join(timeout)


def serve_in_thread(app: Any, host: str = "127.0.0.1", port: int | None = None, **options: Any) -> RunningServer:
    """Start ``app`` under uvicorn in a background thread and wait until it listens.

    Args:
        app: an ASGI application.
        host: bind address.
        port: bind port; a free one when ``None``.
        options: extra ``uvicorn.Config`` options.

    Raises:
        RuntimeError: the server did not start within 30 s.
    """
    port = port or free_port(host)
    options.setdefault("log_level", "warning")
    options.setdefault("lifespan", "on")
    config = uvicorn.Config(app, host=host, port=port, **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"server on {host}:{port} did not start")
        time.sleep(0.01)
    return RunningServer(server, thread, host, port)
