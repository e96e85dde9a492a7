"""``responses-via-chat`` end to end: the real ``openai`` SDK speaks Responses to the gateway
(uvicorn), a scripted upstream speaks only chat completions; the rule translates both ways
and the exchange keeps both sides. Without the rule the 404 is recorded as it happened."""

from __future__ import annotations

import json
import threading

import httpx
import openai
import pytest
from sqlmodel import Session, select

from probegate.store import Exchange
from probegate.testing import ReceivedRequest, Reply, Turn
from probegate.testing.streams import chat_chunk, chat_completion, chat_stream
from probegate.wire.reassemble import reassemble

RULE = ["responses-via-chat"]
TOOL = {"type": "function", "name": "get_weather", "description": "Current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "strict": False}
CALL = {"id": "call_w1", "name": "get_weather", "arguments": {"city": "Berlin"}}
HISTORY = [
    {"role": "user", "content": "Weather in Berlin?"},
    {"type": "function_call", "call_id": "call_w1", "name": "get_weather", "arguments": '{"city": "Berlin"}'},
    {"type": "function_call_output", "call_id": "call_w1", "output": '{"temp_c": 7, "sky": "cloudy"}'},
]


@pytest.fixture
def sdk():
    """``sdk(base_url, **kw)``: a real ``openai.OpenAI`` client, closed after the test."""
    made: list[openai.OpenAI] = []

    def make(base_url: str, **kw) -> openai.OpenAI:
        made.append(openai.OpenAI(base_url=base_url, api_key="sk-x", **kw))
        return made[-1]

    yield make
    for client in made:
        client.close()


def _rows(gw, task: str) -> list[Exchange]:
    gw.flush()
    with Session(gw.engine) as session:
        return list(session.exec(select(Exchange).where(Exchange.task_id == task).order_by(Exchange.seq)).all())


def _assistant(chat: dict) -> dict:
    result = reassemble(path="/v1/chat/completions", request=None, body=json.dumps(chat).encode())
    turn = result.completion["assistant"]
    return {"content": turn["content"], "calls": [(c["id"], c["name"], c["arguments_raw"]) for c in turn["tool_calls"]]}


def _same_turn(row: Exchange) -> None:
    """The reassembler reads the translated exchange (Responses dialect) as the same turn
    (text, tool calls) as the upstream's chat turn."""
    client_turn = row.completion["assistant"]
    got = {"content": client_turn["content"],
           "calls": [(c["id"], c["name"], c["arguments_raw"]) for c in client_turn["tool_calls"]]}
    entry = next(c for c in row.compat if c["path"] == "(answer)")
    assert got == _assistant(entry["upstream"]["body"])


def test_text_not_streamed(sdk, upstream, gateway_factory) -> None:
    script, server = upstream
    gw = gateway_factory(server.url, compat=RULE)
    script.push(Reply.json(chat_completion("It is 7 degrees and cloudy.", usage={
        "prompt_tokens": 31, "completion_tokens": 9, "total_tokens": 40})))
    client = sdk(gw.base("r", "text"))
    response = client.responses.create(model="m", instructions="Be brief.", input="Weather in Berlin?",
                                       max_output_tokens=64, temperature=0.2)
    assert response.output_text == "It is 7 degrees and cloudy."
    assert response.status == "completed" and response.id.startswith("resp_")
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.total_tokens) == (31, 9, 40)
    sent = script.requests[-1]
    assert sent.path == "/v1/chat/completions"
    assert sent.json() == {"model": "m", "temperature": 0.2, "max_tokens": 64, "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Berlin?"}]}
    [row] = _rows(gw, "text")
    assert row.path == "/v1/responses" and row.status_code == 200
    assert row.request_original["input"] == "Weather in Berlin?"
    assert row.request_body["messages"][1]["content"] == "Weather in Berlin?"
    assert json.loads(row.response_raw)["output"][0]["content"][0]["text"] == "It is 7 degrees and cloudy."
    assert row.compat[0] == {"rule": "responses-via-chat", "path": "(route)", "from": "/v1/responses",
                             "to": "/v1/chat/completions"}
    answer = row.compat[-1]
    assert answer["upstream"]["status"] == 200 and answer["upstream"]["body"]["object"] == "chat.completion"
    assert (row.prompt_tokens, row.completion_tokens) == (31, 9)
    _same_turn(row)


