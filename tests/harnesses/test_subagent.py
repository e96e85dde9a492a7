"""The delegate probe's sub-agent: a new thread through the same gateway and attempt."""

from __future__ import annotations

import json

from probegate.harnesses.fc import FcHarness
from probegate.harnesses.subagent import SUBAGENT_SYSTEM
from probegate.testing import Turn
from probegate.tasks.loader import TaskSet

SUB_TASK = "How many units of SKU-1001 are in stock?"


def test_delegation_end_to_end(rig, task_set: TaskSet) -> None:
    rig.script.push(
        # main agent
        Turn(tool_calls=[{"id": "m1", "name": "delegate", "arguments": {"task": SUB_TASK, "tools": ["check_stock"]}}]),
        # sub-agent, while the delegate call waits
        Turn(tool_calls=[{"id": "s1", "name": "check_stock", "arguments": {"sku": "SKU-1001"}}]),
        Turn("25 units."),
        # main agent again
        Turn("There are 25 units in stock."),
    )
    outcome = rig.attempt(FcHarness(), task_set, "delegate-stock")
    assert (outcome.result.stop, outcome.result.final_answer) == ("answered", "There are 25 units in stock.")
    sub = rig.script.requests[1].json()
    assert sub["messages"][0] == {"role": "system", "content": SUBAGENT_SYSTEM}
    assert sub["messages"][1] == {"role": "user", "content": SUB_TASK}
    assert [t["function"]["name"] for t in sub["tools"]] == ["check_stock"]  # never delegate
    delegated = json.loads(rig.request_messages(3)[-1]["content"])
    assert delegated == {"task": SUB_TASK, "tools": ["check_stock"], "result": "25 units."}
    # one attempt, two threads: all four exchanges under the same prefix
    assert [(e.task_id, e.attempt, e.path) for e in rig.exchanges()] == [
        ("delegate-stock", 0, "/v1/chat/completions")] * 4
    # in seq order (numbered when each call arrives): the delegate call, then the sub-agent's call
    assert [(c.tool, c.status) for c in rig.probe_calls()] == [("delegate", "ok"), ("check_stock", "ok")]


def test_a_failed_sub_agent_is_a_tool_error(rig, task_set: TaskSet) -> None:
    rig.script.push(
        Turn(tool_calls=[{"id": "m1", "name": "delegate", "arguments": {"task": "Count the stock of SKU-1001."}}]),
        Turn(""),  # the sub-agent answers nothing
        Turn("I could not find out."),
    )
    outcome = rig.attempt(FcHarness(), task_set, "delegate-stock")
    assert outcome.result.stop == "answered"
    error = json.loads(rig.request_messages(2)[-1]["content"])
    assert error["error"] == "subagent_failed" and "the sub-agent stopped (parse_failure)" in error["message"]
