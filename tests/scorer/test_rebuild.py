"""Rebuilding trajectories from real store rows (SQLite and PostgreSQL)."""

from __future__ import annotations

import json

from sqlalchemy.engine import Engine

from probegate.store.models import Exchange
from probegate.scorer.rebuild.load import load_attempts
from probegate.scorer.rebuild.build import build_trajectory, trajectory_json
from probegate.scorer.rebuild.rows import RunInfo
from probegate.scorer.trajectory import Trajectory
from tests.scorer.rowkit import AttemptBuilder, assistant_message, completion, write

RUN = RunInfo("r1", "tasks", "fc", "m", "done", {})


def rebuild(engine: Engine, b: AttemptBuilder, **kw: object) -> Trajectory:
    write(engine, *b.rows)
    rows = load_attempts(engine, b.run)[(b.task, b.attempt)]
    return build_trajectory(rows, kw.pop("run", RUN), **kw)  # type: ignore[arg-type]


def test_function_calling_chain(engine: Engine) -> None:
    b = AttemptBuilder()
    b.fc_chain("Email Jonas", [("find_contact", {"query": "Jonas"}, {"email": "j@x.example"}), ("send_email", {"to": "j@x.example"}, {"status": "sent"})], "Sent it.")
    b.world({"side_effects": [{"kind": "email"}]})
    sent = sum(row.prompt_tokens for row in b.rows if isinstance(row, Exchange))
    t = rebuild(engine, b)
    assert [(s.tool_name, s.tool_args, s.parse, s.parse_kind) for s in t.steps] == [
        ("find_contact", {"query": "Jonas"}, "ok", "fc"),
        ("send_email", {"to": "j@x.example"}, "ok", "fc"),
        (None, None, "ok", "text"),
    ]
    assert [json.loads(s.observation) if s.observation else None for s in t.steps] == [{"email": "j@x.example"}, {"status": "sent"}, None]
    assert [s.probe_call for s in t.steps] == [0, 1, None]
    assert [(p.step_id, p.joined_by) for p in t.probe_calls] == [(0, "call"), (1, "call")]
    assert t.final_answer == "Sent it."
    assert t.usage.model_calls == 3 and t.usage.prompt_tokens == sent and t.usage.latency_ms == 300.0
    assert t.world_state == {"side_effects": [{"kind": "email"}]}
    assert len(t.threads) == 1 and not t.loop_detected and not t.max_steps_hit
    assert Trajectory.model_validate_json(trajectory_json(t)) == t


def test_react_text_protocol(engine: Engine) -> None:
    b = AttemptBuilder(tools=None)
    out = 'Thought: I need the weather.\nAction: get_weather\nAction Input: {"city": "Berlin"}'
    first = [{"role": "user", "content": "Weather in Berlin?"}]
    b.exchange(first, completion(out))
    b.probe("get_weather", {"city": "Berlin"}, result={"condition": "cloudy"})
    second = first + [{"role": "assistant", "content": out}, {"role": "user", "content": 'Observation: {"condition": "cloudy"}'}]
    b.exchange(second, completion("Thought: done\nFinal Answer: cloudy"))
    t = rebuild(engine, b, tools=["get_weather"])
    assert t.steps[0].tool_name == "get_weather" and t.steps[0].parse_kind == "react"
    assert t.steps[0].thought == "I need the weather."
    assert t.steps[0].observation == '{"condition": "cloudy"}'
    assert t.steps[0].probe_call == 0
    assert t.final_answer == "cloudy"


def test_parallel_calls_share_a_turn_and_usage_is_counted_once(engine: Engine) -> None:
    b = AttemptBuilder()
    calls = [{"id": "a", "name": "get_weather", "arguments": {"city": "Oslo"}}, {"id": "b", "name": "get_weather", "arguments": {"city": "Rome"}}]
    msgs = [{"role": "user", "content": "Oslo and Rome?"}]
    b.exchange(msgs, completion(None, calls), prompt_tokens=10)
    b.probe("get_weather", {"city": "Rome"})
    b.probe("get_weather", {"city": "Oslo"})
    t = rebuild(engine, b)
    assert [(s.exchange_seq, s.call_index, s.tool_args["city"]) for s in t.steps] == [(0, 0, "Oslo"), (0, 1, "Rome")]
    assert [s.prompt_tokens for s in t.steps] == [10, None]
    assert [s.probe_call for s in t.steps] == [1, 0]
    assert t.final_answer is None


