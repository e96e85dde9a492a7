"""The pure translations of ``responses-via-chat`` (no sockets): request -> chat request,
chat completion -> response, chat chunks -> Responses stream events. Every output is
checked against the ``openai`` SDK's own types, and reassembled both ways."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from probegate.gateway.compat import RULES, apply_rules, parse_rules
from probegate.gateway.compat.responses_via_chat import (
    EventStream,
    Refused,
    chat_path,
    encode_event,
    events_from_chat,
    is_responses_path,
    response_from_chat,
    to_chat,
)
from probegate.testing.streams import chat_chunk, chat_completion, chat_stream
from probegate.wire.reassemble import reassemble
from probegate.wire.sse import parse_stream

EVENTS = TypeAdapter(ResponseStreamEvent)
TOOL = {"type": "function", "name": "get_weather", "description": "Weather.", "parameters": {"type": "object"},
        "strict": True}


def test_paths_and_registration() -> None:
    assert is_responses_path("/v1/responses") and is_responses_path("/api/v1/responses/")
    assert not is_responses_path("/v1/chat/completions") and not is_responses_path("/v1/responses/resp_1/cancel")
    assert chat_path("/v1/responses") == "/v1/chat/completions"
    assert "responses-via-chat" in RULES and parse_rules("responses-via-chat").names == ("responses-via-chat",)
    body = b'{"model": "m", "input": "hi"}'
    assert apply_rules(parse_rules("responses-via-chat"), body) == (body, [])  # not a body rewrite


def test_request_mapping() -> None:
    body = {
        "model": "m", "instructions": "Be brief.", "temperature": 0, "top_p": 0.9, "max_output_tokens": 99,
        "parallel_tool_calls": False, "tools": [TOOL], "tool_choice": {"type": "function", "name": "get_weather"},
        "text": {"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}, "strict": True}},
        "store": True, "metadata": {"k": "v"}, "stream": True,
        "input": [
            {"role": "user", "content": "hi"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me look."}]},
            {"type": "function_call", "call_id": "a", "name": "get_weather", "arguments": '{"city":"X"}'},
            {"type": "function_call", "call_id": "b", "name": "get_weather", "arguments": '{"city":"Y"}'},
            {"type": "function_call_output", "call_id": "a", "output": "sunny"},
            {"type": "function_call_output", "call_id": "b", "output": [{"type": "input_text", "text": "rain"}]},
            {"role": "user", "content": [{"type": "input_text", "text": "and "}, {"type": "input_image",
                                                                                  "image_url": "data:image/png;base64,AA"}]},
        ],
    }
    chat, changes = to_chat(body)
    assert chat == {
        "model": "m", "temperature": 0, "top_p": 0.9, "parallel_tool_calls": False, "stream": True,
        "max_tokens": 99, "stream_options": {"include_usage": True},
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather.",
                                                    "parameters": {"type": "object"}, "strict": True}}],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "response_format": {"type": "json_schema", "json_schema": {"name": "w", "schema": {"type": "object"},
                                                                   "strict": True}},
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"X"}'}},
                {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Y"}'}}]},
            {"role": "tool", "tool_call_id": "a", "content": "sunny"},
            {"role": "tool", "tool_call_id": "b", "content": "rain"},
            {"role": "user", "content": [{"type": "text", "text": "and "},
                                         {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]},
        ],
    }
    assert [(c["path"], c["to"]) for c in changes] == [("store", None), ("metadata", None),
                                                       ("stream_options", {"include_usage": True})]


@pytest.mark.parametrize(("body", "param"), [
    ({"previous_response_id": "resp_1", "input": "more"}, "previous_response_id"),
    ({"conversation": "conv_1", "input": "more"}, "conversation"),
    ({"background": True, "input": "x"}, "background"),
    ({"input": "x", "tools": [{"type": "web_search"}]}, "tools[0]"),
    ({"input": "x", "tool_choice": {"type": "file_search"}}, "tool_choice"),
    ({"input": [{"type": "item_reference", "id": "msg_1"}]}, "input[0]"),
    ({"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]}, "input[0].content[0]"),
    ({"input": [{"role": "critic", "content": "x"}]}, "input[0].role"),
    ({"input": 5}, "input"),
])
def test_refusals_name_the_field(body: dict[str, Any], param: str) -> None:
    with pytest.raises(Refused) as caught:
        to_chat({"model": "m", **body})
    assert caught.value.param == param


def test_response_from_chat_is_what_the_sdk_parses() -> None:
    chat = chat_completion("Done.", [{"id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}}],
                           usage={"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16})
    chat["choices"][0]["message"]["reasoning_content"] = "Think first."
    response = Response.model_validate(response_from_chat(chat, {"model": "m", "tools": [TOOL]}, base="x1"))
    assert response.id == "resp_x1" and response.status == "completed" and response.output_text == "Done."
    assert [o.type for o in response.output] == ["reasoning", "message", "function_call"]
    call = response.output[2]
    assert (call.id, call.call_id, call.name, call.arguments) == ("fc_x1_2", "c1", "get_weather", '{"city": "Oslo"}')
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.total_tokens) == (12, 4, 16)
    cut = response_from_chat(chat_completion("It was", finish_reason="length"), {}, base="x2")
    assert cut["status"] == "incomplete" and cut["incomplete_details"] == {"reason": "max_output_tokens"}
    with pytest.raises(ValueError, match="not a chat completion"):
        response_from_chat({"object": "list"}, {}, base="x3")


def _events(chunks: list[dict[str, Any]], request: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    machine = EventStream(request or {"model": "m"}, "b", created_at=1.0)
    out = machine.start()
    for chunk in chunks:
        out += machine.feed(chunk)
    return out + machine.finish()


def _turn(result: Any) -> tuple[Any, list[tuple[Any, Any, Any]]]:
    assistant = result.completion["assistant"]
    return assistant["content"], [(c["id"], c["name"], c["arguments_raw"]) for c in assistant["tool_calls"]]


calls_st = st.lists(st.fixed_dictionaries({
    "name": st.sampled_from(["get_weather", "send_email", "find"]),
    "arguments": st.one_of(st.dictionaries(st.text(min_size=1, max_size=5), st.integers(), max_size=3),
                           st.text(max_size=20)),
}), max_size=3)


@settings(max_examples=60, deadline=None)
@given(content=st.one_of(st.none(), st.text(min_size=1, max_size=40)), calls=calls_st,
       pieces=st.integers(min_value=1, max_value=5))
def test_stream_events_reassemble_to_the_upstream_turn(content: str | None, calls: list[dict[str, Any]],
                                                       pieces: int) -> None:
    """Whatever the turn: every event is a valid ``openai`` stream event, sequence numbers
    count from 0, the Responses reassembly equals the chat reassembly (text, call ids,
    names, raw arguments), and ``response.completed`` holds what the non-streamed
    translation of the same turn holds."""
    calls = [{**c, "id": f"call_{i}"} for i, c in enumerate(calls)]
    chunks = chat_stream(content, calls, pieces=pieces)
    events = _events(chunks)
    for event in events:
        EVENTS.validate_python(event)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[-1]["type"] == "response.completed"
    wire = b"".join(encode_event(e) for e in events)
    parsed, _ = parse_stream([(0.0, wire)], "sse")
    assert [p.event for p in parsed] == [e["type"] for e in events]
    chat_events, _ = parse_stream([(0.0, b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks))], "sse")
    upstream = reassemble(path="/v1/chat/completions", request=None, events=chat_events)
    translated = reassemble(path="/v1/responses", request=None, events=parsed)
    assert _turn(translated) == _turn(upstream)
    assert translated.completion["usage"] == upstream.completion["usage"]
    whole = response_from_chat(upstream.response_body, {"model": "m"}, base="b", created_at=1.0)
    assert events[-1]["response"]["output"] == whole["output"]
    assert events[-1]["response"]["usage"] == whole["usage"]
    in_one = events_from_chat(upstream.response_body, {"model": "m"}, base="b", created_at=1.0)
    assert in_one[-1]["response"]["output"] == whole["output"]  # a stream answered in one body


def test_stream_without_ids_gets_generated_call_ids_and_an_error_chunk_fails_it() -> None:
    chunks = [chat_chunk({"tool_calls": [{"index": 0, "function": {"name": "find", "arguments": '{"q":'}}]}),
              chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": ' "x"}'}}]}), chat_chunk({}, "stop")]
    events = _events(chunks)
    done = [e for e in events if e["type"] == "response.output_item.done"]
    assert done[0]["item"]["call_id"] == "call_b_0" and done[0]["item"]["arguments"] == '{"q": "x"}'
    failed = _events([chat_chunk({"content": "par"}), {"error": {"message": "model crashed"}}])
    assert [e["type"] for e in failed][-2:] == ["error", "response.failed"]
    assert failed[-1]["response"]["error"]["message"] == "model crashed"
    for event in failed:
        EVENTS.validate_python(event)


def test_reasoning_streams_as_a_reasoning_item() -> None:
    events = _events([chat_chunk({"reasoning_content": "Hm, "}), chat_chunk({"reasoning_content": "sunny."}),
                      chat_chunk({"content": "Sunny."}), chat_chunk({}, "stop")])
    for event in events:
        EVENTS.validate_python(event)
    final = events[-1]["response"]["output"]
    assert [o["type"] for o in final] == ["reasoning", "message"]
    assert final[0]["content"][0]["text"] == "Hm, sunny."
    parsed, _ = parse_stream([(0.0, b"".join(encode_event(e) for e in events))], "sse")
    turn = reassemble(path="/v1/responses", request=None, events=parsed).completion["assistant"]
    assert (turn["reasoning"], turn["content"]) == ("Hm, sunny.", "Sunny.")
