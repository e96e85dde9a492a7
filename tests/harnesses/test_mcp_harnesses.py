"""The MCP variants of the framework harnesses (``langchain-mcp``, ``crewai-mcp``): the
same agents, their tools from the probes' MCP door, end to end on a scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest

from probegate.harnesses.registry import get_harness
from probegate.scorer import reconstruct
from probegate.tasks.loader import TaskSet
from probegate.testing import ReceivedRequest, Turn

TASKS_DIR = Path(__file__).parent / "tasks"

pytestmark = [
    pytest.mark.frameworks,
    pytest.mark.filterwarnings("ignore::ImportWarning"),  # CrewAI warns about its own modules
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


@pytest.fixture(autouse=True)
def _crewai_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # CrewAI keeps files under $HOME


def offered(request: ReceivedRequest) -> list[str]:
    return [t["function"]["name"] for t in request.json().get("tools", [])]


def named(request: ReceivedRequest, tool: str) -> str:
    """The name the agent offers ``tool`` under (CrewAI prefixes MCP tools with the server URL)."""
    return next(n for n in offered(request) if n == tool or n.endswith("_" + tool))


def stock_model(request: ReceivedRequest) -> Turn:
    turns = sum(1 for m in request.json()["messages"] if m["role"] == "tool")
    if turns == 0:
        return Turn(tool_calls=[{"name": named(request, "search_products"), "arguments": {"query": "office chair"}}])
    if turns == 1:
        return Turn(tool_calls=[{"name": named(request, "check_stock"), "arguments": {}}])  # blocked: no sku
    if turns == 2:
        return Turn(tool_calls=[{"name": named(request, "check_stock"), "arguments": {"sku": "SKU-1001"}}])
    return Turn("We have 25 in stock.")


OK_CALLS = [("search_products", {"query": "office chair"}, "ok", "mcp"), ("check_stock", {"sku": "SKU-1001"}, "ok", "mcp")]


# LangChain sends the call without `sku` and the probe blocks it (its hint is the observation);
# CrewAI checks the arguments against the schema itself, so that call never reaches the probe
@pytest.mark.parametrize(("name", "calls", "hint"), [
    ("langchain-mcp", [OK_CALLS[0], ("check_stock", {}, "blocked", "mcp"), OK_CALLS[1]], "Add `sku`"),
    ("crewai-mcp", OK_CALLS, "arguments validation failed"),
])
def test_mcp_variant_end_to_end(name: str, calls: list[tuple], hint: str, rig, task_set: TaskSet) -> None:
    rig.script.handler = stock_model
    outcome = rig.attempt(get_harness(name), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer) == ("answered", "We have 25 in stock.")
    # the task's three tools, with the probes' JSON Schemas, reached the model over MCP
    assert sorted(n.rsplit("_mcp_", 1)[-1] for n in offered(rig.script.requests[0])) == [
        "check_stock", "get_price", "search_products"]
    blocked_turn = rig.request_messages(2)[-1]
    assert blocked_turn["role"] == "tool" and hint in str(blocked_turn["content"])
    assert [(c.tool, c.args, c.status, c.door) for c in rig.probe_calls()] == calls
    # every step that reached a probe is joined to its call, MCP-prefixed tool names included
    trajectory = reconstruct(rig.engine, "run1", "stock-total", 0, task_set=str(TASKS_DIR))
    joined = [trajectory.probe_calls[s.probe_call].tool for s in trajectory.call_steps() if s.probe_call is not None]
    assert joined == [c[0] for c in calls]
    mcp = [e for e in rig.exchanges() if e.path == "/mcp"]
    assert mcp and all(e.task_id == "stock-total" and e.status_code in (200, 202) for e in mcp)
