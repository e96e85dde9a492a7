"""The probes' MCP door, mounted in a real gateway on loopback, driven by the MCP SDK's
own client (and raw HTTP for what a broken client sends)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from sqlmodel import Session, select

from typer.testing import CliRunner

from probegate.cli import app
from probegate.probes.mcp import mcp_tool, tool_result
from probegate.probes.store import read_probe_calls
from probegate.store import Exchange
from probegate.testing import Turn

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def with_session(url: str, use: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    """Open an MCP session on ``url`` with the SDK's client, run ``use`` in it."""

    async def go() -> Any:
        async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as session:
            await session.initialize()
            return await use(session)

    return asyncio.run(go())


def mcp_url(gateway: Any, run: str = "run1", task: str = "t1", attempt: int | None = 0) -> str:
    return gateway.base(run, task, attempt).removesuffix("/v1") + "/mcp"


def exchanges(gateway: Any, run: str = "run1") -> list[Exchange]:
    gateway.flush()
    with Session(gateway.engine) as session:
        return list(session.exec(select(Exchange).where(Exchange.run_id == run).order_by(Exchange.seq)))


# -- pure ------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("status", "body", "is_error", "structured"),
    [
        (200, {"city": "Berlin"}, False, {"city": "Berlin"}),
        (422, {"error": "invalid_params", "hint": "Add `sku`"}, True, {"error": "invalid_params", "hint": "Add `sku`"}),
        (404, {"error": "unknown_tool"}, True, {"error": "unknown_tool"}),
        (400, {"error": "not_found"}, True, {"error": "not_found"}),
        (200, ["a", "b"], False, None),
    ],
)
def test_tool_result(status: int, body: Any, is_error: bool, structured: Any) -> None:
    result = tool_result(status, body)
    assert result.isError is is_error and result.structuredContent == structured
    [text] = result.content
    assert isinstance(text, types.TextContent) and json.loads(text.text) == body


def test_mcp_tool_keeps_the_json_schema() -> None:
    schema = {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}
    tool = mcp_tool({"type": "function", "function": {"name": "check_stock", "description": "Stock.", "parameters": schema}})
    assert (tool.name, tool.description, tool.inputSchema) == ("check_stock", "Stock.", schema)
    bare = mcp_tool({"type": "function", "function": {"name": "now"}})
    assert bare.inputSchema == {"type": "object", "properties": {}}


# -- behaviour -------------------------------------------------------------------------

def test_list_and_call_after_a_reset(gateway: Any) -> None:
    reset = httpx.post(f"{gateway.url}/probegate/attempts/reset", json={
        "run": "run1", "task": "t1", "attempt": 2, "tools": ["check_stock", "get_price"], "feedback": "plain"})
    assert reset.status_code == 200
    rest_tools = httpx.get(f"{gateway.url}/r/run1/t1/2/tools").json()["tools"]

    async def use(session: ClientSession) -> tuple[Any, ...]:
        listed = await session.list_tools()
        ok = await session.call_tool("check_stock", {"sku": "SKU-1001"})
        blocked = await session.call_tool("check_stock", {"sku": 7})
        return listed, ok, blocked

    listed, ok, blocked = with_session(mcp_url(gateway, attempt=2), use)
    assert [(t.name, t.inputSchema) for t in listed.tools] == [
        (t["function"]["name"], t["function"]["parameters"]) for t in rest_tools]
    assert ok.isError is False and ok.structuredContent["in_stock"] == 25
    assert blocked.isError is True and blocked.structuredContent["error"] == "invalid_params"
    gateway.flush()
    rows = read_probe_calls(gateway.engine, "run1", "t1", 2)
    assert [(r.seq, r.tool, r.status, r.door, r.via, r.feedback) for r in rows] == [
        (1, "check_stock", "ok", "mcp", "direct", "plain"), (2, "check_stock", "blocked", "mcp", "direct", "plain")]
    store = gateway.engine.url.render_as_string(hide_password=False)
    table = CliRunner().invoke(app, ["probes", "log", "run1", "--store", store], env={"COLUMNS": "250"}).stdout
    assert [line.split("│")[9].strip() for line in table.splitlines() if "check_stock" in line] == ["mcp", "mcp"]


