"""Black-box mode end to end: a plain httpx client, the real mitmproxy, the probes.

The client is configured only with the proxy URL (run and task as credentials)
and mitmproxy's CA, exactly as an unmodified agent would be.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import Engine

from probegate.probes.intercept import HttpBackend, InProcessBackend, InterceptProxy
from probegate.errors import UsageError
from probegate.store.writer import CaptureWriter
from probegate.testing import Reply, ScriptedUpstream, serve_in_thread
from probegate.probes.service import ProbeService
from probegate.probes.store import read_probe_calls

EXAMPLE = Path(__file__).resolve().parents[2] / "probes" / "mappings" / "example.yaml"


class Rig:
    """A running intercept proxy with in-process probes writing to a real store."""

    def __init__(self, engine: Engine, confdir: Path) -> None:
        self.engine = engine
        self.writer = CaptureWriter(engine).start()
        self.service = ProbeService(self.writer)
        self.proxy = InterceptProxy(EXAMPLE, InProcessBackend(self.service), port=0, confdir=confdir).start()

    def client(self, run: str | None = "bb-run", task: str = "bb-task", attempt: int | None = None, **kw: Any) -> httpx.Client:
        proxy = self.proxy.proxy_url(run, task, attempt) if run else self.proxy.url
        verify = ssl.create_default_context(cafile=str(self.proxy.ca_path))
        kw.setdefault("timeout", 30)
        return httpx.Client(proxy=proxy, verify=verify, **kw)

    def calls(self, run: str = "bb-run") -> list[Any]:
        self.writer.flush()
        return read_probe_calls(self.engine, run)

    def close(self) -> None:
        self.proxy.stop()
        self.writer.close()


@pytest.fixture
def rig(engine: Engine, confdir: Path, no_proxy_env: None) -> Iterator[Rig]:
    running = Rig(engine, confdir)
    yield running
    running.close()


def test_https_to_a_mapped_host_is_answered_by_the_probe_and_logged(rig: Rig) -> None:
    assert rig.proxy.ca_path.name == "mitmproxy-ca-cert.pem" and rig.proxy.ca_path.is_file()
    with rig.client(attempt=2) as client:
        weather = client.get("https://api.weather.example/v1/current", params={"city": "Berlin"})
        sent = client.post("https://api.mail.example/v1/messages",
                           json={"to": "jonas.becker@globex.example", "subject": "ORD-5002", "body": "ETA Tuesday"})
        order = client.get("https://api.shop.example/v1/orders/ORD-5002")
    assert weather.status_code == 200 and weather.json()["condition"] == "cloudy"
    assert sent.status_code == 200 and sent.json()["message_id"] == "OUT-1"
    assert order.json()["tracking_number"] == "TRK-88002"
    rows = rig.calls()
    assert [(r.task_id, r.attempt, r.seq, r.tool, r.status, r.via) for r in rows] == [
        ("bb-task", 2, 1, "get_weather", "ok", "mitm"),
        ("bb-task", 2, 2, "send_email", "ok", "mitm"),
        ("bb-task", 2, 3, "get_order", "ok", "mitm"),
    ]
    assert rows[0].args == {"city": "Berlin"}
    assert rig.service.verify("bb-run", "bb-task", 2, [{"check": "email_sent", "to": "jonas.becker@globex.example"}])[0].ok


def test_invalid_arguments_are_blocked_with_the_structured_error(rig: Rig) -> None:
    with rig.client() as client:
        response = client.get("https://api.shop.example/v1/products/SKU-1001/price", params={"quantity": "lots"})
    assert response.status_code == 422
    assert response.json()["invalid"] == {"quantity": "expected integer, got string"}
    assert [r.status for r in rig.calls()] == ["blocked"]


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("https://www.example.com/", "host www.example.com is not mapped"),
        ("http://api.unknown.example/v1/anything", "host api.unknown.example is not mapped"),
        ("https://api.weather.example/v2/current?city=Berlin", "GET /v2/current on api.weather.example is not mapped"),
    ],
)
def test_unmapped_requests_get_a_403_and_never_leave(rig: Rig, url: str, fragment: str) -> None:
    with rig.client() as client:
        response = client.get(url)
    assert response.status_code == 403
    assert response.json()["error"] == "not_mapped" and fragment in response.json()["message"]
    assert rig.calls() == []
    assert rig.proxy.addon is not None and rig.proxy.addon.refused == 1


def test_missing_credentials_are_logged_under_adhoc(rig: Rig) -> None:
    with rig.client(run=None) as client:
        assert client.get("http://api.weather.example/v1/time?city=Paris").json()["time"] == "09:30"
    assert [(r.task_id, r.tool) for r in rig.calls("adhoc")] == [("-", "get_time")]


def test_malformed_credentials_get_a_407(rig: Rig) -> None:
    with httpx.Client(proxy=f"http://bad%20run:task@127.0.0.1:{rig.proxy.port}", timeout=30) as client:
        response = client.get("http://api.weather.example/v1/time?city=Paris")
    assert response.status_code == 407 and "RUN:TASK" in response.json()["message"]
    assert rig.calls() == []


def test_loopback_passes_through_and_streams_unbuffered(rig: Rig) -> None:
    gate = threading.Event()
    events = [{"choices": [{"delta": {"content": "Hel"}}]}, {"choices": [{"delta": {"content": "lo"}}]}]
    upstream = ScriptedUpstream([Reply.sse(events, gate=gate)])
    server = serve_in_thread(upstream)
    try:
        with rig.client(timeout=httpx.Timeout(30, read=15)) as client:
            with client.stream("POST", f"{server.url}/v1/chat/completions", json={"stream": True}) as response:
                chunks = response.iter_raw()
                first = next(chunks)  # arrives while the upstream still holds the rest
                gate.set()
                rest = b"".join(chunks)
    finally:
        server.stop()
    assert response.headers["content-type"].startswith("text/event-stream")
    assert b"Hel" in first and b"lo" in rest and rest.endswith(b"data: [DONE]\n\n")
    assert "proxy-authorization" not in upstream.requests[0].headers, "credentials are not forwarded"
    assert rig.calls() == [], "pass-through traffic is not a probe call"


def test_http_backend_reaches_probes_in_a_gateway(gateway: Any, confdir: Path, no_proxy_env: None) -> None:
    proxy = InterceptProxy(EXAMPLE, HttpBackend(gateway.url), port=0, confdir=confdir).start()
    try:
        verify = ssl.create_default_context(cafile=str(proxy.ca_path))
        with httpx.Client(proxy=proxy.proxy_url("gw-run", "t7", 1), verify=verify, timeout=30) as client:
            response = client.post("https://api.crm.example/v1/tickets/TCK-3003/comments",
                                   content=json.dumps({"comment": "Escalated"}))
    finally:
        proxy.stop()
    assert response.status_code == 200 and response.json()["comment_count"] == 1
    gateway.flush()
    rows = read_probe_calls(gateway.engine, "gw-run")
    assert [(r.task_id, r.attempt, r.tool, r.via) for r in rows] == [("t7", 1, "add_ticket_comment", "mitm")]


def test_unreachable_probe_server_is_a_502(confdir: Path, no_proxy_env: None) -> None:
    proxy = InterceptProxy(EXAMPLE, HttpBackend("http://127.0.0.1:9"), port=0, confdir=confdir).start()
    try:
        with httpx.Client(proxy=proxy.url, timeout=30) as client:
            response = client.get("http://api.weather.example/v1/current?city=Berlin")
    finally:
        proxy.stop()
    assert response.status_code == 502 and response.json()["error"] == "probes_unreachable"


def test_a_bad_mapping_refuses_to_start(tmp_path: Path, confdir: Path) -> None:
    bad = tmp_path / "map.yaml"
    bad.write_text("routes: [{host: h, path: /p, tool: fly}]\n")
    with pytest.raises(UsageError, match="unknown tool 'fly'"):
        InterceptProxy(bad, InProcessBackend(ProbeService()), port=0, confdir=confdir).start()
