"""score_run / reconstruct over real captures: an openai-SDK agent through the real gateway
and probes (SQLite and PostgreSQL), including an upstream that rejects a request."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from sqlalchemy.engine import Engine

from probegate.errors import TaskSetError, UsageError
from probegate.store.models import Run
from probegate.testing import Reply, ScriptedUpstream, Turn
from probegate.scorer.pipeline import reconstruct, score_run
from probegate.scorer.report.outputs import write_outputs
from tests.scorer.rowkit import (
    TASKS_DIR,
    AttemptBuilder,
    assistant_message,
    completion,
    write,
)

TASK = "weather-berlin"


def _agent(gw: Any, run: str, *, stream_second: bool) -> None:
    """A minimal function-calling agent: model -> probe -> model, all through the gateway."""
    tools_url = f"{gw.url}/r/{run}/{TASK}/0/tools"
    httpx.post(f"{gw.url}/probegate/attempts/reset", json={"run": run, "task": TASK, "tools": ["get_weather", "get_forecast", "get_time"]}).raise_for_status()
    tools = httpx.get(tools_url).json()["tools"]
    client = openai.OpenAI(base_url=gw.base(run, TASK, 0), api_key="k", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "What is the weather in Berlin right now?"}]
    first = client.chat.completions.create(model="m", messages=messages, tools=tools)
    call = first.choices[0].message.tool_calls[0]
    result = httpx.post(f"{tools_url}/{call.function.name}", content=call.function.arguments)
    messages += [first.choices[0].message.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": call.id, "content": result.text}]
    if stream_second:
        for _chunk in client.chat.completions.create(model="m", messages=messages, tools=tools, stream=True):
            pass
    else:
        client.chat.completions.create(model="m", messages=messages, tools=tools)


def _run_row(engine: Engine, run: str) -> None:
    write(engine, run=Run(id=run, task_set=str(TASKS_DIR), harness="fc", model="m", status="done"))


@pytest.mark.parametrize("stream", [False, True])
def test_sdk_agent_through_the_gateway_is_rebuilt_and_scored(upstream, gateway, engine: Engine, stream: bool, tmp_path) -> None:  # type: ignore[no-untyped-def]
    script: ScriptedUpstream = upstream[0]
    script.push(Turn(tool_calls=[{"name": "get_weather", "arguments": {"city": "Berlin"}}]), Turn("It is cloudy in Berlin, 6 degrees."))
    _agent(gateway, "g1", stream_second=stream)
    gateway.flush()
    _run_row(engine, "g1")

    t = reconstruct(engine, "g1", TASK, 0)
    assert [(s.tool_name, s.tool_args, s.probe_call) for s in t.steps] == [("get_weather", {"city": "Berlin"}, 0), (None, None, None)]
    assert json.loads(t.steps[0].observation)["condition"] == "cloudy"
    assert t.probe_calls[0].status == "ok" and t.world_state is not None
    assert t.final_answer == "It is cloudy in Berlin, 6 degrees."

    scored = score_run(engine, "g1")
    assert scored.missing_tasks == ("email-jonas", "order-superset", "orders-unordered", "reminder-subset", "weather-fault")
    result = scored.result(TASK, 0)
    assert result.score.passed and result.score.value == 1.0
    paths = write_outputs(scored, tmp_path / "g1")
    summary = json.loads(paths["summary"].read_text())
    assert summary["headline"]["reach"] == 1.0 and summary["tiers"]["P0"]["reach"] == 1.0


def test_upstream_rejection_is_interop_and_counted_as_a_failure(upstream, gateway, engine: Engine) -> None:  # type: ignore[no-untyped-def]
    script: ScriptedUpstream = upstream[0]
    detail = "[{'type': 'string_type', 'loc': ('body', 'messages', 1, 'content'), 'msg': 'Input should be a valid string', 'input': None}]"
    script.push(Turn(tool_calls=[{"name": "get_weather", "arguments": {"city": "Berlin"}}]), Reply.json({"error": {"message": detail, "type": "internal_server_error"}}, status=500))
    with pytest.raises(openai.InternalServerError):
        _agent(gateway, "g2", stream_second=False)
    gateway.flush()
    _run_row(engine, "g2")

    scored = score_run(engine, "g2")
    result = scored.result(TASK, 0)
    assert result.score.interop and result.score.labels[0] == "interop"
    assert "messages.1.content" in result.score.attributions[0].evidence
    summary = scored.summary()
    assert summary["interop"]["attempts"] == 1 and summary["interop"]["fields"] == ["messages.1.content"]
    assert summary["interop"]["pairs"] and summary["interop"]["fixes"] == {"interop.upstream_rejected": "null-content"}
    head = summary["headline"]
    assert (head["attempts"], head["passed"], head["reach"], summary["overall"]["attempts"]) == (1, 0, 0.0, 1)
    assert (head["interop_attempts"], head["served_attempts"], head["reach_served"]) == (1, 0, None)
    assert head["valid"] is False and "1 of 1 attempts (100.0 %) failed on interop faults" in head["invalid_reason"]


def test_same_store_gives_byte_identical_outputs(engine: Engine, tmp_path) -> None:  # type: ignore[no-untyped-def]
    for attempt in range(3):
        b = AttemptBuilder(task=TASK, attempt=attempt)
        b.fc_chain("Weather?", [("get_weather", {"city": "Berlin"}, {"condition": "cloudy"})] if attempt != 1 else [], "cloudy")
        write(engine, *b.rows)
    _run_row(engine, "r1")
    first = write_outputs(score_run(engine, "r1"), tmp_path / "a")
    second = write_outputs(score_run(engine, "r1"), tmp_path / "b")
    for key in ("summary", "scores"):
        assert first[key].read_bytes() == second[key].read_bytes()
    names = sorted(p.name for p in first["traces"].iterdir())
    assert names == [f"{TASK}-0.json", f"{TASK}-1.json", f"{TASK}-2.json"]
    assert all((first["traces"] / n).read_bytes() == (second["traces"] / n).read_bytes() for n in names)


def test_errors_are_one_clear_line(engine: Engine) -> None:
    with pytest.raises(UsageError, match="no run 'nope'"):
        score_run(engine, "nope")
    b = AttemptBuilder(run="bare")
    b.exchange([{"role": "user", "content": "x"}], completion("y"))
    write(engine, *b.rows)
    with pytest.raises(TaskSetError, match="pass --task-set"):
        score_run(engine, "bare")
    with pytest.raises(UsageError, match="no captures for task 'zz'"):
        reconstruct(engine, "bare", "zz", 0)
    assert reconstruct(engine, "bare", "t1", 0).final_answer == "y"
    scored = score_run(engine, "bare", task_set=str(TASKS_DIR))
    assert scored.unknown_tasks == ("t1",) and scored.results == ()


def test_call_source_falls_back_to_steps_only_for_runs_without_probes(engine: Engine) -> None:
    from probegate.scorer.rebuild.load import run_uses_probes

    for run in ("no-probes", "probes-unused"):
        b = AttemptBuilder(run=run, task=TASK)
        b.exchange([{"role": "user", "content": "x"}], completion(None, [{"id": "a", "name": "get_weather", "arguments": {"city": "Berlin"}}]))
        b.exchange([{"role": "user", "content": "x"}, assistant_message(None, [{"id": "a", "name": "get_weather", "arguments": {"city": "Berlin"}}]), {"role": "tool", "tool_call_id": "a", "content": "?"}], completion("It is cloudy."))
        if run == "probes-unused":
            b.world({"side_effects": []})
        write(engine, *b.rows, run=Run(id=run, task_set=str(TASKS_DIR)))
    assert not run_uses_probes(engine, "no-probes") and run_uses_probes(engine, "probes-unused")
    assert score_run(engine, "no-probes").result(TASK, 0).score.passed
    unused = score_run(engine, "probes-unused").result(TASK, 0)
    assert unused.trajectory.call_source == "probes" and not unused.score.passed
