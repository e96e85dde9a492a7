"""The intercept proxy never forwards to an unmapped host: HTTP and HTTPS get the 403, and a
real listener on that host and port sees no connection at all.

127.0.0.2 is loopback on Linux but not in the proxy's pass-through list (which names
127.0.0.1, localhost and ::1), so it stands for any unmapped host the test can
watch. A control request to the same listener through 127.0.0.1 (passed through by
design) shows the witness would have seen a forwarded request.
"""

from __future__ import annotations

import socket
import ssl
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

with warnings.catch_warnings():  # mitmproxy's default addons import ldap3 -> pyasn1 (a DeprecationWarning)
    warnings.simplefilter("ignore", DeprecationWarning)
    import mitmproxy.addons.proxyauth  # noqa: F401

from probegate.probes.intercept import InProcessBackend, InterceptProxy
from probegate.store import open_store
from probegate.store.writer import CaptureWriter
from probegate.probes.service import ProbeService
from probegate.probes.store import read_probe_calls

EXAMPLE = Path(__file__).resolve().parents[2] / "probes" / "mappings" / "example.yaml"
UNMAPPED = "127.0.0.2"


class Server:
    """A minimal HTTP server on ``host`` that counts the connections it accepted."""

    def __init__(self, host: str) -> None:
        self.sock = socket.create_server((host, 0))
        self.port = int(self.sock.getsockname()[1])
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\nconnection: close\r\n\r\nreached")

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self.sock.close()
        self._thread.join(5)


@pytest.fixture(scope="module")
def confdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mitmproxy CA for the module (making one takes a while)."""
    return tmp_path_factory.mktemp("mitmproxy")


@pytest.fixture
def proxy(confdir: Path, sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[InterceptProxy, CaptureWriter]]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                 "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    engine = open_store(sqlite_url)
    writer = CaptureWriter(engine).start()
    running = InterceptProxy(EXAMPLE, InProcessBackend(ProbeService(writer)), port=0, confdir=confdir).start()
    yield running, writer
    running.stop()
    writer.close()
    engine.dispose()


@pytest.fixture
def unmapped_server() -> Iterator[Server]:
    server = Server(UNMAPPED)
    yield server
    server.close()


def client(proxy: InterceptProxy) -> httpx.Client:
    verify = ssl.create_default_context(cafile=str(proxy.ca_path))
    return httpx.Client(proxy=proxy.proxy_url("sec-run", "t1"), verify=verify, timeout=30)


@pytest.mark.parametrize("scheme", ["http", "https"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_an_unmapped_host_gets_a_403_and_no_connection(proxy, unmapped_server: Server, scheme: str, method: str) -> None:
    running, writer = proxy
    with client(running) as http:
        response = http.request(method, f"{scheme}://{UNMAPPED}:{unmapped_server.port}/v1/send", json={"to": "x"})
    assert response.status_code == 403
    assert response.json() == {"error": "not_mapped", "message": (
        f"probegate intercept: host {UNMAPPED} is not mapped to a probe; the request was not sent anywhere")}
    assert unmapped_server.accepted == 0
    assert running.addon is not None and running.addon.refused == 1
    writer.flush()
    assert read_probe_calls(writer.engine, "sec-run") == []


def test_the_witness_sees_a_forwarded_request(proxy) -> None:
    # control: the same kind of server on a pass-through host is reached through the proxy
    running, _ = proxy
    server = Server("127.0.0.1")
    try:
        with client(running) as http:
            response = http.get(f"http://127.0.0.1:{server.port}/")
    finally:
        server.close()
    assert (response.status_code, response.text, server.accepted) == (200, "reached", 1)
