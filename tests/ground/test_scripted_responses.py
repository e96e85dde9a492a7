"""ScriptedUpstream answers ``/v1/responses`` in Responses form, as the real ``openai``
SDK parses it (non-streamed object and typed SSE events), and chat with reasoning."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from probegate.testing import RunningServer, ScriptedUpstream, Turn, response_object, responses_stream, serve_in_thread, sse_events

CALL = {"id": "call_7", "name": "check_stock", "arguments": {"sku": "SKU-1001"}}


@pytest.fixture
def scripted() -> Iterator[tuple[ScriptedUpstream, RunningServer]]:
    script = ScriptedUpstream()
    server = serve_in_thread(script)
    yield script, server
    server.stop()


def _client(server: RunningServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="k", max_retries=0, http_client=httpx.Client(timeout=30))


def test_builders_validate_against_the_openai_types() -> None:
    body = Response.model_validate(response_object("Hi.", [CALL], reasoning="think"))
    assert [item.type for item in body.output] == ["reasoning", "message", "function_call"]
    adapter = TypeAdapter(ResponseStreamEvent)
    events = [adapter.validate_python(e) for e in responses_stream("Hello there.", [CALL], reasoning="think")]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    frame = sse_events(responses_stream("x"))[0]
    assert frame.startswith(b"event: response.created\ndata: {") and frame.endswith(b"}\n\n")


def test_a_turn_answers_a_responses_request(scripted) -> None:
    script, server = scripted
    script.push(Turn("Checking.", [CALL], reasoning="SKU known."), Turn("Done."))
    with _client(server) as client:
        first = client.responses.create(model="m", input="How many?")
        second = client.responses.create(model="m", input="And now?", previous_response_id=first.id)
    assert first.object == "response" and first.status == "completed"
    assert first.output_text == "Checking."
    call = next(i for i in first.output if i.type == "function_call")
    assert (call.call_id, call.name, call.arguments) == ("call_7", "check_stock", '{"sku": "SKU-1001"}')
    assert first.id != second.id and second.previous_response_id == first.id
    assert second.output_text == "Done."


def test_a_turn_streams_typed_events_without_done(scripted) -> None:
    script, server = scripted
    script.push(Turn("All 25 in stock.", [CALL]))
    with _client(server) as client:
        events = list(client.responses.create(model="m", input="How many?", stream=True))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    args = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert (text, args) == ("All 25 in stock.", '{"sku": "SKU-1001"}')
    assert events[-1].type == "response.completed" and events[-1].response.output_text == "All 25 in stock."
    with httpx.Client(timeout=30) as raw:
        script.push(Turn("ok"))
        body = raw.post(f"{server.url}/v1/responses", json={"model": "m", "input": "x", "stream": True}).content
    assert b"[DONE]" not in body and body.count(b"event: ") == body.count(b"data: ")


@pytest.mark.parametrize("stream", [False, True])
def test_chat_turn_carries_reasoning_content(scripted, stream: bool) -> None:
    script, server = scripted
    script.push(Turn("Fine.", reasoning="Thinking first."))
    with _client(server) as client:
        if stream:
            chunks = list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True))
            reasoning = "".join(getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in chunks if c.choices)
            content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            message = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}]).choices[0].message
            reasoning, content = getattr(message, "reasoning_content", None), message.content
    assert (reasoning, content) == ("Thinking first.", "Fine.")
