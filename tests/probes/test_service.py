"""The probe service: attempts, the call log and world states in a real store (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from probegate.store.writer import CaptureWriter
from probegate.probes.service import ProbeService
from probegate.probes.store import read_probe_calls, read_world_state
from probegate.probes.tool import SubAgentRequest
from probegate.probes.worlds import WorldError


def body(**args: Any) -> bytes:
    return json.dumps(args).encode()


@pytest.fixture
def writer(engine: Engine) -> Iterator[CaptureWriter]:
    w = CaptureWriter(engine).start()
    yield w
    w.close()


def test_every_call_is_logged_in_order(engine: Engine, writer: CaptureWriter) -> None:
    service = ProbeService(writer)
    service.reset("r1", "t1", 0, tools=["get_weather", "send_email"], feedback="plain")
    service.call("r1", "t1", 0, "get_weather", body(city="Berlin"))
    service.call("r1", "t1", 0, "send_email", b'{"to": "bob"}')
    service.call("r1", "t1", 0, "get_weather", body(city="Atlantis"))
    service.call("r1", "t1", 0, "get_time", body(city="Berlin"))
    writer.flush()
    rows = read_probe_calls(engine, "r1", "t1", 0)
    assert [(r.seq, r.tool, r.status) for r in rows] == [
        (1, "get_weather", "ok"), (2, "send_email", "blocked"), (3, "get_weather", "error"), (4, "get_time", "error"),
    ]
    ok, blocked, error, unknown = rows
    assert ok.args == {"city": "Berlin"} and ok.result["condition"] == "cloudy" and ok.raw_args == '{"city": "Berlin"}'
    assert blocked.args == {"to": "bob"} and blocked.missing == ["subject", "body"]
    assert blocked.invalid == {"to": "not an email address"}
    assert blocked.result["hint"] == "invalid parameters for send_email"
    assert error.result == {"error": "not_found", "message": "unknown city 'Atlantis'"}
    assert unknown.result["error"] == "unknown_tool" and unknown.args is None
    assert all(r.feedback == "plain" and r.via == "direct" and r.latency_ms is not None and r.latency_ms >= 0 for r in rows)


def test_world_state_is_stored_on_reset_and_after_side_effects(engine: Engine, writer: CaptureWriter) -> None:
    service = ProbeService(writer)
    service.reset("r1", "t1", 2, world_patch={"products": {"SKU-1006": {"stock": {"Berlin": 1}}}})
    writer.flush()
    stored = read_world_state(engine, "r1", "t1", 2)
    assert stored is not None and stored.world == "default" and stored.state["outbox"] == {}
    assert stored.state["products"]["SKU-1006"]["stock"]["Berlin"] == 1
    service.call("r1", "t1", 2, "send_email", body(to="a@b.example", subject="s", body="b"))
    service.call("r1", "t1", 2, "get_weather", body(city="Berlin"))  # read-only: no new state
    writer.flush()
    stored = read_world_state(engine, "r1", "t1", 2)
    assert stored is not None and list(stored.state["outbox"]) == ["OUT-1"]
    assert stored.state["side_effects"] == [
        {"seq": 1, "tool": "send_email", "kind": "email", "ref": "OUT-1",
         "args": {"to": "a@b.example", "subject": "s", "body": "b"}}
    ]


def test_lazy_reset_uses_default_world_all_tools_and_service_feedback(engine: Engine, writer: CaptureWriter) -> None:
    service = ProbeService(writer, default_feedback="plain")
    outcome = service.call("r2", "t9", 5, "create_reminder", b"{}")
    assert outcome.status_code == 422 and outcome.body["hint"] == "invalid parameters for create_reminder"
    assert len(service.tools_for("r2", "t9", 5)) == len(service.tools_for("never", "reset", 0))
    writer.flush()
    stored = read_world_state(engine, "r2", "t9", 5)
    assert stored is not None and stored.world == "default"


@pytest.mark.parametrize(
    ("tool", "args", "check"),
    [
        ("send_email", {"to": "a@b.example", "subject": "s", "body": "b"}, {"check": "email_sent", "to": "a@b.example"}),
        ("create_reminder", {"title": "Pay invoice", "date": "2025-03-27", "time": "09:00"},
         {"check": "reminder_exists", "title_contains": "pay invoice"}),
        ("create_event", {"title": "Sync", "date": "2025-03-17", "start": "15:00", "end": "15:30"},
         {"check": "event_exists", "title_contains": "sync"}),
        ("create_ticket", {"customer_id": "CUST-1002", "subject": "Quote", "description": "40 chairs", "priority": "low"},
         {"check": "ticket_created", "customer": "CUST-1002"}),
        ("set_ticket_priority", {"ticket_id": "TCK-3003", "priority": "urgent"},
         {"check": "ticket_priority", "ticket": "TCK-3003", "priority": "urgent"}),
        ("add_ticket_comment", {"ticket_id": "TCK-3002", "comment": "done"}, {"check": "ticket_comment", "ticket": "TCK-3002"}),
        ("place_order", {"sku": "SKU-1012", "quantity": 13}, {"check": "order_placed", "sku": "SKU-1012", "quantity": 13}),
        ("cancel_order", {"order_id": "ORD-5003", "reason": "r"}, {"check": "order_cancelled", "order": "ORD-5003"}),
        ("write_file", {"path": "/notes/a.md", "content": "hello"}, {"check": "file_contains", "path": "/notes/a.md", "contains": "hello"}),
    ],
)
def test_side_effects_are_verifiable_and_reset_between_attempts(
    service: ProbeService, tool: str, args: dict[str, Any], check: dict[str, Any]
) -> None:
    assert not service.verify("r1", "t1", 0, [check])[0].ok
    assert service.call("r1", "t1", 0, tool, json.dumps(args).encode()).status_code == 200
    assert service.verify("r1", "t1", 0, [check])[0].ok
    service.reset("r1", "t1", 1)
    assert not service.verify("r1", "t1", 1, [check])[0].ok, "a new attempt starts from the fixture"
    assert service.verify("r1", "t1", 0, [check])[0].ok, "the other attempt keeps its world"
    service.reset("r1", "t1", 0)
    assert not service.verify("r1", "t1", 0, [check])[0].ok, "a reset restores the fixture"


def test_offered_tools_limit_calls(service: ProbeService) -> None:
    tools = service.reset("r1", "t1", 0, tools=["get_weather"])
    assert [t["function"]["name"] for t in tools] == ["get_weather"]
    outcome = service.call("r1", "t1", 0, "send_email", body(to="a@b.example", subject="s", body="b"))
    assert outcome.status_code == 404 and outcome.body["known"] == ["get_weather"]
    assert outcome.probe_call_row.status == "error"


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"world": "nowhere"}, WorldError, "no world"),
        ({"tools": ["get_weather", "fly"]}, ValueError, "unknown tool"),
        ({"feedback": "verbose"}, ValueError, "feedback must be"),
        ({"world_patch": {"faults": [{"tool": "fly"}]}}, WorldError, "unknown tool"),
    ],
)
def test_reset_refuses_bad_settings(service: ProbeService, kwargs: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        service.reset("r1", "t1", 0, **kwargs)


def test_injected_fault_then_recovery(service: ProbeService) -> None:
    fault = {"tool": "get_weather", "when": {"city": "Berlin"}, "error": "weather service timed out", "code": "timeout"}
    service.reset("r1", "t1", 0, world_patch={"faults": [fault]}, feedback="actionable")
    first = service.call("r1", "t1", 0, "get_weather", body(city="berlin"))
    assert (first.status_code, first.body) == (400, {"error": "timeout", "message": "weather service timed out",
                                                     "hint": "retry the call"})
    assert service.call("r1", "t1", 0, "get_weather", body(city="Berlin")).status_code == 200
    blocked = service.call("r1", "t1", 0, "get_weather", body(town="Berlin"))
    assert blocked.status_code == 422, "validation runs before faults"


def test_actionable_and_plain_feedback(service: ProbeService) -> None:
    service.reset("r1", "t1", 0, feedback="plain")
    service.reset("r1", "t1", 1, feedback="actionable")
    plain = service.call("r1", "t1", 0, "send_email", body(to="bob", subject="s", body="b"))
    actionable = service.call("r1", "t1", 1, "send_email", body(to="bob", subject="s", body="b"))
    assert plain.body["invalid"] == actionable.body["invalid"] == {"to": "not an email address"}
    assert plain.body["hint"] == "invalid parameters for send_email"
    assert "such as name@example.com" in actionable.body["hint"]
    tool_error_plain = service.call("r1", "t1", 0, "get_order", body(order_id="ORD-1234"))
    tool_error_actionable = service.call("r1", "t1", 1, "get_order", body(order_id="ORD-1234"))
    assert "hint" not in tool_error_plain.body and "list_orders" in tool_error_actionable.body["hint"]


def test_delegate_runs_the_sub_agent_on_the_same_attempt(service: ProbeService) -> None:
    seen: list[SubAgentRequest] = []

    def subagent(request: SubAgentRequest) -> str:
        seen.append(request)
        # the sub-agent's own tool calls land in the same attempt (no deadlock: the lock is free)
        outcome = service.call(request.run, request.task, request.attempt, "get_weather", body(city="Paris"))
        return f"Paris is {outcome.body['condition']}"

    service.subagent = subagent
    service.reset("r1", "t1", 3, tools=["get_weather", "send_email", "delegate"])
    outcome = service.call("r1", "t1", 3, "delegate", body(task="What is the weather in Paris?"))
    assert outcome.status_code == 200, outcome.body
    assert outcome.body == {"task": "What is the weather in Paris?", "tools": ["get_weather", "send_email"],
                            "result": "Paris is partly cloudy"}
    assert seen == [SubAgentRequest("r1", "t1", 3, "What is the weather in Paris?", ("get_weather", "send_email"),
                                    "actionable", 1)]
    limited = service.call("r1", "t1", 3, "delegate", body(task="x", tools=["get_weather"]))
    assert limited.body["tools"] == ["get_weather"] and seen[-1].parent_seq == 3
    refused = service.call("r1", "t1", 3, "delegate", body(task="x", tools=["delegate"]))
    assert refused.body["error"] == "unknown_tools"


def test_delegate_runner_failure_is_a_tool_error(service: ProbeService) -> None:
    def broken(request: SubAgentRequest) -> str:
        raise RuntimeError("model server down")

    service.subagent = broken
    outcome = service.call("r1", "t1", 0, "delegate", body(task="anything"))
    assert outcome.status_code == 400
    assert outcome.body["error"] == "subagent_failed" and "model server down" in outcome.body["message"]


def test_concurrent_calls_get_unique_sequence_numbers(service: ProbeService) -> None:
    seqs: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(25):
            row = service.call("r1", "t1", 0, "send_email", body(to="a@b.example", subject="s", body="b")).probe_call_row
            with lock:
                seqs.append(row.seq)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seqs) == list(range(1, 101))
    state = service.state("r1", "t1", 0)
    assert state is not None and len(state[1]["outbox"]) == 100 and state[1]["counters"]["email"] == 100


def test_old_attempts_are_evicted_beyond_the_bound() -> None:
    service = ProbeService(max_attempts=2)
    for attempt in range(3):
        service.reset("r1", "t1", attempt)
    assert service.state("r1", "t1", 0) is None
    assert service.state("r1", "t1", 2) is not None


def test_state_returns_a_copy(service: ProbeService) -> None:
    service.reset("r1", "t1", 0)
    found = service.state("r1", "t1", 0)
    assert found is not None
    found[1]["outbox"]["OUT-1"] = {"to": "x"}
    again = service.state("r1", "t1", 0)
    assert again is not None and again[1]["outbox"] == {}
