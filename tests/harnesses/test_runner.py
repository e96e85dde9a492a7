"""The runner end to end: a real gateway and probes started in-process, the store, the scorer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from probegate.runner.execute import RunConfig, SilentEvents, check_config, execute
from probegate.errors import TaskSetError, UpstreamError, UsageError
from probegate.store import Exchange, ProbeCall, Run, open_store
from probegate.testing import (
    ReceivedRequest,
    RunningServer,
    ScriptedUpstream,
    Turn,
    serve_in_thread,
)

TASKS = str(Path(__file__).parent / "tasks")


def stock_agent_model(request: ReceivedRequest) -> Turn:
    """A model that solves stock-total from whatever the conversation holds (order-free,
    so attempts may run concurrently)."""
    last = request.json()["messages"][-1]
    if last["role"] == "user":
        return Turn(tool_calls=[{"name": "search_products", "arguments": {"query": "office chair"}}])
    result = json.loads(last["content"])
    if "products" in result:
        return Turn(tool_calls=[{"name": "check_stock", "arguments": {"sku": result["products"][0]["sku"]}}])
    return Turn(f"We have {result['in_stock']} chairs in stock.")


@pytest.fixture
def model() -> RunningServer:
    server = serve_in_thread(ScriptedUpstream(handler=stock_agent_model))
    yield server
    server.stop()


def rows(engine: Engine, run_id: str) -> tuple[Run, list[Exchange], list[ProbeCall]]:
    with Session(engine) as session:
        run = session.get(Run, run_id)
        exchanges = list(session.exec(select(Exchange).where(Exchange.run_id == run_id)))
        calls = list(session.exec(select(ProbeCall).where(ProbeCall.run_id == run_id)))
    assert run is not None
    return run, exchanges, calls


def test_repeats_with_concurrency(model: RunningServer, store_url: str, tmp_path: Path) -> None:
    config = RunConfig(task_set=TASKS, harness="fc", model="test-model", model_endpoint=model.url, store=store_url,
                       repeats=2, concurrency=2, task_ids=("stock-total",), run_id="run-rc", output_dir=tmp_path)
    report = execute(config)
    assert report.status == "done"
    assert sorted((o.key, o.result.stop, o.passed) for o in report.outcomes) == [
        ("stock-total/0", "answered", True), ("stock-total/1", "answered", True)]
    engine = open_store(store_url)
    run, exchanges, calls = rows(engine, "run-rc")
    engine.dispose()
    assert (run.status, run.harness, run.model, run.task_set, run.upstream) == (
        "done", "fc", "test-model", TASKS, model.url)
    params = run.params or {}
    assert [t["id"] for t in params["task_snapshot"]["tasks"]] == params["task_ids"]
    assert (params["repeats"], params["concurrency"], params["task_ids"], params["lang"]) == (
        2, 2, ["stock-total"], "en")
    assert params["chat_handler"] is None  # not the embedded server: its template is its own
    assert params["outcomes"]["stock-total/1"]["final_answer"] == "We have 25 chairs in stock."
    assert sorted((e.attempt) for e in exchanges) == [0, 0, 0, 1, 1, 1]
    assert sorted((c.attempt, c.tool) for c in calls) == [
        (0, "check_stock"), (0, "search_products"), (1, "check_stock"), (1, "search_products")]
    # scored at the end, the report written
    assert report.score is not None and report.score.error is None
    assert report.score.report_path == tmp_path / "run-rc" / "report.html" and report.score.report_path.exists()
    assert report.score.run_score.summary()["headline"]["passed"] == 2


def test_a_model_that_goes_down_fails_attempts_not_the_run(sqlite_url: str, tmp_path: Path) -> None:
    # up when the run starts (an endpoint down from the start is refused: test_an_unreachable_model_is_refused)
    server = serve_in_thread(ScriptedUpstream(handler=stock_agent_model))

    class StopTheModel(SilentEvents):
        def run_started(self, run_id: str, total: int) -> None:
            server.stop()

    config = RunConfig(task_set=TASKS, harness="react", model="m", model_endpoint=server.url,
                       store=sqlite_url, task_ids=("stock-total",), run_id="run-down", output_dir=tmp_path)
    report = execute(config, StopTheModel())
    assert report.status == "done"
    [outcome] = report.outcomes
    assert (outcome.result.stop, outcome.passed) == ("error", False)
    engine = open_store(sqlite_url)
    _, exchanges, _ = rows(engine, "run-down")
    engine.dispose()
    assert [e.status_code for e in exchanges] == [502]  # the gateway recorded the failed exchange


def test_an_unreachable_model_is_refused(sqlite_url: str) -> None:
    config = RunConfig(task_set=TASKS, harness="react", model="m", model_endpoint="http://127.0.0.1:9",
                       store=sqlite_url, task_ids=("stock-total",), run_id="run-down")
    with pytest.raises(UpstreamError, match=re.escape("cannot reach --model-endpoint http://127.0.0.1:9 (")):
        execute(config)
    engine = open_store(sqlite_url)
    with Session(engine) as session:
        assert list(session.exec(select(Run))) == []  # refused before the run row
    engine.dispose()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"repeats": 0}, "--repeats must be at least 1"),
        ({"concurrency": 0}, "--concurrency must be at least 1"),
        ({"max_steps": 0}, "--max-steps must be at least 1"),
        ({"lang": "fr"}, "--lang must be en or zh"),
        ({"feedback": "loud"}, "--feedback must be plain or actionable"),
        ({"task_timeout": 0}, "--task-timeout must be positive"),
        ({"model_endpoint": "localhost:11434"}, "--model-endpoint must be an http(s) URL"),
        ({"model_endpoint": "http://m", "model": None}, "--model NAME is required with --model-endpoint or --gateway"),
        ({"gateway": "http://g", "model": ""}, "--model NAME is required with --model-endpoint or --gateway"),
        ({"model_endpoint": "http://m", "model_path": "x.gguf"}, "--model-path serves a local GGUF"),
        ({"compat": ("bogus",)}, "unknown --compat rule 'bogus'"),
        ({"gateway": "http://g", "compat": ("null-content",)}, "--compat applies to the in-process gateway"),
    ],
)
def test_bad_options(changes: dict, message: str) -> None:
    config = RunConfig(**{"task_set": TASKS, "harness": "fc", "model": "m", **changes})
    with pytest.raises(UsageError, match=re.escape(message)):
        check_config(config)


def test_refusals_before_anything_starts(sqlite_url: str) -> None:
    base = {"harness": "fc", "model": "m", "model_endpoint": "http://127.0.0.1:9", "store": sqlite_url}
    with pytest.raises(TaskSetError, match="no task set"):
        execute(RunConfig(task_set="/no/such/set", **base))
    with pytest.raises(TaskSetError, match="unknown task id"):
        execute(RunConfig(task_set=TASKS, task_ids=("nope",), **base))
    with pytest.raises(UsageError, match="is not a file"):
        execute(RunConfig(task_set=TASKS, harness="fc", model_path="/no/such.gguf", store=sqlite_url))
    engine = open_store(sqlite_url)
    with Session(engine) as session:
        assert list(session.exec(select(Run))) == []  # no run row was created
    engine.dispose()


def test_an_external_gateway(model: RunningServer, gateway_factory, store_url: str, tmp_path: Path) -> None:
    gateway = gateway_factory(model.url)  # a running gateway with probes, writing to the same store
    config = RunConfig(task_set=TASKS, harness="fc", model="test-model", gateway=gateway.url, store=store_url,
                       task_ids=("stock-total",), run_id="run-ext", output_dir=tmp_path)
    report = execute(config)
    assert (report.status, [o.passed for o in report.outcomes]) == ("done", [True])
    engine = open_store(store_url)
    run, exchanges, calls = rows(engine, "run-ext")
    engine.dispose()
    assert (run.upstream, run.params["external_gateway"]) == (None, gateway.url)
    assert len(exchanges) == 3 and [c.tool for c in sorted(calls, key=lambda c: c.seq)] == [
        "search_products", "check_stock"]
