"""The probes served alone (``probegate probes serve``), on loopback, both stores."""

from __future__ import annotations

import httpx
from sqlalchemy.engine import Engine

from probegate.store.writer import CaptureWriter
from probegate.testing import serve_in_thread
from probegate.probes.app import create_probe_app
from probegate.probes.store import read_probe_calls, read_world_state


def test_probe_app_serves_logs_and_drains_on_shutdown(engine: Engine) -> None:
    server = serve_in_thread(create_probe_app(engine, feedback="plain"))
    try:
        with httpx.Client(base_url=server.url) as client:
            assert client.get("/probegate/health").json()["status"] == "ok"
            assert len(client.get("/r/solo/t1/tools").json()["tools"]) >= 16
            blocked = client.post("/r/solo/t1/tools/create_ticket", json={"customer_id": "CUST-1001"})
            assert blocked.status_code == 422 and blocked.json()["hint"] == "invalid parameters for create_ticket"
            made = client.post("/r/solo/t1/tools/create_ticket", json={
                "customer_id": "CUST-1001", "subject": "Desks late", "description": "ORD-5002", "priority": "high"})
            assert made.json()["ticket_id"] == "TCK-3008"
    finally:
        server.stop()  # the app's own writer drains on shutdown
    assert [(r.tool, r.status, r.feedback) for r in read_probe_calls(engine, "solo")] == [
        ("create_ticket", "blocked", "plain"), ("create_ticket", "ok", "plain")]
    stored = read_world_state(engine, "solo", "t1", 0)
    assert stored is not None and "TCK-3008" in stored.state["tickets"]


def test_probe_app_with_a_shared_writer(engine: Engine) -> None:
    writer = CaptureWriter(engine).start()
    server = serve_in_thread(create_probe_app(engine, writer))
    try:
        httpx.post(f"{server.url}/r/solo/t2/1/tools/get_time", json={"city": "Singapore"})
    finally:
        server.stop()
    assert [r.result["time"] for r in read_probe_calls(engine, "solo", "t2", 1)] == ["16:30"]
    writer.close()


def test_probe_app_answers_mcp_too(engine: Engine) -> None:
    server = serve_in_thread(create_probe_app(engine))
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_time", "arguments": {"city": "Tokyo"}}}
    try:
        response = httpx.post(f"{server.url}/r/solo/t3/mcp", json=call, timeout=30,
                              headers={"accept": "application/json, text/event-stream"})
    finally:
        server.stop()
    assert response.status_code == 200 and '"isError":false' in response.text
    assert [(r.tool, r.door) for r in read_probe_calls(engine, "solo", "t3")] == [("get_time", "mcp")]
