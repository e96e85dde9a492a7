"""The crewai harness: a real CrewAI agent end to end, its wire recorded as sent."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from probegate.testing import Turn
from probegate.tasks.loader import TaskSet

# CrewAI 1.15 warns about itself (an ImportWarning from crewai.rag, a DeprecationWarning about its own
# function_calling_llm); pytest runs with warnings as errors, and these are not ours to fix
pytestmark = [
    pytest.mark.frameworks,
    pytest.mark.filterwarnings("ignore::ImportWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


@pytest.fixture(autouse=True)
def _crewai_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # CrewAI keeps task outputs and credentials under $HOME: keep them in the test's folder
    monkeypatch.setenv("HOME", str(tmp_path))


def test_p1_task_end_to_end(rig, task_set: TaskSet, caplog: pytest.LogCaptureFixture) -> None:
    from probegate.harnesses.crewai_agent import REPEATING_LOGGERS, CrewAIHarness, OnceFilter

    for once in (f for name in REPEATING_LOGGERS for f in logging.getLogger(name).filters):
        if isinstance(once, OnceFilter):
            once.seen.clear()  # an earlier CrewAI test in this process has shown the warning already
    rig.script.push(
        Turn(tool_calls=[{"id": "c1", "name": "search_products", "arguments": {"query": "office chair"}}]),
        Turn(tool_calls=[{"id": "c2", "name": "check_stock", "arguments": {"sku": "SKU-1001"}}]),
        Turn("We have 25 in stock."),
    )
    outcome = rig.attempt(CrewAIHarness(), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer) == ("answered", "We have 25 in stock.")
    # CrewAI warns about its approximate token count before each model call (5 times here): shown once
    approximate = [r for r in caplog.records if "approximate input token count" in r.getMessage()]
    assert len(approximate) == 1
    assert [t["function"]["name"] for t in rig.script.requests[0].json()["tools"]] == [
        "search_products", "check_stock", "get_price"]
    # CrewAI 1.15 sends the assistant tool-call turn with content null (llama-cpp-python answers 500 to it)
    assistant = rig.request_messages(1)[2]
    assert (assistant["role"], assistant["content"]) == ("assistant", None)
    assert json.loads(rig.request_messages(2)[-1]["content"])["in_stock"] == 25
    assert len(rig.exchanges()) == 3
    assert [(c.tool, c.args, c.status) for c in rig.probe_calls()] == [
        ("search_products", {"query": "office chair"}, "ok"), ("check_stock", {"sku": "SKU-1001"}, "ok")]