SAME_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_weather", {"city": "Berlin"}),
    ("check_stock", {}),  # blocked: sku missing
    ("get_weather", {"city": "Atlantis"}),  # tool error
    ("teleport", {"to": "Mars"}),  # unknown tool
    ("send_email", {"to": "jonas.weber@example.com", "subject": "Hi", "body": "Hello"}),  # side effect
    ("check_stock", {"sku": "SKU-1001", "colour": "red"}),  # blocked: unknown parameter
]


def test_rest_and_mcp_give_identical_probe_logs(gateway: Any) -> None:
    for task in ("via-rest", "via-mcp"):
        httpx.post(f"{gateway.url}/probegate/attempts/reset", json={"run": "same", "task": task, "attempt": 0})
    rest = [httpx.post(f"{gateway.url}/r/same/via-rest/0/tools/{tool}", content=json.dumps(args).encode())
            for tool, args in SAME_CALLS]

    async def use(session: ClientSession) -> list[types.CallToolResult]:
        return [await session.call_tool(tool, args) for tool, args in SAME_CALLS]

    via_mcp = with_session(mcp_url(gateway, "same", "via-mcp"), use)
    # the model reads the same answer through either door
    assert [(r.status_code == 200, r.json()) for r in rest] == [(not m.isError, m.structuredContent) for m in via_mcp]
    gateway.flush()
    fields = ("seq", "tool", "raw_args", "args", "missing", "invalid", "status", "result", "feedback")
    logs = {task: [tuple(getattr(r, f) for f in fields) for r in read_probe_calls(gateway.engine, "same", task)]
            for task in ("via-rest", "via-mcp")}
    assert len(logs["via-rest"]) == len(SAME_CALLS) and logs["via-rest"] == logs["via-mcp"]
    doors = {task: {r.door for r in read_probe_calls(gateway.engine, "same", task)} for task in logs}
    assert doors == {"via-rest": {"rest"}, "via-mcp": {"mcp"}}


def test_a_never_reset_attempt_gets_the_default_world_as_over_rest(gateway: Any) -> None:
    async def use(session: ClientSession) -> Any:
        return await session.call_tool("get_weather", {"city": "Hamburg"})

    result = with_session(mcp_url(gateway, "fresh", "t9", None), use)
    assert result.isError is False and result.structuredContent["city"] == "Hamburg"
    gateway.flush()
    assert [(r.task_id, r.attempt, r.tool, r.status) for r in read_probe_calls(gateway.engine, "fresh")] == [
        ("t9", 0, "get_weather", "ok")]


def test_exchanges_are_recorded_byte_for_byte_and_redacted(gateway: Any) -> None:
    secret = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX"

    async def use(session: ClientSession) -> Any:
        return await session.call_tool("search_documents", {"query": secret})

    with_session(mcp_url(gateway), use)
    rows = exchanges(gateway)
    assert [r.method for r in rows] == ["POST"] * len(rows) and all(r.path == "/mcp" for r in rows)
    methods = [r.request_body.get("method") for r in rows]
    assert methods[0] == "initialize" and "tools/call" in methods
    call = rows[methods.index("tools/call")]
    assert call.stream_format == "sse" and call.status_code == 200
    assert call.sse_events and json.loads(call.sse_events[0]["data"])["id"] == call.request_body["id"]
    stored = json.dumps(call.request_body) + (call.response_raw or b"").decode()
    assert secret not in stored and "[redacted]" in stored
    assert [r.seq for r in rows] == list(range(len(rows)))


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"not json", 400, -32700),  # parse error
        (b'{"jsonrpc": "2.0", "id": 1}', 400, -32602),  # no method
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]', 400, -32602),  # a batch
        (b'{"jsonrpc": "2.0", "id": 5, "method": "no/such"}', 200, -32602),  # unknown method
        (b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "get_weather", "arguments": [1]}}',
         200, -32602),  # arguments not an object
    ],
)
def test_malformed_json_rpc_gets_a_protocol_error_and_is_recorded(gateway: Any, body: bytes, status: int, code: int) -> None:
    response = httpx.post(mcp_url(gateway), content=body, headers=HEADERS, timeout=30)
    assert response.status_code == status
    text = response.text
    payload = json.loads(text.split("data: ", 1)[1]) if text.startswith("event:") else response.json()
    assert payload["jsonrpc"] == "2.0" and payload["error"]["code"] == code
    [row] = exchanges(gateway)
    assert (row.status_code, row.response_raw) == (status, response.content)
    assert read_probe_calls(gateway.engine, "run1") == []


