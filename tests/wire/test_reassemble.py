"""Reassembly across dialects and fault kinds beyond the shared wire cases (pure)."""

from __future__ import annotations

import json

import pytest

from probegate.testing.streams import chat_chunk, sse
from probegate.wire.reassemble import dialect_of, reassemble
from probegate.wire.sse import parse_stream

TOOLS = {"tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]}


def _stream(body: bytes, path: str = "/v1/chat/completions", request=None, fmt: str = "sse"):
    events, _ = parse_stream([(0.0, body)], fmt)
    return reassemble(path=path, request=request if request is not None else {}, events=events)


def _call(index, id=None, name=None, args=None):
    fn = {}
    if name is not None:
        fn["name"] = name
    if args is not None:
        fn["arguments"] = args
    out = {"function": fn}
    if index is not None:
        out["index"] = index
    if id is not None:
        out["id"] = id
    return out


@pytest.mark.parametrize(
    ("path", "dialect"),
    [
        ("/v1/chat/completions", "chat"),
        ("/v1/completions", "completions"),
        ("/v1/responses", "responses"),
        ("/api/chat", "ollama_chat"),
        ("/api/generate", "ollama_generate"),
        ("/v1/embeddings", None),
        ("/v1/models", None),
    ],
)
def test_dialect_of(path: str, dialect: str | None) -> None:
    assert dialect_of(path) == dialect


def test_parallel_calls_interleaved_by_index() -> None:
    chunks = [
        chat_chunk({"tool_calls": [_call(0, "c0", "get_weather", "")]}),
        chat_chunk({"tool_calls": [_call(1, "c1", "get_weather", "")]}),
        chat_chunk({"tool_calls": [_call(1, args='{"city":"Oslo"}')]}),
        chat_chunk({"tool_calls": [_call(0, args='{"city":"Lima"}')]}),
        chat_chunk({}, "tool_calls"),
    ]
    result = _stream(sse(chunks), request=TOOLS)
    calls = result.completion["assistant"]["tool_calls"]
    assert [(c["id"], c["arguments"]) for c in calls] == [("c0", {"city": "Lima"}), ("c1", {"city": "Oslo"})]
    assert result.completion["flags"] == []
    assert result.response_body["choices"][0]["message"]["tool_calls"][1]["function"]["arguments"] == '{"city":"Oslo"}'


def test_index_reused_for_a_second_call() -> None:
    chunks = [
        chat_chunk({"tool_calls": [_call(0, "c0", "get_weather", '{"city":"Lima"}')]}),
        chat_chunk({"tool_calls": [_call(0, "c1", "get_weather", '{"city":"Oslo"}')]}),
        chat_chunk({}, "tool_calls"),
    ]
    result = _stream(sse(chunks), request=TOOLS)
    assert [c["id"] for c in result.completion["assistant"]["tool_calls"]] == ["c0", "c1"]
    assert result.completion["flags"] == ["index_reused"]


def test_cumulative_arguments_are_not_doubled() -> None:
    chunks = [
        chat_chunk({"tool_calls": [_call(0, "c0", "get_weather", '{"ci')]}),
        chat_chunk({"tool_calls": [_call(0, args='{"city": "Rome"}')]}),
        chat_chunk({}, "tool_calls"),
    ]
    result = _stream(sse(chunks), request=TOOLS)
    assert result.completion["assistant"]["tool_calls"][0]["arguments"] == {"city": "Rome"}
    assert "arguments_cumulative" in result.completion["flags"]


def test_stream_cut_without_finish_is_incomplete() -> None:
    result = _stream(sse([chat_chunk({"content": "Hel"})], done=False))
    assert result.completion["assistant"]["content"] == "Hel"
    assert result.completion["flags"] == ["stream_incomplete"]


def test_malformed_event_and_error_event() -> None:
    body = b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\ndata: {oops\n\ndata: {"error":{"message":"boom"}}\n\n'
    result = _stream(body)
    assert set(result.completion["flags"]) == {"malformed_event", "stream_error", "stream_incomplete"}
    assert result.error == "upstream stream error: boom"


def test_crlf_framing_and_comments() -> None:
    body = sse([chat_chunk({"content": "Hi"}), chat_chunk({}, "stop")], eol="\r\n")
    body = b": ping\r\n\r\n" + body
    result = _stream(body)
    assert result.completion["assistant"]["content"] == "Hi"
    assert result.completion["flags"] == []


def test_arguments_sent_as_object_in_chat_dialect() -> None:
    chunks = [chat_chunk({"tool_calls": [_call(0, "c0", "get_weather", {"city": "Rome"})]}), chat_chunk({}, "tool_calls")]
    result = _stream(sse(chunks), request=TOOLS)
    call = result.completion["assistant"]["tool_calls"][0]
    assert call["arguments"] == {"city": "Rome"} and call["arguments_raw"] == '{"city":"Rome"}'
    assert result.completion["flags"] == ["arguments_not_string"]


def test_ollama_native_stream() -> None:
    lines = [
        {"model": "qwen3", "message": {"role": "assistant", "content": "", "thinking": "Need weather."}, "done": False},
        {"model": "qwen3", "message": {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Graz"}}}]}, "done": False},
        {"model": "qwen3", "message": {"role": "assistant", "content": ""}, "done": True,
         "done_reason": "stop", "prompt_eval_count": 30, "eval_count": 12},
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    result = _stream(body, "/api/chat", TOOLS, fmt="ndjson")
    assert result.completion["assistant"] == {
        "content": None,
        "reasoning": "Need weather.",
        "tool_calls": [{"id": None, "name": "get_weather", "arguments": {"city": "Graz"},
                        "arguments_raw": '{"city":"Graz"}', "repaired": False}],
        "finish_reason": "stop",
    }
    assert result.completion["usage"] == {"prompt_tokens": 30, "completion_tokens": 12}
    assert result.completion["flags"] == []


def test_ollama_stream_without_done_is_incomplete() -> None:
    body = b'{"message":{"role":"assistant","content":"Hi"},"done":false}\n'
    result = _stream(body, "/api/chat", fmt="ndjson")
    assert result.completion["flags"] == ["stream_incomplete"]


def test_ollama_generate_json() -> None:
    body = json.dumps({"response": "42", "done": True, "done_reason": "stop", "prompt_eval_count": 5, "eval_count": 2})
    result = reassemble(path="/api/generate", request={}, body=body.encode())
    assert result.completion["assistant"]["content"] == "42"
    assert result.completion["usage"] == {"prompt_tokens": 5, "completion_tokens": 2}


def test_legacy_completions_stream() -> None:
    chunks = [{"choices": [{"index": 0, "text": "Hello", "finish_reason": None}]},
              {"choices": [{"index": 0, "text": " world", "finish_reason": "length"}],
               "usage": {"prompt_tokens": 3, "completion_tokens": 2}}]
    result = _stream(sse(chunks), "/v1/completions", {"max_tokens": 2})
    assert result.completion["assistant"]["content"] == "Hello world"
    assert result.completion["assistant"]["finish_reason"] == "length"
    assert result.completion["flags"] == []  # an explicit length stop is not hidden


def test_responses_stream() -> None:
    events = [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.reasoning_summary_text.delta", "delta": "Check Oslo."},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "get_weather", "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": '{"city":'},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": '"Oslo"}'},
        {"type": "response.output_item.done", "output_index": 0,
         "item": {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "get_weather", "arguments": '{"city":"Oslo"}'}},
        {"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
                                                     "usage": {"input_tokens": 20, "output_tokens": 9}}},
    ]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    result = _stream(body, "/v1/responses", TOOLS)
    assert result.completion["assistant"]["tool_calls"] == [
        {"id": "call_9", "name": "get_weather", "arguments": {"city": "Oslo"},
         "arguments_raw": '{"city":"Oslo"}', "repaired": False}]
    assert result.completion["assistant"]["reasoning"] == "Check Oslo."
    assert result.completion["assistant"]["finish_reason"] == "completed"
    assert result.completion["usage"] == {"prompt_tokens": 20, "completion_tokens": 9}
    assert result.completion["flags"] == []


def test_responses_json() -> None:
    body = {"object": "response", "status": "completed", "output": [
        {"type": "message", "content": [{"type": "output_text", "text": "Sunny."}]}],
        "usage": {"input_tokens": 4, "output_tokens": 2}}
    result = reassemble(path="/v1/responses", request={}, body=json.dumps(body).encode())
    assert result.completion["assistant"]["content"] == "Sunny."


def test_finish_tool_calls_without_calls_is_a_mismatch() -> None:
    result = _stream(sse([chat_chunk({"content": "x"}), chat_chunk({}, "tool_calls")]))
    assert result.completion["flags"] == ["finish_reason_mismatch"]


def test_python_call_in_content_is_flagged_not_promoted() -> None:
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": '[get_weather(city="Oslo")]'},
                         "finish_reason": "stop"}]}
    result = reassemble(path="/v1/chat/completions", request=TOOLS, body=json.dumps(body).encode())
    assert result.completion["assistant"]["tool_calls"] == []
    assert result.completion["flags"] == ["tool_call_in_content"]
    assert result.completion["content_calls"][0]["arguments"] == {"city": "Oslo"}


