"""The MCP examples (LangChain, CrewAI, OpenAI Agents SDK) run unmodified through
``probegate run --harness 'cmd:...'``, taking their tools from ``PROBEGATE_MCP_URL``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from probegate.probes.store import read_probe_calls
from probegate.store import open_store
from probegate.testing import ReceivedRequest, ScriptedUpstream, Turn, serve_in_thread

ROOT = Path(__file__).resolve().parents[2]
TASKS = str(ROOT / "tests" / "harnesses" / "tasks")


def _text(content: object) -> str:
    """A tool message's content as text, whatever shape the framework gave it."""
    return content if isinstance(content, str) else json.dumps(content)


def offered(request: ReceivedRequest, tool: str) -> str:
    """The name the agent offers ``tool`` under (CrewAI prefixes MCP tools with the server's URL)."""
    names = [t["function"]["name"] for t in request.json().get("tools", [])]
    return next((n for n in names if n == tool), None) or next((n for n in names if n.endswith("_" + tool)), tool)


def stock_model(request: ReceivedRequest) -> Turn:
    """Plays the model of task stock-total: search, then check the stock found, then answer."""
    last = request.json()["messages"][-1]
    if last["role"] != "tool":
        return Turn(tool_calls=[{"name": offered(request, "search_products"), "arguments": {"query": "office chair"}}])
    text = _text(last["content"])
    stock = re.search(r'in_stock\\*"?\s*:\s*(\d+)', text)
    if stock:
        return Turn(f"We have {stock.group(1)} chairs in stock.")
    sku = re.search(r"SKU-\d+", text)
    return Turn(tool_calls=[{"name": offered(request, "check_stock"), "arguments": {"sku": sku.group(0) if sku else "?"}}])


EXAMPLES = [
    "langchain_mcp_agent.py",
    "crewai_mcp_agent.py",
    "openai_agents_mcp_agent.py",
]


@pytest.mark.frameworks
@pytest.mark.parametrize("example", EXAMPLES)
def test_mcp_example_under_probegate_run(example: str, tmp_path: Path) -> None:
    model = serve_in_thread(ScriptedUpstream(handler=stock_model))
    store = f"sqlite:///{tmp_path / 's.db'}"
    command = f"cmd:{sys.executable} {ROOT / 'examples' / example}"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "probegate", "run", "--task-set", TASKS, "--tasks", "stock-total",
             "--harness", command, "--model", "test-model", "--model-endpoint", model.url, "--store", store,
             "--run-id", "mcp-ex"],
            capture_output=True, text=True, cwd=tmp_path, timeout=240, check=False)
    finally:
        model.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    assert "reach 1.00 | 1/1 attempts passed" in done.stdout, done.stdout + done.stderr[-3000:]
    engine = open_store(store)
    calls = read_probe_calls(engine, "mcp-ex")
    engine.dispose()
    assert [(c.tool, c.args, c.status, c.door) for c in calls] == [
        ("search_products", {"query": "office chair"}, "ok", "mcp"),
        ("check_stock", {"sku": "SKU-1001"}, "ok", "mcp"),
    ]