def test_tool_calls_streamed_for_real(sdk, upstream, gateway_factory) -> None:
    """Events leave the gateway as upstream chunks arrive: the first text reaches the client
    while the upstream still holds the rest back."""
    script, server = upstream
    gw = gateway_factory(server.url, compat=RULE)
    gate = threading.Event()
    calls = [CALL, {"id": "call_w2", "name": "get_weather", "arguments": {"city": "Oslo"}}]
    chunks = [chat_chunk({"role": "assistant", "content": "Check"}), *chat_stream("ing.", calls)[1:]]
    script.push(Reply.sse(chunks, gate=gate))
    client = sdk(gw.base("r", "stream"))
    kinds = []
    with client.responses.stream(model="m", input="Weather in Berlin and Oslo?", tools=[TOOL]) as stream:
        for event in stream:
            kinds.append(event.type)
            if event.type == "response.output_text.delta" and not gate.is_set():
                assert event.delta == "Check" and script.completed == 0  # the upstream is still held back
                gate.set()  # the upstream sends the rest only now
        final = stream.get_final_response()
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert {"response.output_item.added", "response.content_part.added", "response.output_text.delta",
            "response.output_text.done", "response.function_call_arguments.delta",
            "response.function_call_arguments.done", "response.output_item.done"} <= set(kinds)
    assert final.output_text == "Checking."
    calls = [(o.call_id, o.name, json.loads(o.arguments)) for o in final.output if o.type == "function_call"]
    assert calls == [("call_w1", "get_weather", {"city": "Berlin"}), ("call_w2", "get_weather", {"city": "Oslo"})]
    assert final.usage is not None and final.usage.input_tokens == 10
    sent = script.requests[-1].json()
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["tools"] == [{"type": "function", "function": {k: TOOL[k] for k in ("name", "description", "parameters",
                                                                                     "strict")}}]
    [row] = _rows(gw, "stream")
    assert row.stream and row.stream_format == "sse" and row.path == "/v1/responses"
    assert row.response_headers["content-type"] == "text/event-stream"
    assert b"[DONE]" not in row.response_raw and row.response_raw.startswith(b"event: response.created\ndata: ")
    seqs = [json.loads(e["data"])["sequence_number"] for e in row.sse_events]
    assert seqs == list(range(len(seqs)))
    assert len(row.chunks) > 3  # one piece per upstream chunk, not one buffered body
    assert row.completion["assistant"]["finish_reason"] == "completed"
    assert "stream_incomplete" not in row.flags
    _same_turn(row)


@pytest.mark.parametrize("stream", [False, True])
def test_history_with_function_call_output(sdk, upstream, gateway_factory, stream: bool) -> None:
    script, server = upstream
    gw = gateway_factory(server.url, compat=RULE)
    script.push(Turn("It is 7 degrees and cloudy in Berlin."))
    client = sdk(gw.base("r", f"history-{stream}"))
    items = [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Use tools."}]},
             *HISTORY, {"type": "reasoning", "id": "rs_1", "summary": []}]
    if stream:
        with client.responses.stream(model="m", input=items, tools=[TOOL]) as events:
            text = events.get_final_response().output_text
    else:
        text = client.responses.create(model="m", input=items, tools=[TOOL]).output_text
    assert text == "It is 7 degrees and cloudy in Berlin."
    messages = script.requests[-1].json()["messages"]
    assert messages == [
        {"role": "system", "content": "Use tools."},
        {"role": "user", "content": "Weather in Berlin?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_w1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Berlin"}'}}]},
        {"role": "tool", "tool_call_id": "call_w1", "content": '{"temp_c": 7, "sky": "cloudy"}'},
    ]
    [row] = _rows(gw, f"history-{stream}")
    assert {"rule": "responses-via-chat", "path": "input[4]", "from": "reasoning", "to": None} in row.compat
    _same_turn(row)


def test_other_rules_apply_to_the_translated_request(sdk, upstream, gateway_factory) -> None:
    script, server = upstream
    gw = gateway_factory(server.url, compat=["responses-via-chat", "null-content", "tool-results-as-user"])
    script.push(Turn("cloudy"))
    sdk(gw.base("r", "chain")).responses.create(model="m", input=HISTORY)
    messages = script.requests[-1].json()["messages"]
    assert messages[1]["content"] == "" and messages[2]["role"] == "user"
    assert messages[2]["content"].startswith("Result of get_weather (call call_w1):")
    [row] = _rows(gw, "chain")
    assert [c["rule"] for c in row.compat] == ["responses-via-chat", "null-content", "tool-results-as-user",
                                               "responses-via-chat"]
    assert row.request_original["input"][2]["type"] == "function_call_output"


def test_previous_response_id_is_refused_and_recorded(sdk, upstream, gateway_factory) -> None:
    script, server = upstream
    gw = gateway_factory(server.url, compat=RULE)
    client = sdk(gw.base("r", "stateful"), max_retries=0)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="m", input="and now?", previous_response_id="resp_123")
    assert caught.value.status_code == 400
    error = caught.value.body
    assert error["param"] == "previous_response_id" and "stateless" in error["message"]
    with pytest.raises(openai.BadRequestError, match="built-in tools"):
        client.responses.create(model="m", input="find it", tools=[{"type": "web_search"}])
    assert script.requests == []  # nothing went upstream
    rows = _rows(gw, "stateful")
    assert [r.status_code for r in rows] == [400, 400]
    assert rows[0].error.startswith("responses_via_chat_refused: previous_response_id")
    assert rows[0].compat == [{"rule": "responses-via-chat", "path": "previous_response_id", "from": None,
                               "to": "refused"}]


