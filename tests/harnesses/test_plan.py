"""The plan harness's pure parts: reading a plan, finding the calls of a reply."""

from __future__ import annotations

from typing import Any

import pytest

from probegate.harnesses.plan import ToolCall, calls_in, parse_plan

TOOLS = [{"type": "function", "function": {"name": "check_stock", "parameters": {
    "type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}}}]


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("1. Find the SKU\n2. Check its stock\n3. Answer", ["Find the SKU", "Check its stock", "Answer"]),
        ("Plan:\n1) search\n2) check", ["search", "check"]),
        ("Step 1: search\nStep 2: check", ["search", "check"]),
        ("**1.** search\n**2.** check", ["search", "check"]),
        ("Here is my plan:\n- search\n- check\nThat's it.", ["search", "check"]),
        ("<think>1. not this</think>1. this", ["this"]),
        ("I will just do it.", []),
        ("", []),
    ],
)
def test_parse_plan(text: str, steps: list[str]) -> None:
    assert parse_plan(text) == steps


@pytest.mark.parametrize(
    ("reply", "calls"),
    [
        ({"content": "", "tool_calls": [{"id": "c1", "type": "function",
                                         "function": {"name": "check_stock", "arguments": '{"sku": "A1"}'}}]},
         [ToolCall("check_stock", '{"sku": "A1"}', "c1")]),
        # arguments that are not JSON are passed on raw: the probe judges them
        ({"tool_calls": [{"id": "c1", "function": {"name": "check_stock", "arguments": "{sku: A1"}}]},
         [ToolCall("check_stock", "{sku: A1", "c1")]),
        ({"content": '<tool_call>{"name": "check_stock", "arguments": {"sku": "A1"}}</tool_call>'},
         [ToolCall("check_stock", {"sku": "A1"}, None)]),
        ({"content": "The stock is 5."}, []),
    ],
)
def test_calls_in(reply: dict[str, Any], calls: list[ToolCall]) -> None:
    assert calls_in(reply, TOOLS) == calls


def test_p1_task_with_a_replan(rig, task_set) -> None:
    from probegate.harnesses.plan import PLAN_REQUEST, REPLAN, PlanHarness
    from probegate.testing import Turn

    rig.script.push(
        Turn("1. Find the chair's SKU\n2. Check its stock"),
        Turn(tool_calls=[{"id": "c1", "name": "search_products", "arguments": {"query": "office chair"}}]),
        Turn(tool_calls=[{"id": "c2", "name": "check_stock", "arguments": {"sku": "SKU-9999"}}]),  # fails
        Turn("1. Check the stock of SKU-1001"),  # the new plan
        Turn(tool_calls=[{"id": "c3", "name": "check_stock", "arguments": {"sku": "SKU-1001"}}]),
        Turn("25 chairs are in stock."),
    )
    outcome = rig.attempt(PlanHarness(), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer, outcome.result.steps) == (
        "answered", "25 chairs are in stock.", 6)
    planning = rig.script.requests[0].json()
    assert "tools" not in planning and planning["messages"][1]["content"].endswith(PLAN_REQUEST)
    assert rig.request_messages(1)[-1]["content"].startswith("Step 1 of 2: Find the chair's SKU")
    replan = rig.request_messages(3)[-1]["content"]
    assert replan.startswith(REPLAN.split("{", 1)[0] + "2 failed: ") and '"not_found"' in replan
    # the new plan replaces the failed step; the step already done keeps its number
    assert rig.request_messages(4)[-1]["content"].startswith("Step 2 of 2: Check the stock of SKU-1001")
    assert [(c.tool, c.status) for c in rig.probe_calls()] == [
        ("search_products", "ok"), ("check_stock", "error"), ("check_stock", "ok")]
    assert len(rig.exchanges()) == 6
