"""The doctor against local servers that reproduce each interop fault (and one that has none)."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys

import pytest

from probegate.gateway.compat.responses_via_chat import response_from_chat
from probegate.runner.doctor import Doctor, recommended_shims
from probegate.testing import ReceivedRequest, Reply, ScriptedUpstream, Turn, chat_completion, serve_in_thread
from probegate.testing.streams import chat_chunk


def _usage(prompt: int, completion: int = 5) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _tokens(messages: list[dict], *, escape: bool = False, drop_tool_results: bool = False) -> int:
    """A tokenizer's count, roughly: a word or a punctuation character is one token."""
    text = " ".join(str(m.get("content") or "") for m in messages if not (drop_tool_results and m["role"] == "tool"))
    return len(re.findall(r"\w+|[^\w\s]", html.escape(text) if escape else text))


def faulty_server(request: ReceivedRequest) -> Reply | Turn:
    """A server with every fault the doctor knows (llama-cpp-python's, mostly)."""
    if request.path.endswith("/models"):
        return Reply.json({"object": "list", "data": [{"id": "faulty-model"}]})
    if request.path.endswith("/responses"):  # llama-cpp-python has no Responses route
        return Reply.json({"detail": "Not Found"}, 404)
    body = request.json()
    messages = body.get("messages", [])
    tools = body.get("tools")
    if any(m.get("role") == "assistant" and m.get("content") is None for m in messages):
        return Reply.json({"error": {"message": "validation error: messages.2.content Input should be a valid string"}}, 500)
    if any(not isinstance(c["function"]["arguments"], str) for m in messages for c in m.get("tool_calls") or []):
        return Reply(200, [("content-type", "application/json")], chunks=[b"{"], break_after=0)
    if tools and "maxLength" in json.dumps(tools):
        return Reply(200, [("content-type", "application/json")], chunks=[b"{"], break_after=0)
    if "parallel_tool_calls" in body:
        return Reply.json({"error": {"message": "extra inputs are not permitted: parallel_tool_calls"}}, 400)
    if len(json.dumps(messages)) > 20000:
        return Reply.json({"error": {"message": "This model's maximum context length is 4096 tokens"}}, 400)
    if "max_completion_tokens" in body:
        return Reply.json(chat_completion("1 2 3 4 5 6 7 8 9 10 11 12", usage=_usage(10, 40)))
    if tools and body.get("max_tokens") == 8:  # chatml-function-calling passes max_tokens=None on
        return Reply.json(chat_completion("1\n2\n3\n4\n5\n6\n7\n8\n9\n10", usage=_usage(60, 20)))  # its tool path
    # llama-cpp-python's chatml-function-calling: HTML-escaped content, tool results dropped
    seen = _usage(_tokens(messages, escape=True, drop_tool_results=True))
    if tools and not any(m.get("role") == "system" for m in messages):  # tools live in the system message
        return Reply.json(chat_completion("Hello there.", usage=seen))
    if tools and body.get("stream"):
        return Reply.sse([chat_chunk({"content": '{"name": "get_weather"}'}), chat_chunk({}, "stop")])
    if tools and "tool_choice" in body:
        return Reply.json(chat_completion(tool_calls=[{"name": "get_weather", "arguments": {"city": "Paris"}}],
                                          usage=_usage(200)))
    return Reply.json(chat_completion("Hello there.", usage=seen))


def healthy_server(request: ReceivedRequest) -> Reply | Turn:
    """A server that gets everything right."""
    if request.path.endswith("/models"):
        return Reply.json({"object": "list", "data": [{"id": "good-model"}]})
    body = request.json()
    if request.path.endswith("/responses"):
        return Reply.json(response_from_chat(chat_completion("Hello."), body, base="doctor"))
    if body.get("tools") and body["messages"][-1]["role"] != "tool":
        call = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
        if body.get("stream"):
            return Turn(tool_calls=call)
        return Reply.json(chat_completion(tool_calls=call, usage=_usage(200)))
    limit = body.get("max_completion_tokens")
    return Reply.json(chat_completion("Hello.", usage=_usage(_tokens(body["messages"]), min(limit or 5, 5))))


@pytest.fixture
def server():
    started = []

    def start(handler):
        running = serve_in_thread(ScriptedUpstream(handler=handler))
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()


