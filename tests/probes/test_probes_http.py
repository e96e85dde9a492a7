"""The probes' HTTP API, mounted in a real gateway on loopback (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from probegate.probes.service import ProbeService
from probegate.probes.store import read_probe_calls
from probegate.probes.tool import SubAgentRequest


@pytest.fixture
def client(gateway: Any) -> Any:
    with httpx.Client(base_url=gateway.url, timeout=30) as c:
        yield c


def test_both_prefix_forms_reach_the_probes(gateway: Any, client: httpx.Client) -> None:
    with_attempt = client.post("/r/run1/t1/4/tools/get_weather", json={"city": "Berlin"})
    without = client.post("/r/run1/t1/tools/get_weather", json={"city": "Hamburg"})
    assert with_attempt.status_code == 200 and with_attempt.json()["city"] == "Berlin"
    assert without.status_code == 200 and without.json()["city"] == "Hamburg"
    gateway.flush()
    rows = read_probe_calls(gateway.engine, "run1")
    assert [(r.task_id, r.attempt, r.seq, r.args) for r in rows] == [
        ("t1", 0, 1, {"city": "Hamburg"}), ("t1", 4, 1, {"city": "Berlin"}),
    ]


def test_catalogue_before_and_after_reset(client: httpx.Client) -> None:
    everything = client.get("/r/run1/t1/0/tools").json()["tools"]
    assert len(everything) >= 16 and everything[0]["type"] == "function"
    reset = client.post("/probegate/attempts/reset", json={"run": "run1", "task": "t1", "attempt": 0,
                                                           "tools": ["send_email", "find_contact"], "feedback": "plain"})
    assert reset.status_code == 200 and reset.json()["ok"] is True
    assert [t["function"]["name"] for t in reset.json()["tools"]] == ["send_email", "find_contact"]
    offered = client.get("/r/run1/t1/tools").json()["tools"]
    assert [t["function"]["name"] for t in offered] == ["send_email", "find_contact"]


@pytest.mark.parametrize(
    ("tool", "payload", "status", "error"),
    [
        ("get_weather", b'{"city": "Atlantis"}', 400, "not_found"),
        ("get_weather", b'{"town": "Berlin"}', 422, "invalid_params"),
        ("get_weather", b"not json", 422, "invalid_params"),
        ("teleport", b"{}", 404, "unknown_tool"),
    ],
)
def test_status_codes(client: httpx.Client, tool: str, payload: bytes, status: int, error: str) -> None:
    response = client.post(f"/r/run1/t1/0/tools/{tool}", content=payload)
    assert response.status_code == status
    assert response.json()["error"] == error


def test_blocked_call_body_follows_the_contract(client: httpx.Client) -> None:
    response = client.post("/r/run1/t1/0/tools/send_email", json={"to": "bob", "subject": "hi", "colour": "red"})
    assert response.status_code == 422
    payload = response.json()
    assert payload["missing"] == ["body"] and payload["unknown"] == ["colour"]
    assert payload["invalid"] == {"to": "not an email address"}
    assert "name@example.com" in payload["hint"]


def test_bare_tools_route_is_attributed_by_headers(gateway: Any, client: httpx.Client) -> None:
    response = client.post("/tools/get_time", json={"city": "London"},
                           headers={"x-probegate-run": "hdr-run", "x-probegate-task": "hdr-task"})
    assert response.json()["time"] == "08:30"
    gateway.flush()
    assert [r.task_id for r in read_probe_calls(gateway.engine, "hdr-run")] == ["hdr-task"]


def test_via_header_marks_intercepted_calls(gateway: Any, client: httpx.Client) -> None:
    client.post("/r/run1/t1/0/tools/get_time", json={"city": "Paris"}, headers={"x-probegate-via": "mitm"})
    gateway.flush()
    assert [r.via for r in read_probe_calls(gateway.engine, "run1")] == ["mitm"]


def test_state_and_verify_endpoints(gateway: Any, client: httpx.Client) -> None:
    client.post("/probegate/attempts/reset", json={"run": "run1", "task": "t1", "attempt": 1})
    sent = client.post("/r/run1/t1/1/tools/send_email",
                       json={"to": "priya.nair@initech.example", "subject": "Quote for 40 chairs", "body": "3,160 EUR"})
    assert sent.status_code == 200
    state = client.get("/probegate/attempts/run1/t1/1/state").json()
    assert state["world"] == "default" and state["state"]["outbox"]["OUT-1"]["to"] == "priya.nair@initech.example"
    checks = [
        {"check": "email_sent", "to": "Priya.Nair@initech.example", "subject_contains": "quote"},
        {"check": "no_order_placed"},
        {"check": "email_sent", "to": "someone@else.example"},
    ]
    results = client.post("/probegate/verify", json={"run": "run1", "task": "t1", "attempt": 1, "checks": checks}).json()
    assert [(r["check"], r["ok"]) for r in results["results"]] == [
        ("email_sent", True), ("no_order_placed", True), ("email_sent", False)]
    assert all(r["evidence"] for r in results["results"])


def test_state_and_verify_fall_back_to_the_store(gateway: Any, gateway_factory: Any, client: httpx.Client) -> None:
    client.post("/r/run1/t1/0/tools/create_reminder", json={"title": "Call Lea", "date": "2025-03-17", "time": "10:00"})
    gateway.flush()
    other = gateway_factory(gateway.url)  # a second gateway on the same store, without live attempts
    with httpx.Client(base_url=other.url) as fresh:
        state = fresh.get("/probegate/attempts/run1/t1/0/state")
        assert state.status_code == 200 and "REM-2" in state.json()["state"]["reminders"]
        verdict = fresh.post("/probegate/verify", json={"run": "run1", "task": "t1", "attempt": 0,
                                                        "checks": [{"check": "reminder_exists", "title_contains": "lea"}]})
        assert verdict.json()["results"][0]["ok"] is True
        missing = fresh.get("/probegate/attempts/run1/nothing/0/state")
        assert missing.status_code == 404 and missing.json()["error"] == "unknown_attempt"


@pytest.mark.parametrize(
    ("payload", "status"),
    [
        ({"run": "r", "task": "t", "world": "nowhere"}, 400),
        ({"run": "r", "task": "t", "tools": ["fly"]}, 400),
        ({"run": "r", "task": "t", "feedback": "loud"}, 422),
        ({"run": "r", "task": "t", "world_patch": {"products": {"SKU-1001": {"stock": {"Berlin": -5}}}}}, 400),
    ],
)
def test_bad_resets(client: httpx.Client, payload: dict[str, Any], status: int) -> None:
    assert client.post("/probegate/attempts/reset", json=payload).status_code == status


def test_bad_check_is_a_400(client: httpx.Client) -> None:
    response = client.post("/probegate/verify", json={"run": "r", "task": "t", "checks": [{"check": "teleported"}]})
    assert response.status_code == 400 and response.json()["error"] == "bad_check"


def test_delegate_sub_agent_calls_back_over_http_without_deadlock(gateway: Any, client: httpx.Client) -> None:
    service: ProbeService = gateway.server.server.config.app.api.state.probes
    base = gateway.url

    def subagent(request: SubAgentRequest) -> str:
        url = f"{base}/r/{request.run}/{request.task}/{request.attempt}/tools/check_stock"
        stock = httpx.post(url, json={"sku": "SKU-1006"}, timeout=30).json()
        return f"{stock['name']}: {stock['in_stock']} in stock"

    service.subagent = subagent
    response = client.post("/r/run1/t1/0/tools/delegate", json={"task": "How much TN-420 toner is left?"})
    assert response.status_code == 200
    assert response.json()["result"] == "Black Toner Cartridge TN-420: 8 in stock"
    gateway.flush()
    assert [(r.seq, r.tool) for r in read_probe_calls(gateway.engine, "run1")] == [(1, "delegate"), (2, "check_stock")]