def test_sub_agent_thread_and_final_answer_from_the_main_thread(engine: Engine) -> None:
    b = AttemptBuilder()
    main = [{"role": "system", "content": "manager"}, {"role": "user", "content": "Do it"}]
    call = {"id": "d1", "name": "delegate", "arguments": {"task": "look up"}}
    b.exchange(main, completion(None, [call]))
    b.exchange([{"role": "system", "content": "worker"}, {"role": "user", "content": "look up"}], completion("worker result"))
    b.probe("delegate", {"task": "look up"}, result={"answer": "worker result"})
    back = main + [assistant_message(None, [call]), {"role": "tool", "tool_call_id": "d1", "content": "worker result"}]
    b.exchange(back, completion("All done."))
    t = rebuild(engine, b)
    assert [(th.thread, th.parent, th.exchanges) for th in t.threads] == [(0, None, [0, 2]), (1, 0, [1])]
    assert [s.thread for s in t.steps] == [0, 1, 0]
    assert t.final_answer == "All done."
    assert t.steps[0].observation == "worker result"


def test_failed_exchange_makes_no_step_but_stays_as_evidence(engine: Engine) -> None:
    b = AttemptBuilder()
    msgs = [{"role": "user", "content": "hi"}]
    body = {"error": {"message": "Input should be a valid string", "loc": ["body", "messages", 2, "content"]}}
    b.exchange(msgs, None, status=500, response_body=body)
    t = rebuild(engine, b)
    assert t.steps == [] and t.final_answer is None
    assert t.exchanges[0].status_code == 500 and t.exchanges[0].error_body == body
    assert t.usage.model_calls == 1


def test_max_steps_hit_needs_the_budget_spent_while_still_calling(engine: Engine) -> None:
    b = AttemptBuilder()
    msgs: list[dict] = [{"role": "user", "content": "loop"}]
    for i in range(3):
        call = {"id": f"c{i}", "name": "get_weather", "arguments": {"city": "Oslo"}}
        b.exchange(msgs, completion(None, [call]))
        b.probe("get_weather", {"city": "Oslo"})
        msgs = msgs + [assistant_message(None, [call]), {"role": "tool", "tool_call_id": f"c{i}", "content": "x"}]
    t = rebuild(engine, b, max_steps=3)
    assert t.max_steps_hit and t.loop_detected and t.loop is not None and t.loop.rule == "repeat_ok"
    assert not build_trajectory(load_attempts(engine, "r1")[("t1", 0)], RUN, max_steps=4).max_steps_hit
    run_override = RunInfo("r1", params={"max_steps": 2})
    assert build_trajectory(load_attempts(engine, "r1")[("t1", 0)], run_override, max_steps=10).max_steps_hit


def test_probe_less_runs_read_calls_from_steps(engine: Engine) -> None:
    b = AttemptBuilder()
    b.exchange([{"role": "user", "content": "x"}], completion(None, [{"id": "a", "name": "get_weather", "arguments": {"city": "Oslo"}}]))
    t = rebuild(engine, b, call_source="steps")
    assert t.call_source == "steps" and t.probe_calls == []
    from probegate.scorer.rebuild.calls import actual_calls

    assert [(c.tool, c.args, c.status) for c in actual_calls(t)] == [("get_weather", {"city": "Oslo"}, "ok")]


def test_unparseable_model_output_is_a_failed_step(engine: Engine) -> None:
    b = AttemptBuilder()
    bad = {"id": "a", "name": "get_weather", "arguments": None, "raw": '{"city": "Os'}
    b.exchange([{"role": "user", "content": "x"}], completion(None, [bad]))
    t = rebuild(engine, b)
    assert t.steps[0].parse == "failed" and "arguments_unparseable" in t.steps[0].parse_notes


def test_a_failed_next_exchange_still_bounds_the_join_window(engine: Engine) -> None:
    b = AttemptBuilder()
    first = {"id": "a", "name": "get_weather", "arguments": {"city": "Oslo"}}
    msgs = [{"role": "user", "content": "x"}]
    b.exchange(msgs, completion(None, [first]))
    later = msgs + [assistant_message(None, [first]), {"role": "tool", "tool_call_id": "a", "content": "not run"}]
    b.exchange(later, None, status=500, response_body={"error": "boom"})
    b.probe("get_weather", {"city": "Oslo"})
    t = rebuild(engine, b)
    assert t.steps[0].probe_call is None
    assert t.probe_calls[0].joined_by == "time"