def test_upstream_error_is_relayed_as_it_came(upstream, gateway_factory) -> None:
    script, server = upstream
    gw = gateway_factory(server.url, compat=RULE)
    script.push(Reply.json({"error": {"message": "Input should be a valid string", "type": "invalid_request_error"}},
                           status=422))
    response = httpx.post(f"{gw.base('r', 'rejected')}/responses", json={"model": "m", "input": "hi"})
    assert response.status_code == 422 and "valid string" in response.json()["error"]["message"]
    [row] = _rows(gw, "rejected")
    assert row.status_code == 422 and row.compat[-1]["to"] == "relayed as it came"


def test_generated_call_ids_and_arguments_kept_raw(sdk, upstream, gateway_factory) -> None:
    """A server that sends no call id and broken arguments: the client gets a generated
    call_id and the arguments as sent (the reassembler flags what the upstream flagged)."""
    script, server = upstream
    gw = gateway_factory(server.url, compat=RULE)
    chunks = [chat_chunk({"role": "assistant", "tool_calls": [{"index": 0, "function": {
                  "name": "get_weather", "arguments": '{"city": "Ber'}}]}),
              chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "lin'}"}}]}),
              chat_chunk({}, "tool_calls")]
    script.push(Reply.sse(chunks))
    with sdk(gw.base("r", "raw")).responses.stream(
            model="m", input="Weather?", tools=[TOOL]) as stream:
        final = stream.get_final_response()
    [call] = final.output
    assert call.arguments == '{"city": "Berlin\'}' and call.call_id.startswith("call_")
    [row] = _rows(gw, "raw")
    assert row.completion["assistant"]["tool_calls"][0]["arguments_raw"] == '{"city": "Berlin\'}'
    assert "tool_call_without_id" in row.compat[-1]["upstream"]["flags"]


def test_replay_answers_with_the_recorded_translation(sdk, upstream, gateway_factory, engine) -> None:
    from probegate.gateway.replay import ReplaySettings

    script, server = upstream
    gw = gateway_factory(server.url, compat=RULE)
    script.push(Turn("first", gap_s=0.0), Turn(tool_calls=[CALL]))
    client = sdk(gw.base("rec", "t"))
    recorded = [client.responses.create(model="m", input="one").output_text]
    with client.responses.stream(model="m", input="two", tools=[TOOL]) as stream:
        recorded.append(stream.get_final_response().output[0].arguments)
    gw.flush()
    replay = gateway_factory("", compat=RULE, replay=ReplaySettings("rec"))
    again = sdk(replay.base("rec", "t"))
    got = [again.responses.create(model="m", input="one").output_text]
    with again.responses.stream(model="m", input="two", tools=[TOOL]) as stream:
        got.append(stream.get_final_response().output[0].arguments)
    assert got == recorded == ["first", '{"city": "Berlin"}']
    assert len(script.requests) == 2  # the replay never asked the upstream
    replayed = [r for r in _rows(replay, "t") if r.run_id == "rec" and any(c["rule"] == "replay" for c in r.compat)]
    assert [c["to"] for r in replayed for c in r.compat if c.get("path") == "(answer)"] == ["replayed translation"] * 2


def _no_responses_route(request: ReceivedRequest) -> Reply | Turn:
    if request.path.endswith("/responses"):
        return Reply.json({"detail": "Not Found"}, status=404)
    return Turn("ok")


def test_without_the_rule_the_404_is_recorded_and_scored_as_a_missing_route(sdk, gateway_factory) -> None:
    """Pass-through first: the 404 is stored as it happened and the scorer labels the attempt
    ``interop.route_missing``, naming the path, the status and the shim."""
    from probegate.scorer import AttemptRows, RunInfo, build_trajectory, task_scorer
    from probegate.tasks.loader import load_task_set
    from probegate.testing import ScriptedUpstream, serve_in_thread
    from tests.scorer.rowkit import TASKS_DIR

    server = serve_in_thread(ScriptedUpstream(handler=_no_responses_route))
    try:
        gw = gateway_factory(server.url)
        client = sdk(gw.base("r", "weather-berlin"), max_retries=0)
        with pytest.raises(openai.NotFoundError):
            client.responses.create(model="m", input="What is the weather in Berlin?", tools=[TOOL])
        [row] = _rows(gw, "weather-berlin")
    finally:
        server.stop()
    assert row.path == "/v1/responses" and row.status_code == 404
    assert row.response_body == {"detail": "Not Found"} and row.compat is None and row.request_original is None
    task = next(t for t in load_task_set(str(TASKS_DIR)).tasks if t.id == "weather-berlin")
    trajectory = build_trajectory(AttemptRows("r", task.id, 0, exchanges=(row,)), RunInfo("r"), tools=task.tools,
                                  max_steps=task.max_steps)
    score = task_scorer()(trajectory, task)
    [found] = [a for a in score.attributions if a.label == "interop"]
    assert found.rule == "interop.route_missing" and found.exchange_seq == 0
    assert "HTTP 404 on /v1/responses" in found.evidence and "responses-via-chat shim" in found.evidence


