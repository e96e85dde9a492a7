"""Trajectories rebuilt from Responses exchanges (``POST /v1/responses``): calls matched
by ``call_id``, ``input`` arrays that replay history, ``previous_response_id`` chains
where the server keeps state, reasoning items kept as thoughts. Pure: the rows are
built in memory, each turn reassembled by the real wire code from a real response body.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from probegate.store.models import Exchange, ProbeCall
from probegate.testing import response_object
from probegate.wire.reassemble import reassemble
from probegate.scorer.rebuild.build import build_trajectory
from probegate.scorer.rebuild.rows import AttemptRows, RunInfo

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
RUN = RunInfo("r1", "tasks", "openai-agents", "m", "done", {})
TOOLS = [{"type": "function", "name": n, "parameters": {"type": "object"}} for n in ("get_weather", "send_email")]
USER = {"role": "user", "content": "Weather in Berlin and Porto?"}
BERLIN = {"id": "call_b", "name": "get_weather", "arguments": {"city": "Berlin"}}
PORTO = {"id": "call_p", "name": "get_weather", "arguments": {"city": "Porto"}}


def _exchange(seq: int, request: dict[str, Any], response: dict[str, Any]) -> Exchange:
    raw = json.dumps(response).encode()
    completion = reassemble(path="/v1/responses", request=request, body=raw).completion
    return Exchange(run_id="r1", task_id="t1", attempt=0, seq=seq, started_at=T0 + timedelta(seconds=2 * seq),
                    latency_ms=10.0, path="/v1/responses", request_body={"model": "m", "tools": TOOLS, **request},
                    status_code=200, response_body=response, completion=completion, model="m")


def _probe(seq: int, at: int, args: dict[str, Any], result: Any) -> ProbeCall:
    return ProbeCall(run_id="r1", task_id="t1", attempt=0, seq=seq, at=T0 + timedelta(seconds=at), tool="get_weather",
                     raw_args=json.dumps(args), args=args, status="ok", result=result)


def _output_items(response: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(item) for item in response["output"]]


def _outputs(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"type": "function_call_output", "call_id": cid, "output": out} for cid, out in pairs]


def _rebuild(*rows: Exchange | ProbeCall) -> Any:
    exchanges = tuple(r for r in rows if isinstance(r, Exchange))
    probes = tuple(r for r in rows if isinstance(r, ProbeCall))
    return build_trajectory(AttemptRows("r1", "t1", 0, exchanges, probes), RUN, tools=["get_weather", "send_email"])


def _stateless() -> tuple[Exchange, ...]:
    first = response_object("Checking both.", [BERLIN, PORTO], reasoning="two cities, two calls", response_id="resp_1")
    history = [USER, *_output_items(first), *_outputs(("call_p", '{"c": 19}'), ("call_b", '{"c": 11}'))]
    final = response_object("Berlin 11 °C, Porto 19 °C.", response_id="resp_2")
    return (_exchange(0, {"instructions": "Be brief.", "input": [USER]}, first),
            _exchange(1, {"instructions": "Be brief.", "input": history}, final))


def test_replayed_input_is_one_thread_and_results_pair_by_call_id() -> None:
    first, second = _stateless()
    t = _rebuild(first, _probe(1, 1, {"city": "Berlin"}, {"c": 11}), _probe(2, 1, {"city": "Porto"}, {"c": 19}), second)
    assert [th.exchanges for th in t.threads] == [[0, 1]]
    calls = [s for s in t.steps if s.tool_name]
    assert [(s.tool_call_id, s.tool_args) for s in calls] == [("call_b", {"city": "Berlin"}), ("call_p", {"city": "Porto"})]
    # the results came back in the other order: call_id decides, not position
    assert [s.observation for s in calls] == ['{"c": 11}', '{"c": 19}']
    assert [s.probe_call for s in calls] == [0, 1]
    assert calls[0].thought == "Checking both."
    assert t.final_answer == "Berlin 11 °C, Porto 19 °C."


def test_reasoning_item_is_the_thought_of_a_turn_without_text() -> None:
    turn = response_object(None, [BERLIN], reasoning="Berlin first", response_id="resp_r")
    t = _rebuild(_exchange(0, {"input": [USER]}, turn))
    assert (t.steps[0].thought, t.steps[0].parse_kind, t.steps[0].finish_reason) == ("Berlin first", "fc", "completed")


def test_previous_response_id_chain_joins_the_thread_and_its_observations() -> None:
    first = response_object(None, [BERLIN], response_id="resp_a")
    second = response_object(None, [PORTO], response_id="resp_b", previous_response_id="resp_a")
    third = response_object("Berlin 11 °C, Porto 19 °C.", response_id="resp_c", previous_response_id="resp_b")
    t = _rebuild(
        _exchange(0, {"instructions": "Be brief.", "input": [USER]}, first),
        _exchange(1, {"instructions": "Be brief.", "previous_response_id": "resp_a", "input": _outputs(("call_b", "11"))}, second),
        _exchange(2, {"instructions": "Be brief.", "previous_response_id": "resp_b", "input": _outputs(("call_p", "19"))}, third),
    )
    assert [th.exchanges for th in t.threads] == [[0, 1, 2]]
    assert [(s.tool_call_id, s.observation) for s in t.steps if s.tool_name] == [("call_b", "11"), ("call_p", "19")]
    assert t.final_answer == "Berlin 11 °C, Porto 19 °C."
    assert t.warnings == []


def test_a_chain_to_an_unknown_response_is_a_warning_not_a_new_agent() -> None:
    first = response_object(None, [BERLIN], response_id="resp_a")
    second = response_object("11 °C.", response_id="resp_b", previous_response_id="resp_gone")
    t = _rebuild(
        _exchange(0, {"input": [USER]}, first),
        _exchange(1, {"previous_response_id": "resp_gone", "input": _outputs(("call_b", "11"))}, second),
    )
    assert [th.exchanges for th in t.threads] == [[0, 1]], "the result answering call_b continues the thread"
    assert t.steps[0].observation == "11"
    assert len(t.warnings) == 1 and "'resp_gone'" in t.warnings[0] and "exchange 1" in t.warnings[0]


def test_a_fresh_input_without_the_history_is_a_new_thread() -> None:
    first, _ = _stateless()
    other = _exchange(1, {"input": [{"role": "user", "content": "Summarise the forecast."}]},
                      response_object("Sunny.", response_id="resp_x"))
    t = _rebuild(first, other)
    assert [(th.thread, th.parent, th.exchanges) for th in t.threads] == [(0, None, [0]), (1, 0, [1])]