def test_get_is_405_and_other_traffic_is_unaffected(gateway: Any, upstream: Any) -> None:
    got = httpx.get(mcp_url(gateway), headers=HEADERS, timeout=30)
    assert (got.status_code, got.headers["allow"]) == (405, "POST")
    upstream[0].push(Turn("still here"))
    answer = httpx.post(gateway.base() + "/chat/completions", json={"model": "m", "messages": []}, timeout=30)
    assert answer.json()["choices"][0]["message"]["content"] == "still here"


def test_a_client_leaving_mid_stream_loses_nothing(gateway: Any, upstream: Any) -> None:
    """``delegate`` waits for a sub-agent (here: a model slow to answer); the client
    leaves while the tools/call stream is open. The call still runs and is logged, the
    exchange is kept marked ``client_disconnected``, and the door keeps serving."""
    from probegate.probes.tool import SubAgentRequest

    def slow_subagent(request: SubAgentRequest) -> str:
        time.sleep(1.5)
        return "25 chairs"

    gateway.app.api.state.probes.subagent = slow_subagent
    call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "delegate", "arguments": {"task": "count chairs"}}}
    with pytest.raises(httpx.ReadTimeout), httpx.stream("POST", mcp_url(gateway), json=call, headers=HEADERS,
                                                        timeout=httpx.Timeout(30, read=0.3)) as response:
        assert response.status_code == 200
        response.read()

    async def use(session: ClientSession) -> Any:
        return await session.call_tool("get_weather", {"city": "Berlin"})

    assert with_session(mcp_url(gateway, attempt=1), use).isError is False
    deadline = time.monotonic() + 30
    while len(read_probe_calls(gateway.engine, "run1", "t1", 0)) < 1 and time.monotonic() < deadline:
        gateway.flush()
        time.sleep(0.1)
    [row] = read_probe_calls(gateway.engine, "run1", "t1", 0)
    assert (row.tool, row.door) == ("delegate", "mcp")
    kept = [e for e in exchanges(gateway) if e.attempt == 0]
    assert [(e.request_body["id"], e.error) for e in kept] == [(9, "client_disconnected")]


def test_a_bare_mcp_route_is_attributed_by_headers_as_a_bare_v1(gateway: Any) -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "get_weather", "arguments": {"city": "Berlin"}}}
    headers = {**HEADERS, "x-probegate-run": "hdr-run", "x-probegate-task": "t5"}
    assert httpx.post(f"{gateway.url}/mcp", json=call, headers=headers, timeout=30).status_code == 200
    assert httpx.post(f"{gateway.url}/mcp", json=call, headers=HEADERS, timeout=30).status_code == 200
    gateway.flush()
    assert [(r.task_id, r.tool) for r in read_probe_calls(gateway.engine, "hdr-run")] == [("t5", "get_weather")]
    assert [(r.task_id, r.door) for r in read_probe_calls(gateway.engine, "adhoc")] == [("-", "mcp")]
    assert [(e.task_id, e.path) for e in exchanges(gateway, "hdr-run")] == [("t5", "/mcp")]
