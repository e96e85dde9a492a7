"""The langchain harness: a real LangChain agent end to end."""

from __future__ import annotations

import json

import pytest

from probegate.testing import Turn
from probegate.tasks.loader import TaskSet

pytestmark = pytest.mark.frameworks


def test_p1_task_end_to_end(rig, task_set: TaskSet) -> None:
    from probegate.harnesses.langchain_agent import LangChainHarness

    rig.script.push(
        Turn(tool_calls=[{"id": "c1", "name": "search_products", "arguments": {"query": "office chair"}}]),
        Turn(tool_calls=[{"id": "c2", "name": "check_stock", "arguments": {"sku": "SKU-1001"}}]),
        Turn("We have 25 in stock."),
    )
    outcome = rig.attempt(LangChainHarness(), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer) == ("answered", "We have 25 in stock.")
    first = rig.script.requests[0].json()
    probes_schema = first["tools"][1]["function"]
    assert probes_schema["name"] == "check_stock" and probes_schema["parameters"]["required"] == ["sku"]
    tool_turn = rig.request_messages(2)[-1]
    assert tool_turn["tool_call_id"] == "c2" and json.loads(tool_turn["content"])["in_stock"] == 25
    assert len(rig.exchanges()) == 3
    assert [(c.tool, c.status) for c in rig.probe_calls()] == [("search_products", "ok"), ("check_stock", "ok")]


def test_recursion_limit_is_max_steps(rig, task_set: TaskSet) -> None:
    from probegate.harnesses.langchain_agent import LangChainHarness

    rig.script.handler = lambda request: Turn(tool_calls=[{"name": "get_price", "arguments": {"sku": "SKU-1001"}}])
    outcome = rig.attempt(LangChainHarness(), task_set, "stock-total")
    assert outcome.result.stop == "max_steps"
    assert len(rig.exchanges()) == 8
