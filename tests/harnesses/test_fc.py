"""The fc harness: its validity rule, and a P1 task end to end."""

from __future__ import annotations

import json
from typing import Any

import pytest

from probegate.harnesses.fc import FcHarness, call_problem
from probegate.testing import Turn
from probegate.tasks.loader import TaskSet


def call(name: str | None, arguments: Any) -> dict[str, Any]:
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (call("check_stock", '{"sku": "A1"}'), None),
        (call("check_stock", ""), None),
        (call("check_stock", None), None),
        (call("check_stock", {"sku": "A1"}), None),
        (call(None, "{}"), "a tool call without a function name"),
        (call("check_stock", "{'sku': 'A1'}"), "arguments of check_stock are not valid JSON: \"{'sku': 'A1'}\""),
        (call("check_stock", '["A1"]'), "arguments of check_stock are not a JSON object: '[\"A1\"]'"),
    ],
)
def test_call_problem(entry: dict[str, Any], problem: str | None) -> None:
    assert call_problem(entry) == problem


def test_p1_task_end_to_end(rig_both, task_set: TaskSet) -> None:
    rig_both.script.push(
        Turn(tool_calls=[{"id": "c1", "name": "search_products", "arguments": {"query": "office chair"}}]),
        Turn(tool_calls=[{"id": "c2", "name": "check_stock", "arguments": {"sku": "SKU-1001"}}]),
        Turn("We have 25 ErgoFlex chairs in stock."),
    )
    outcome = rig_both.attempt(FcHarness(), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer, outcome.result.steps) == (
        "answered", "We have 25 ErgoFlex chairs in stock.", 3)
    # the model was offered exactly the task's tools, as the probes describe them
    first = rig_both.script.requests[0].json()
    assert [t["function"]["name"] for t in first["tools"]] == ["search_products", "check_stock", "get_price"]
    # the probe's answer went back as the tool message for the right call
    tool_turn = rig_both.request_messages(2)[-1]
    assert (tool_turn["role"], tool_turn["tool_call_id"]) == ("tool", "c2")
    assert json.loads(tool_turn["content"])["in_stock"] == 25
    exchanges = rig_both.exchanges()
    assert [(e.task_id, e.attempt, e.status_code) for e in exchanges] == [("stock-total", 0, 200)] * 3
    calls = rig_both.probe_calls()
    assert [(c.tool, c.status, c.args) for c in calls] == [
        ("search_products", "ok", {"query": "office chair"}),
        ("check_stock", "ok", {"sku": "SKU-1001"}),
    ]


def test_a_non_parse_ends_the_task(rig, task_set: TaskSet) -> None:
    rig.script.push(Turn(tool_calls=[{"name": "check_stock", "arguments": "{'sku': 'SKU-1001'"}]))
    outcome = rig.attempt(FcHarness(), task_set, "stock-total")
    assert outcome.result.stop == "parse_failure"
    assert outcome.result.error == "arguments of check_stock are not valid JSON: \"{'sku': 'SKU-1001'\""
    assert len(rig.exchanges()) == 1
    assert rig.probe_calls() == []  # nothing was executed


def test_an_empty_reply_is_a_parse_failure(rig, task_set: TaskSet) -> None:
    rig.script.push(Turn(""))
    assert rig.attempt(FcHarness(), task_set, "stock-total").result.stop == "parse_failure"


def test_probe_refusals_are_observations(rig, task_set: TaskSet) -> None:
    rig.script.push(
        Turn(tool_calls=[{"id": "c1", "name": "check_stock", "arguments": {}}]),
        Turn(tool_calls=[{"id": "c2", "name": "read_file", "arguments": {"path": "x"}}]),
        Turn("I could not find it."),
    )
    outcome = rig.attempt(FcHarness(), task_set, "stock-total")
    assert outcome.result.stop == "answered"
    blocked = json.loads(rig.request_messages(1)[-1]["content"])
    unknown = json.loads(rig.request_messages(2)[-1]["content"])
    assert (blocked["error"], blocked["missing"]) == ("invalid_params", ["sku"])
    assert unknown["error"] == "unknown_tool"
    assert [(c.tool, c.status) for c in rig.probe_calls()] == [("check_stock", "blocked"), ("read_file", "error")]


def test_model_server_errors_and_max_steps(rig, task_set: TaskSet) -> None:
    from probegate.testing import Reply

    rig.script.push(Reply.json({"error": {"message": "boom"}}, status=500))
    failed = rig.attempt(FcHarness(), task_set, "stock-total", attempt=0)
    assert failed.result.stop == "error" and "HTTP 500" in (failed.result.error or "")
    rig.script.handler = lambda request: Turn(tool_calls=[{"name": "get_price", "arguments": {"sku": "SKU-1001"}}])
    looping = rig.attempt(FcHarness(), task_set, "stock-total", attempt=1)
    assert (looping.result.stop, looping.result.steps) == ("max_steps", 8)
