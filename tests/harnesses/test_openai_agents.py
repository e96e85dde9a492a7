"""The openai-agents harnesses: a real OpenAI Agents SDK agent end to end, over the
Responses API (``openai-agents``) and over chat completions (``openai-agents-chat``),
against a scripted upstream that speaks both, through the real gateway and probes."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import openai
import pytest

from probegate.runner.execute import RunConfig, execute
from probegate.testing import Reply, ScriptedUpstream, Turn, serve_in_thread
from probegate.tasks.loader import TaskSet

pytestmark = pytest.mark.frameworks

TASKS = str(Path(__file__).parent / "tasks")
SEARCH = {"id": "c1", "name": "search_products", "arguments": {"query": "office chair"}}
STOCK = {"id": "c2", "name": "check_stock", "arguments": {"sku": "SKU-1001"}}


def _harness(api: str):
    from probegate.harnesses.openai_agents import OpenAIAgentsHarness

    return OpenAIAgentsHarness(api)  # type: ignore[arg-type]


def test_responses_agent_sends_the_probe_schemas_and_call_outputs(rig, task_set: TaskSet) -> None:
    rig.script.push(Turn(tool_calls=[SEARCH], reasoning="Find the SKU first."), Turn(tool_calls=[STOCK]),
                    Turn("We have 25 in stock."))
    outcome = rig.attempt(_harness("responses"), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer, outcome.result.steps) == ("answered", "We have 25 in stock.", 3)
    assert [r.path for r in rig.script.requests] == ["/v1/responses"] * 3
    first = rig.script.requests[0].json()
    check_stock = next(t for t in first["tools"] if t["name"] == "check_stock")
    assert check_stock["strict"] is False, "the probe's schema goes as served, not rewritten by strict mode"
    assert check_stock["parameters"]["required"] == ["sku"] and "warehouse" in check_stock["parameters"]["properties"]
    assert first["input"] == [{"role": "user", "content": "How many ErgoFlex office chairs do we have in stock in total?"}]
    assert "previous_response_id" not in first and "stream" not in first
    last = rig.script.requests[2].json()["input"]
    kinds = [item.get("type") for item in last[1:]]
    assert kinds == ["reasoning", "function_call", "function_call_output", "function_call", "function_call_output"]
    assert last[-1]["call_id"] == "c2" and json.loads(last[-1]["output"])["in_stock"] == 25
    assert [(c.tool, c.status) for c in rig.probe_calls()] == [("search_products", "ok"), ("check_stock", "ok")]
    exchanges = rig.exchanges()
    assert len(exchanges) == 3
    assert all(e.response_body["id"].startswith("resp_") for e in exchanges), "the scorer chains on the response id"


def test_chat_agent_speaks_chat_completions(rig, task_set: TaskSet) -> None:
    rig.script.push(Turn(tool_calls=[SEARCH]), Turn(tool_calls=[STOCK]), Turn("We have 25 in stock."))
    outcome = rig.attempt(_harness("chat"), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer) == ("answered", "We have 25 in stock.")
    assert [r.path for r in rig.script.requests] == ["/v1/chat/completions"] * 3
    tool_turn = rig.request_messages(2)[-1]
    assert tool_turn["tool_call_id"] == "c2" and json.loads(tool_turn["content"])["in_stock"] == 25


def test_raw_arguments_reach_the_probe_as_the_model_wrote_them(rig, task_set: TaskSet) -> None:
    rig.script.push(Turn(tool_calls=[{"id": "c1", "name": "check_stock", "arguments": '{"sku": "SKU-1001",}'}]),
                    Turn("Sorry."))
    rig.attempt(_harness("responses"), task_set, "stock-total")
    (call,) = rig.probe_calls()
    assert call.raw_args == '{"sku": "SKU-1001",}'
    observation = rig.script.requests[1].json()["input"][-1]
    assert observation["type"] == "function_call_output" and observation["call_id"] == "c1"


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_max_turns_is_max_steps(rig, task_set: TaskSet, api: str) -> None:
    rig.script.handler = lambda request: Turn(tool_calls=[{"name": "get_price", "arguments": {"sku": "SKU-1001"}}])
    outcome = rig.attempt(_harness(api), task_set, "stock-total")
    assert outcome.result.stop == "max_steps"
    assert len(rig.exchanges()) == 8, "stock-total allows 8 model turns"


def test_a_model_error_ends_the_attempt_as_an_error(rig, task_set: TaskSet) -> None:
    rig.script.push(Reply.json({"error": {"message": "model crashed"}}, status=500))
    outcome = rig.attempt(_harness("responses"), task_set, "stock-total")
    assert outcome.result.stop == "error"
    assert "InternalServerError" in (outcome.result.error or "")
    assert len(rig.script.requests) == 1, "no retries: the failure is the measurement"


@pytest.mark.parametrize("harness", ["openai-agents", "openai-agents-chat"])
def test_run_is_scored_from_the_wire(harness: str, tmp_path: Path) -> None:
    model = serve_in_thread(ScriptedUpstream([Turn(tool_calls=[SEARCH]), Turn(tool_calls=[STOCK]), Turn("We have 25 in stock.")]))
    try:
        report = execute(RunConfig(task_set=TASKS, harness=harness, model="test-model", store=f"sqlite:///{tmp_path / 's.db'}",
                                   task_ids=("stock-total",), run_id="r1", output_dir=tmp_path, model_endpoint=model.url))
    finally:
        model.stop()
    assert [o.passed for o in report.outcomes] == [True]
    trace = json.loads((tmp_path / "r1" / "traces" / "stock-total-0.json").read_text())
    steps = trace["trajectory"]["steps"]
    assert [(s["tool_name"], s["tool_call_id"], s["parse_kind"]) for s in steps] == [
        ("search_products", "c1", "fc"), ("check_stock", "c2", "fc"), (None, None, "text")]
    assert json.loads(steps[1]["observation"])["in_stock"] == 25, "the observation is joined by call id"
    assert [(p["step_id"], p["joined_by"]) for p in trace["trajectory"]["probe_calls"]] == [(0, "call"), (1, "call")]
    assert [t["exchanges"] for t in trace["trajectory"]["threads"]] == [[0, 1, 2]]
    assert trace["trajectory"]["final_answer"] == "We have 25 in stock."
    summary = json.loads((tmp_path / "r1" / "summary.json").read_text())
    assert summary["headline"]["passed"] == 1 and summary["failures"]["labels"] == {}


def test_scripted_upstream_streams_responses_through_the_gateway(rig) -> None:
    """The scripted Responses stream is what the openai SDK parses, and the gateway reassembles it."""
    rig.script.push(Turn("25 in stock.", tool_calls=[STOCK], reasoning="Check it."))
    base = f"{rig.gateway.url}/r/run1/stock-total/0/v1"
    with openai.OpenAI(base_url=base, api_key="k", max_retries=0, http_client=httpx.Client(timeout=30)) as client:
        events = list(client.responses.create(model="test-model", input="How many?", stream=True))
    assert events[-1].type == "response.completed"
    assert [i.type for i in events[-1].response.output] == ["reasoning", "message", "function_call"]
    raw = rig.script.requests[0]
    assert raw.path == "/v1/responses"
    rig.gateway.writer.flush()
    (exchange,) = rig.exchanges()
    assistant = exchange.completion["assistant"]
    assert (assistant["content"], assistant["reasoning"], assistant["finish_reason"]) == ("25 in stock.", "Check it.", "completed")
    assert [(c["id"], c["arguments"]) for c in assistant["tool_calls"]] == [("c2", {"sku": "SKU-1001"})]
    assert exchange.response_raw is not None and b"[DONE]" not in exchange.response_raw
    assert exchange.response_raw.startswith(b"event: response.created\n")
    assert exchange.response_body["id"] == events[-1].response.id, "the scorer chains on the response id"
