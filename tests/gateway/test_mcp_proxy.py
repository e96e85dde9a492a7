"""The recording proxy for the agent's own MCP server (``--mcp-upstream NAME=URL``): an
MCP server of our own writing (FastMCP, stateful, SSE answers) behind a real gateway,
an unmodified OpenAI Agents SDK agent in front; the calls are recorded, scored (call
source ``mcp-proxy``) and replayed with the server gone."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.server.fastmcp import FastMCP
from sqlmodel import Session, select

from typer.testing import CliRunner

from probegate.cli import app
from probegate.gateway.replay import ReplaySettings
from probegate.scorer import score_run
from probegate.store import Exchange
from probegate.testing import ReceivedRequest, RunningServer, ScriptedUpstream, Turn, serve_in_thread
from probegate.wire.sse import parse_stream

ROOT = Path(__file__).resolve().parents[2]
TASKS = str(ROOT / "tests" / "harnesses" / "tasks")
AGENT = ROOT / "examples" / "openai_agents_mcp_agent.py"
PROMPT = "How many ErgoFlex office chairs do we have in stock in total?"


def shop_server() -> FastMCP:
    """The user's own MCP server: a shop with two tools."""
    shop = FastMCP("shop")

    @shop.tool()
    def search_products(query: str) -> dict[str, Any]:
        """Find products by name."""
        return {"products": [{"sku": "SKU-1001", "name": "ErgoFlex Office Chair"}] if "chair" in query else []}

    @shop.tool()
    def check_stock(sku: str) -> dict[str, Any]:
        """Units in stock of one SKU."""
        return {"sku": sku, "in_stock": 25 if sku == "SKU-1001" else 0}

    return shop


def stock_model(request: ReceivedRequest) -> Turn:
    """Plays the model of task stock-total: search, check the SKU found, answer."""
    last = request.json()["messages"][-1]
    if last["role"] != "tool":
        return Turn(tool_calls=[{"name": "search_products", "arguments": {"query": "office chair"}}])
    text = last["content"] if isinstance(last["content"], str) else json.dumps(last["content"])
    stock = re.search(r'in_stock\\*"?\s*:\s*(\d+)', text)
    if stock:
        return Turn(f"We have {stock.group(1)} chairs in stock.")
    return Turn(tool_calls=[{"name": "check_stock", "arguments": {"sku": re.search(r"SKU-\d+", text).group(0)}}])


def run_agent(gateway_url: str, run: str) -> subprocess.CompletedProcess[str]:
    prefix = f"{gateway_url}/r/{run}/stock-total/0"
    env = dict(os.environ, OPENAI_BASE_URL=f"{prefix}/v1", OPENAI_API_KEY="k", OPENAI_MODEL="test-model",
               MCP_URL=f"{prefix}/mcp/shop", PROBEGATE_TASK_PROMPT=PROMPT)
    env.pop("PROBEGATE_MCP_URL", None)
    return subprocess.run([sys.executable, str(AGENT)], env=env, capture_output=True, text=True, timeout=120,
                          check=False)


def proxy_exchanges(engine: Any, run: str) -> list[Exchange]:
    with Session(engine) as session:
        rows = session.exec(select(Exchange).where(Exchange.run_id == run, Exchange.path == "/mcp/shop"))
        return sorted(rows, key=lambda e: e.seq)


@pytest.fixture
def shop() -> RunningServer:
    server = serve_in_thread(shop_server().streamable_http_app())
    yield server
    server.stop()


