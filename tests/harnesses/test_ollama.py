"""The ``ollama`` harness: an agent loop on Ollama's native ``/api/chat``, end to end through
the real gateway and probes on a scripted model that answers in Ollama's own form, and
scored from that native wire."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from probegate.harnesses.ollama_chat import OllamaHarness, native_chat_url
from probegate.harnesses.registry import expand_harnesses, get_harness
from probegate.runner.execute import RunConfig, execute
from probegate.scorer import reconstruct, task_scorer
from probegate.tasks.loader import TaskSet
from probegate.testing import Reply, Turn, ollama_chat_stream

TASKS_DIR = Path(__file__).parent / "tasks"
SEARCH = {"name": "search_products", "arguments": {"query": "office chair"}}
STOCK = {"name": "check_stock", "arguments": {"sku": "SKU-1001"}}
ANSWER = "We have 25 ErgoFlex chairs in stock."


@pytest.mark.parametrize(("base", "url"), [
    ("http://gw/r/run/t01/0/v1", "http://gw/r/run/t01/0/api/chat"),
    ("http://gw/r/run/t01/0/v1/", "http://gw/r/run/t01/0/api/chat"),
    ("http://127.0.0.1:11434", "http://127.0.0.1:11434/api/chat"),
])
def test_native_chat_url(base: str, url: str) -> None:
    assert native_chat_url(base) == url


@pytest.mark.filterwarnings("ignore::ImportWarning")  # "all" imports CrewAI when installed: it warns about itself
def test_registered_but_not_in_all() -> None:
    assert get_harness("ollama").name == "ollama"
    assert "ollama" not in expand_harnesses("all")[0]
    assert expand_harnesses("fc,ollama")[0] == ["fc", "ollama"]


@pytest.mark.parametrize("stream", [True, False], ids=["ndjson", "json"])
def test_tool_calls_then_an_answer_scored_from_the_native_wire(stream: bool, rig, task_set: TaskSet) -> None:
    rig.script.push(Turn(tool_calls=[SEARCH]), Turn(tool_calls=[STOCK]), Turn(ANSWER))
    outcome = rig.attempt(OllamaHarness(stream=stream, num_predict=256), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer, outcome.result.steps) == ("answered", ANSWER, 3)

    # the requests went to /api/chat in Ollama's form
    assert [r.path for r in rig.script.requests] == ["/api/chat"] * 3
    first = rig.script.requests[0].json()
    assert (first["stream"], first["options"]) == (stream, {"temperature": 0.0, "num_predict": 256})
    assert [t["function"]["name"] for t in first["tools"]] == ["search_products", "check_stock", "get_price"]
    history = rig.request_messages(2)
    # the assistant turn is kept as Ollama sent it (arguments an object, no id); results carry tool_name
    assert history[-2] == {"role": "assistant", "content": "", "tool_calls": [{"function": STOCK}]}
    assert (history[-1]["role"], history[-1]["tool_name"], "tool_call_id" in history[-1]) == ("tool", "check_stock", False)
    assert json.loads(history[-1]["content"])["in_stock"] == 25

    # the gateway recorded each exchange in the ollama_chat dialect
    exchanges = rig.exchanges()
    assert [(e.path, e.status_code, e.stream_format) for e in exchanges] == [
        ("/api/chat", 200, "ndjson" if stream else None)] * 3
    completion = exchanges[1].completion
    assert completion["assistant"]["tool_calls"] == [
        {"id": None, "name": "check_stock", "arguments": {"sku": "SKU-1001"},
         "arguments_raw": '{"sku":"SKU-1001"}', "repaired": False}]
    assert (completion["usage"], completion["flags"]) == ({"prompt_tokens": 10, "completion_tokens": 5}, [])

    # scored: each call a step joined to its probe call, its observation the tool message, the answer judged
    trajectory = reconstruct(rig.engine, "run1", "stock-total", 0, task_set=str(TASKS_DIR))
    steps = trajectory.call_steps()
    assert [(s.tool_name, s.tool_args, s.parse, s.parse_kind) for s in steps] == [
        ("search_products", SEARCH["arguments"], "ok", "fc"), ("check_stock", STOCK["arguments"], "ok", "fc")]
    assert [trajectory.probe_calls[s.probe_call].tool for s in steps if s.probe_call is not None] == [
        "search_products", "check_stock"]
    assert json.loads(steps[1].observation)["in_stock"] == 25
    assert [t.exchanges for t in trajectory.threads] == [[e.seq for e in exchanges]]
    assert trajectory.final_answer == ANSWER
    assert (trajectory.usage.model_calls, trajectory.usage.prompt_tokens) == (3, 30)
    score = task_scorer()(trajectory, task_set.get("stock-total"))
    assert score.passed, score.explanation


def test_parallel_calls_of_one_tool_are_told_apart_by_position(rig, task_set: TaskSet) -> None:
    """Two calls of one tool in a turn, no ids: each result is paired by its place."""
    other = {"name": "check_stock", "arguments": {"sku": "SKU-1002"}}
    rig.script.push(Turn(tool_calls=[STOCK, other]), Turn(ANSWER))
    assert rig.attempt(OllamaHarness(), task_set, "stock-total").result.stop == "answered"
    trajectory = reconstruct(rig.engine, "run1", "stock-total", 0, task_set=str(TASKS_DIR))
    steps = trajectory.call_steps()
    assert [(s.tool_args, s.call_index) for s in steps] == [(STOCK["arguments"], 0), (other["arguments"], 1)]
    assert [json.loads(s.observation).get("sku") for s in steps] == ["SKU-1001", "SKU-1002"]
    assert [trajectory.probe_calls[s.probe_call].args for s in steps] == [STOCK["arguments"], other["arguments"]]


def test_thinking_is_kept_in_the_history_and_scored_as_the_thought(rig, task_set: TaskSet) -> None:
    lines = ollama_chat_stream(tool_calls=[STOCK])
    lines.insert(0, {"model": "test-model", "message": {"role": "assistant", "content": "", "thinking": "Check the stock."},
                     "done": False})
    rig.script.push(Reply.ndjson(lines), Turn(ANSWER))
    assert rig.attempt(OllamaHarness(), task_set, "stock-total").result.stop == "answered"
    assert rig.request_messages(1)[-2] == {"role": "assistant", "content": "", "thinking": "Check the stock.",
                                           "tool_calls": [{"function": STOCK}]}
    trajectory = reconstruct(rig.engine, "run1", "stock-total", 0, task_set=str(TASKS_DIR))
    assert [(s.tool_name, s.thought) for s in trajectory.call_steps()] == [("check_stock", "Check the stock.")]


def test_failures_end_the_attempt(rig, task_set: TaskSet) -> None:
    rig.script.push(Reply.json({"error": "model 'test-model' not found"}, status=404))
    failed = rig.attempt(OllamaHarness(), task_set, "stock-total", attempt=0)
    assert (failed.result.stop, failed.result.error) == (
        "error", "the model server answered HTTP 404: model 'test-model' not found")
    rig.script.push(Reply.ndjson([{"model": "m", "message": {"role": "assistant", "content": "half"}, "done": False}]))
    cut = rig.attempt(OllamaHarness(), task_set, "stock-total", attempt=1)
    assert (cut.result.stop, cut.result.error) == ("error", "the model server's stream ended without its done: true line")
    rig.script.push(Reply.ndjson([{"error": "out of memory"}]))
    reported = rig.attempt(OllamaHarness(), task_set, "stock-total", attempt=2)
    assert reported.result.error == "the model server reported an error: out of memory"
    rig.script.push(Turn(""))
    assert rig.attempt(OllamaHarness(), task_set, "stock-total", attempt=3).result.stop == "parse_failure"
    rig.script.push(Turn(tool_calls=[{"name": "check_stock", "arguments": "{'sku': 1"}]))
    bad = rig.attempt(OllamaHarness(), task_set, "stock-total", attempt=4)
    assert (bad.result.stop, bad.result.error) == (
        "parse_failure", "arguments of check_stock are not valid JSON: \"{'sku': 1\"")


def test_a_run_and_its_replay_give_the_same_summary(tmp_path: Path) -> None:
    """``probegate run --harness ollama`` on a scripted Ollama, then replayed from its captures."""
    from probegate.gateway.app import GatewayConfig
    from probegate.gateway.replay import ReplaySettings
    from probegate.runner.compose import build_app
    from probegate.store import CaptureWriter, open_store
    from probegate.testing import ScriptedUpstream, serve_in_thread

    def config(store: str, out: Path, **where: str) -> RunConfig:
        return RunConfig(task_set=str(TASKS_DIR), harness="ollama", model="test-model", store=store,
                         task_ids=("stock-total",), run_id="ollama-run", output_dir=out, **where)

    script = ScriptedUpstream([Turn(tool_calls=[SEARCH]), Turn(tool_calls=[STOCK]), Turn(ANSWER)])
    model = serve_in_thread(script)
    recorded = f"sqlite:///{tmp_path / 'recorded.db'}"
    try:
        # given as an OpenAI base URL, as users give Ollama's: /api/chat still reaches the server's root
        first = execute(config(recorded, tmp_path / "first", model_endpoint=f"{model.url}/v1"))
    finally:
        model.stop()
    assert [(o.passed, o.result.final_answer) for o in first.outcomes] == [(True, ANSWER)], first.outcomes
    assert [r.path for r in script.requests] == ["/api/chat"] * 3

    replayed = open_store(f"sqlite:///{tmp_path / 'replayed.db'}")
    writer = CaptureWriter(replayed)
    app = build_app(GatewayConfig(upstream="", replay=ReplaySettings("ollama-run"), replay_store=recorded),
                    engine=replayed, writer=writer)
    server = serve_in_thread(app)
    try:
        second = execute(config(f"sqlite:///{tmp_path / 'replayed.db'}", tmp_path / "second", gateway=server.url))
    finally:
        server.stop()
        writer.close()
    assert [(o.passed, o.result.final_answer) for o in second.outcomes] == [(True, ANSWER)]
    a, b = tmp_path / "first" / "ollama-run", tmp_path / "second" / "ollama-run"
    assert (a / "summary.json").read_bytes() == (b / "summary.json").read_bytes()
    summary = json.loads((a / "summary.json").read_text())
    assert (summary["run"]["harness"], summary["run"]["shims"]) == ("ollama", [])
