"""The embedded server's supervisor: restart after a crash, give up at once on SIGILL.

The server here is a small HTTP process that answers ``GET /v1/models`` and kills
itself with the given signal on the first ``POST``, as llama.cpp does on a request that
crashes it. A SIGSEGV (seen in llama-cpp-python's grammar path) is restarted; a SIGILL
(a build for CPU instructions the machine lacks) would recur on every request, so the
run must end with a message that says so.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import httpx
import pytest

from probegate.runner.embedded import EmbeddedServer, _spawn, _wait_ready
from probegate.errors import UpstreamError
from probegate.testing.server import free_port

DYING_SERVER = """
import http.server, json, os, resource, signal, sys

resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file from the deliberate crash

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": "m"}]}).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        os.kill(os.getpid(), int(sys.argv[2]))

    def log_message(self, *args):
        pass

http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def _dying_server(tmp_path: Path, sig: signal.Signals) -> EmbeddedServer:
    port = free_port()
    script = tmp_path / "server.py"
    script.write_text(DYING_SERVER)
    command = [sys.executable, str(script), str(port), str(int(sig))]
    log = tmp_path / "server.log"
    server = EmbeddedServer(f"http://127.0.0.1:{port}", "m", tmp_path / "m.gguf", _spawn(command, log), log, command)
    _wait_ready(server, 30)
    server.supervise(poll_s=0.05)
    return server


def _crash(server: EmbeddedServer) -> None:
    with pytest.raises(httpx.TransportError):
        httpx.post(f"{server.url}/v1/chat/completions", json={}, timeout=10)


def test_a_segfault_is_restarted(tmp_path: Path) -> None:
    server = _dying_server(tmp_path, signal.SIGSEGV)
    try:
        first = server.process.pid
        _crash(server)
        time.sleep(0.3)
        assert server.wait_until_ready(30)
        assert server.crashes == [-signal.SIGSEGV]
        assert server.process.pid != first and server.process.poll() is None
        assert server.failure is None
    finally:
        server.stop()


def test_sigill_ends_the_run_with_a_message_that_says_what_to_do(tmp_path: Path) -> None:
    server = _dying_server(tmp_path, signal.SIGILL)
    try:
        _crash(server)
        deadline = time.monotonic() + 10
        while server.failure is None and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(UpstreamError) as caught:
            server.wait_until_ready(30)
        message = str(caught.value)
        assert "SIGILL (Illegal instruction)" in message
        assert "GGML_NATIVE=OFF" in message and str(server.log_path) in message
        assert server.crashes == [-signal.SIGILL]
        assert server.process.poll() == -signal.SIGILL, "a SIGILL is not restarted"
    finally:
        server.stop()


def test_a_restart_that_does_not_come_up_is_a_failure_too(tmp_path: Path) -> None:
    server = _dying_server(tmp_path, signal.SIGSEGV)
    try:
        server.command = [sys.executable, "-c", "raise SystemExit(3)"]  # the restart exits at once
        _crash(server)
        with pytest.raises(UpstreamError, match="did not come back after a crash: .*exited with code 3"):
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                server.wait_until_ready(0.2)
    finally:
        server.stop()
