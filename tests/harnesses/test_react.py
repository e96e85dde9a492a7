"""The react harness end to end, including malformed turns and the corrective message."""

from __future__ import annotations

import json

from probegate.harnesses.react import CORRECTION, ReactHarness, correction
from probegate.testing import Turn
from probegate.tasks.loader import TaskSet


def test_p1_task_through_malformed_turns(rig, task_set: TaskSet) -> None:
    rig.script.push(
        Turn("I should look up the product first."),  # no protocol at all
        Turn("Thought: search\nAction: search_products\nAction Input: {'query': 'office chair'}"),  # Python literal
        Turn("Action: check_stock\nAction Input: sku=SKU-1001\nObservation: 99 (invented)"),  # key=value
        Turn("Thought: I know it.\nFinal Answer: 25 chairs in stock."),
    )
    outcome = rig.attempt(ReactHarness(), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer, outcome.result.steps) == (
        "answered", "25 chairs in stock.", 4)
    first = rig.script.requests[0].json()
    assert "tools" not in first and first["stop"] == ["\nObservation:"]
    system = first["messages"][0]["content"]
    assert "Action: the tool to use, one of [search_products, check_stock, get_price]" in system
    assert rig.request_messages(1)[-1]["content"] == correction(
        "the reply has neither an Action nor a Final Answer", "search_products, check_stock, get_price")
    observation = rig.request_messages(3)[-1]["content"]
    assert observation.startswith("Observation: ") and json.loads(observation[13:])["in_stock"] == 25
    assert len(rig.exchanges()) == 4
    assert [(c.tool, c.args, c.status) for c in rig.probe_calls()] == [
        ("search_products", {"query": "office chair"}, "ok"),
        ("check_stock", {"sku": "SKU-1001"}, "ok"),
    ]


def test_gives_up_after_the_corrections(rig, task_set: TaskSet) -> None:
    rig.script.push(Turn("hmm"), Turn("let me think"), Turn("still thinking"))
    outcome = rig.attempt(ReactHarness(), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.steps) == ("parse_failure", 3)
    assert outcome.result.error == "the reply has neither an Action nor a Final Answer"
    assert rig.probe_calls() == []


def test_correction_text() -> None:
    assert correction("cannot read it", "a, b") == CORRECTION.format(problem="Cannot read it", tool_names="a, b")