def test_every_fault_is_found_with_its_shim(server) -> None:
    checks = Doctor(server(faulty_server).url).run()
    verdicts = {c.name: (c.verdict, c.shim) for c in checks}
    assert verdicts == {
        "plain": ("ok", None),
        "responses": ("problem", "responses-via-chat"),
        "tools": ("ok", None),
        "tools-no-choice": ("problem", "tool-choice-auto"),
        "tools-no-system": ("problem", "system-for-tools"),
        "tools-stream": ("problem", None),
        "null-content": ("problem", "null-content"),
        "object-args": ("problem", "args-as-string"),
        "tool-results": ("problem", "tool-results-as-user"),
        "unescaped-content": ("problem", None),
        "max_completion_tokens": ("problem", "max-tokens-alias"),
        "max-tokens-with-tools": ("problem", "bound-strings"),
        "parallel_tool_calls": ("problem", "drop-params=parallel_tool_calls"),
        "long-context": ("unsupported", None),
        "long-max-length": ("problem", "cap-max-length"),
    }
    assert recommended_shims(checks) == ["responses-via-chat", "tool-choice-auto", "system-for-tools", "null-content", "args-as-string",
                                         "tool-results-as-user", "max-tokens-alias", "bound-strings",
                                         "drop-params=parallel_tool_calls", "cap-max-length"]
    assert "messages.2.content" in next(c.evidence for c in checks if c.name == "null-content")
    assert "asked for 8 tokens, got 20" in next(c.evidence for c in checks if c.name == "max-tokens-with-tools")
    evidence = {c.name: c.evidence for c in checks}
    assert "the server drops tool results" in evidence["tool-results"]
    assert evidence["responses"].startswith("HTTP 404: the server has no /v1/responses route")
    assert "HTML-escapes content" in evidence["unescaped-content"]


def test_a_healthy_server_needs_no_shim(server) -> None:
    doctor = Doctor(server(healthy_server).url + "/v1")
    checks = doctor.run()
    assert doctor.model == "good-model"
    assert [c.name for c in checks if c.verdict != "ok"] == []
    assert next(c for c in checks if c.name == "responses").evidence == "HTTP 200"
    assert recommended_shims(checks) == []


@pytest.mark.parametrize(("reply", "verdict", "shim"), [
    (Reply.json({"detail": "Not Found"}, 404), "problem", "responses-via-chat"),
    (Reply(405, [("content-type", "text/plain")], b"Method Not Allowed"), "problem", "responses-via-chat"),
    (Reply.json(chat_completion("Hello.")), "problem", "responses-via-chat"),  # a route that answers in chat form
    (Reply.json({"error": {"message": "model is loading"}}, 503), "error", None),
    (Reply.json(response_from_chat(chat_completion("Hello."), {}, base="r")), "ok", None),
])
def test_responses_check(reply: Reply, verdict: str, shim: str | None) -> None:
    """The Responses route: missing (404, 405) or answering in another shape calls for the rule."""
    script = ScriptedUpstream(handler=lambda request: reply)
    running = serve_in_thread(script)
    doctor = Doctor(running.url, "m")
    try:
        check = doctor.responses()
    finally:
        doctor.client.close()
        running.stop()
    assert (check.name, check.verdict, check.shim) == ("responses", verdict, shim)
    assert [(r.path, r.json()) for r in script.requests] == [
        ("/v1/responses", {"model": "m", "input": "Say hello.", "max_output_tokens": 16})]


def test_cli_json_and_unreachable(server) -> None:
    url = server(faulty_server).url
    out = subprocess.run([sys.executable, "-m", "probegate", "doctor", "--model-endpoint", url, "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["model"] == "faulty-model" and "null-content" in data["recommended_compat"]
    down = subprocess.run([sys.executable, "-m", "probegate", "doctor", "--model-endpoint", "http://127.0.0.1:9"],
                          capture_output=True, text=True, timeout=120)
    assert down.returncode == 2 and "cannot reach a model server" in down.stderr and "Traceback" not in down.stderr


#: What the doctor finds on the embedded server, by chat handler (tool results, escaping and the
#: tool list are the handler's doing; content: null is the server's request validation).
EMBEDDED = {
    "probegate-chatml-tools": {"tool-results": "ok", "unescaped-content": "ok", "tools-no-choice": "ok",
                               "tools-no-system": "ok", "tools-stream": "ok", "null-content": "problem"},
    "chatml-function-calling": {"tool-results": "problem", "unescaped-content": "problem", "tools-no-choice": "problem",
                                "tools-no-system": "problem", "tools-stream": "problem", "null-content": "problem"},
}


@pytest.mark.model
@pytest.mark.timeout(900)  # the embedded model on a busy 2-core machine
@pytest.mark.parametrize("handler", list(EMBEDDED))
def test_doctor_against_the_embedded_model(handler: str) -> None:
    """probegate's chat handler lets tool results and content through unescaped;
    llama-cpp-python's chatml-function-calling drops the one and escapes the other."""
    from probegate.runner.embedded import embedded_server

    with embedded_server(chat_handler=handler) as embedded:
        checks = Doctor(embedded.url, embedded.model, ready=embedded.wait_until_ready).run()
    verdicts = {c.name: c.verdict for c in checks}
    assert verdicts["plain"] == "ok" and verdicts["tools"] == "ok"
    assert {name: verdicts[name] for name in EMBEDDED[handler]} == EMBEDDED[handler]
    if handler == "chatml-function-calling":
        assert {"cap-max-length", "tool-results-as-user"} <= set(recommended_shims(checks))