@pytest.mark.parametrize("streamed", [False, True])
def test_openai_agents_sdk_runs_through_the_rule(upstream, gateway_factory, streamed: bool) -> None:
    """The real OpenAI Agents SDK (its Responses model, unmodified) runs a tool round trip
    against a chat-only server through the rule."""
    import asyncio

    agents = pytest.importorskip("agents")
    script, server = upstream
    gw = gateway_factory(server.url, compat=RULE)
    script.push(Turn(tool_calls=[CALL]), Turn("It is 7 degrees and cloudy in Berlin."))
    seen = []

    @agents.function_tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        seen.append(city)
        return '{"temp_c": 7, "sky": "cloudy"}'

    async def run() -> str:
        client = openai.AsyncOpenAI(base_url=gw.base("r", f"agents-{streamed}"), api_key="sk-x")
        model = agents.OpenAIResponsesModel(model="m", openai_client=client)
        agent = agents.Agent(name="weather", instructions="Use the tool.", tools=[get_weather], model=model)
        if streamed:
            result = agents.Runner.run_streamed(agent, "Weather in Berlin?")
            async for _ in result.stream_events():
                pass
        else:
            result = await agents.Runner.run(agent, "Weather in Berlin?")
        await client.close()
        return str(result.final_output)

    agents.set_tracing_disabled(True)
    assert asyncio.run(run()) == "It is 7 degrees and cloudy in Berlin."
    assert seen == ["Berlin"]
    second = script.requests[-1].json()["messages"]
    assert second[-1] == {"role": "tool", "tool_call_id": "call_w1", "content": '{"temp_c": 7, "sky": "cloudy"}'}
    assert second[-2]["tool_calls"][0]["id"] == "call_w1"
    rows = _rows(gw, f"agents-{streamed}")
    assert [r.path for r in rows] == ["/v1/responses"] * 2 and all(r.stream == streamed for r in rows)
    for row in rows:
        _same_turn(row)
    # the scorer rebuilds the run as one thread: the call, its observation, the answer
    from probegate.scorer import AttemptRows, RunInfo, build_trajectory

    trajectory = build_trajectory(AttemptRows("r", rows[0].task_id, 0, exchanges=tuple(rows)), RunInfo("r"),
                                  tools=["get_weather"], call_source="steps")
    steps = [(s.thread, s.tool_name, s.tool_args, s.tool_call_id) for s in trajectory.steps]
    assert steps == [(0, "get_weather", {"city": "Berlin"}, "call_w1"), (0, None, None, None)]
    assert json.loads(trajectory.steps[0].observation) == {"temp_c": 7, "sky": "cloudy"}


def test_a_stream_answered_in_one_body_still_streams_and_a_break_is_passed_on(sdk, upstream, gateway_factory) -> None:
    """A server that answers a streamed request with one JSON body: the client still gets its
    events. An upstream that breaks mid-stream: the client's connection breaks too (no
    ``response.completed``), and the exchange says so."""
    script, server = upstream
    gw = gateway_factory(server.url, compat=RULE)
    script.push(Reply.json(chat_completion(tool_calls=[CALL])))
    client = sdk(gw.base("r", "odd"), max_retries=0)
    with client.responses.stream(model="m", input="Weather?", tools=[TOOL]) as stream:
        [call] = stream.get_final_response().output
    assert (call.call_id, call.arguments) == ("call_w1", '{"city": "Berlin"}')
    script.push(Reply.sse(chat_stream("It is cloudy and cold today."), break_after=3))
    with pytest.raises((openai.APIError, httpx.HTTPError)):
        with client.responses.stream(model="m", input="Weather?") as stream:
            stream.get_final_response()
    rows = _rows(gw, "odd")
    assert rows[0].stream and rows[0].response_headers["content-type"] == "text/event-stream"
    _same_turn(rows[0])
    assert "mid-response" in rows[1].error and b"response.completed" not in rows[1].response_raw
    assert b"response.output_text.delta" in rows[1].response_raw