def test_text_protocol_without_tools_is_not_an_anomaly() -> None:
    body = {"choices": [{"index": 0, "message": {"role": "assistant",
                                                  "content": '<tool_call>{"name": "x", "arguments": {}}</tool_call>'},
                         "finish_reason": "stop"}]}
    result = reassemble(path="/v1/chat/completions", request={"messages": []}, body=json.dumps(body).encode())
    assert result.completion["flags"] == []


def test_error_body_has_no_turn_and_embeddings_have_none() -> None:
    err = json.dumps({"error": {"message": "bad", "type": "x"}}).encode()
    assert reassemble(path="/v1/chat/completions", request={}, body=err).completion is None
    assert reassemble(path="/v1/embeddings", request={}, body=b'{"data": []}').completion is None
    assert reassemble(path="/v1/chat/completions", request={}, body=b"not json").completion is None


def test_multiple_choices_keep_each_in_response_body() -> None:
    chunks = [
        {"choices": [{"index": 0, "delta": {"content": "A"}}, {"index": 1, "delta": {"content": "B"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}, {"index": 1, "delta": {}, "finish_reason": "stop"}]},
    ]
    result = _stream(sse(chunks))
    assert result.completion["assistant"]["content"] == "A"
    assert [c["message"]["content"] for c in result.response_body["choices"]] == ["A", "B"]


def test_legacy_function_call_mirroring_tool_calls_is_not_a_second_call() -> None:
    # llama-cpp-python (chatml-function-calling) sends both, the mirror's name with a colon
    body = {"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "call__0", "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris" } '}}],
        "function_call": {"name": "get_weather:", "arguments": '{"city": "Paris" } '}}}]}
    result = reassemble(path="/v1/chat/completions", request=TOOLS, body=json.dumps(body).encode())
    calls = result.completion["assistant"]["tool_calls"]
    assert [(c["id"], c["name"], c["arguments"]) for c in calls] == [("call__0", "get_weather", {"city": "Paris"})]
    assert result.completion["flags"] == ["legacy_function_call_mirror"]