@pytest.mark.frameworks
def test_calls_are_recorded_scored_and_replayed(shop: RunningServer, gateway_factory: Any) -> None:
    model = serve_in_thread(ScriptedUpstream(handler=stock_model))
    try:
        gateway = gateway_factory(model.url, mcp_upstreams={"shop": f"{shop.url}/mcp"})
        done = run_agent(gateway.url, "live")
    finally:
        model.stop()
    assert done.returncode == 0 and "25" in done.stdout, done.stderr[-3000:]
    gateway.flush()

    # recorded both ways, SSE byte for byte: the stored pieces parse into the JSON-RPC answers
    rows = proxy_exchanges(gateway.engine, "live")
    methods = [r.request_body.get("method") if isinstance(r.request_body, dict) else r.method for r in rows]
    assert methods[:2] == ["initialize", "notifications/initialized"] and methods.count("tools/call") == 2
    call = rows[methods.index("tools/call")]
    assert call.stream_format == "sse" and sum(size for _, size in call.chunks) == len(call.response_raw)
    events, _ = parse_stream([(0.0, call.response_raw)], "sse")
    assert json.loads(events[0].data)["id"] == call.request_body["id"]
    assert rows[0].response_headers.get("mcp-session-id")  # the server's own session, passed through

    # scored from the proxy's tools/call messages: no probe ran
    [live] = score_run(gateway.engine, "live", task_set=TASKS).results
    assert live.trajectory.call_source == "mcp-proxy"
    assert [(p.tool, p.args, p.status, p.door) for p in live.trajectory.probe_calls] == [
        ("search_products", {"query": "office chair"}, "ok", "mcp-proxy"),
        ("check_stock", {"sku": "SKU-1001"}, "ok", "mcp-proxy"),
    ]
    assert live.trajectory.probe_calls[1].result == {"sku": "SKU-1001", "in_stock": 25}
    assert live.score.passed, live.score.explanation
    logged = CliRunner().invoke(app, ["probes", "log", "live", "--json", "--store",
                                      gateway.engine.url.render_as_string(hide_password=False)])
    assert [(r["tool"], r["status"], r["door"]) for r in json.loads(logged.stdout)] == [
        ("search_products", "ok", "mcp-proxy"), ("check_stock", "ok", "mcp-proxy")]

    # replayed with the MCP server and the model gone: the same agent gets the same answers
    shop.stop()
    replayer = gateway_factory("", replay=ReplaySettings("live"))
    again = run_agent(replayer.url, "replayed")
    assert again.returncode == 0 and again.stdout == done.stdout, again.stderr[-3000:]
    replayer.flush()
    [replayed] = score_run(replayer.engine, "replayed", task_set=TASKS).results
    assert replayed.trajectory.call_source == "mcp-proxy"
    assert [(p.tool, p.args, p.result) for p in replayed.trajectory.probe_calls] == [
        (p.tool, p.args, p.result) for p in live.trajectory.probe_calls]
    assert replayed.score.passed, replayed.score.explanation
    tool_answers = [r for r in proxy_exchanges(replayer.engine, "replayed") if r.request_body
                    and isinstance(r.request_body, dict) and r.request_body.get("method") == "tools/call"]
    assert len(tool_answers) == 2 and [r.response_raw for r in tool_answers] == [
        r.response_raw for r in rows if isinstance(r.request_body, dict) and r.request_body.get("method") == "tools/call"]


def test_an_unknown_name_is_a_recorded_404(gateway_factory: Any, upstream: Any) -> None:
    gateway = gateway_factory(upstream[1].url, mcp_upstreams={"shop": "http://127.0.0.1:9/mcp"})
    response = httpx.post(f"{gateway.url}/r/run1/t1/0/mcp/nope", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 404 and "known: shop" in response.json()["error"]["message"]
    gateway.flush()
    with Session(gateway.engine) as session:
        [row] = session.exec(select(Exchange).where(Exchange.run_id == "run1"))
    assert (row.path, row.status_code, row.request_body["method"]) == ("/mcp/nope", 404, "ping")


def test_an_unreachable_server_is_a_recorded_502(gateway_factory: Any, upstream: Any) -> None:
    gateway = gateway_factory(upstream[1].url, mcp_upstreams={"shop": "http://127.0.0.1:9/mcp"})
    response = httpx.post(f"{gateway.url}/r/run1/t1/0/mcp/shop", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 502
    gateway.flush()
    with Session(gateway.engine) as session:
        [row] = session.exec(select(Exchange).where(Exchange.run_id == "run1"))
    assert row.path == "/mcp/shop" and row.error.startswith("upstream_unreachable")
