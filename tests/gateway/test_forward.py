"""The pass-through end to end: openai SDK -> gateway (uvicorn) -> scripted upstream."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading

import httpx
import openai
import pytest
from sqlmodel import Session, select

from probegate.store import Exchange
from probegate.testing import Reply, ScriptedUpstream, Turn, chat_completion, free_port, serve_in_thread, sse
from probegate.testing.streams import chat_chunk


def _rows(gw, **where) -> list[Exchange]:
    gw.flush()
    with Session(gw.engine) as session:
        query = select(Exchange).order_by(Exchange.seq)
        for key, value in where.items():
            query = query.where(getattr(Exchange, key) == value)
        return list(session.exec(query).all())


def test_openai_sdk_sync_non_stream_and_stream(upstream, gateway) -> None:
    script, _ = upstream
    script.push(Turn("Hello there."), Turn(tool_calls=[{"name": "get_weather", "arguments": {"city": "Oslo"}}]))
    client = openai.OpenAI(base_url=gateway.base("r1", "t1", 0), api_key="sk-test-secret")
    raw = client.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "hi"}]
    )
    assert raw.parse().choices[0].message.content == "Hello there."
    assert raw.headers["x-probegate-exchange-id"]
    assert float(raw.headers["x-probegate-overhead-ms"]) >= 0
    stream = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "weather?"}], stream=True,
        tools=[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
    )
    pieces = [c.choices[0].delta.tool_calls for c in stream if c.choices and c.choices[0].delta.tool_calls]
    assert pieces

    rows = _rows(gateway, run_id="r1")
    assert [(r.task_id, r.attempt, r.seq, r.stream) for r in rows] == [("t1", 0, 0, False), ("t1", 0, 1, True)]
    assert rows[0].id == raw.headers["x-probegate-exchange-id"]
    assert rows[0].completion["assistant"]["content"] == "Hello there."
    assert rows[1].completion["assistant"]["tool_calls"][0]["arguments"] == {"city": "Oslo"}
    assert rows[1].response_body["object"] == "chat.completion"
    assert rows[1].sse_events[-1]["data"] == "[DONE]"
    assert all(isinstance(e["t"], float) for e in rows[1].sse_events)
    assert rows[1].ttft_ms is not None and rows[1].latency_ms >= rows[1].ttft_ms
    assert rows[0].request_headers["authorization"] == "Bearer [redacted]"
    assert "sk-test-secret" not in json.dumps(rows[0].request_headers)
    assert script.requests[0].headers["authorization"] == "Bearer sk-test-secret"
    assert rows[0].prompt_tokens == 10 and rows[0].completion_tokens == 5


def test_openai_sdk_async_stream_and_non_stream(upstream, gateway) -> None:
    script, _ = upstream
    script.push(Turn("one"), Turn("two streamed"))

    async def go() -> tuple[str, str]:
        client = openai.AsyncOpenAI(base_url=gateway.base("r2", "t9", 3), api_key="x")
        first = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}])
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "b"}], stream=True
        )
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        await client.close()
        return first.choices[0].message.content, text

    assert asyncio.run(go()) == ("one", "two streamed")
    rows = _rows(gateway, run_id="r2")
    assert [(r.task_id, r.attempt) for r in rows] == [("t9", 3), ("t9", 3)]
    assert rows[1].completion["assistant"]["content"] == "two streamed"


def test_body_and_unknown_params_pass_untouched(upstream, gateway) -> None:
    script, _ = upstream
    body = b'{"model":"m",  "messages":[{"role":"user","content":"x"}],"my_vendor_knob":{"deep":[1,2.50]}}'
    response = httpx.post(
        f"{gateway.base()}/chat/completions?api-version=7",
        content=body,
        headers={"content-type": "application/json", "connection": "keep-alive, x-hop", "x-hop": "1",
                 "x-custom": "kept", "x-probegate-run": "ignored-upstream"},
    )
    assert response.status_code == 200
    received = script.requests[-1]
    assert received.body == body
    assert received.query == "api-version=7"
    assert received.headers["x-custom"] == "kept"
    assert "x-hop" not in received.headers and "x-probegate-run" not in received.headers
    row = _rows(gateway)[-1]
    assert row.request_body["my_vendor_knob"] == {"deep": [1, 2.5]}
    assert row.query == "api-version=7"


def test_first_byte_reaches_client_before_upstream_finishes(upstream, gateway) -> None:
    script, _ = upstream
    gate = threading.Event()
    chunks = [sse([chat_chunk({"content": f"p{i}"})], done=False) for i in range(3)] + [b"data: [DONE]\n\n"]
    script.push(Reply(200, [("content-type", "text/event-stream")], chunks=chunks, gate=gate))
    try:
        with httpx.stream("POST", f"{gateway.base()}/chat/completions",
                          json={"model": "m", "stream": True, "messages": []}, timeout=20) as response:
            parts = response.iter_raw()
            first = next(parts)
            # the upstream is still held at its gate: the gateway did not buffer
            assert b"p0" in first and script.completed == 0
            gate.set()
            rest = b"".join(parts)
    finally:
        gate.set()
    assert b"[DONE]" in rest
    row = _rows(gateway)[-1]
    assert row.completion["assistant"]["content"] == "p0p1p2"
    assert len(row.chunks) >= 2


def test_gzip_body_stays_consistent_with_its_header(upstream, gateway) -> None:
    script, _ = upstream
    payload = gzip.compress(json.dumps(chat_completion("zipped")).encode())
    script.push(Reply(200, [("content-type", "application/json"), ("content-encoding", "gzip")], body=payload))
    response = httpx.post(f"{gateway.base()}/chat/completions", json={"model": "m", "messages": []},
                          headers={"accept-encoding": "gzip"})
    assert response.headers["content-encoding"] == "gzip"
    assert response.json()["choices"][0]["message"]["content"] == "zipped"
    row = _rows(gateway)[-1]
    assert row.response_raw == payload
    assert row.completion["assistant"]["content"] == "zipped"


def test_upstream_unreachable_is_502_and_recorded(gateway_factory) -> None:
    gw = gateway_factory(f"http://127.0.0.1:{free_port()}")
    response = httpx.post(f"{gw.base('r', 'down')}/chat/completions", json={"model": "m", "messages": []})
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "upstream_unreachable" and error["message"] and error["type"]
    row = _rows(gw, task_id="down")[0]
    assert row.status_code == 502 and row.error.startswith("upstream_unreachable")


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_upstream_timeout_is_504_and_recorded(upstream, gateway_factory, transport: str) -> None:
    script, server = upstream
    script.push(Reply.json(chat_completion("late"), delay_s=3))
    gw = gateway_factory(server.url, upstream_timeout=0.5, transport=transport)
    response = httpx.post(f"{gw.base('r', 'slow')}/chat/completions", json={"model": "m", "messages": []})
    assert response.status_code == 504
    assert response.json()["error"]["code"] == "upstream_timeout"
    assert _rows(gw, task_id="slow")[0].error.startswith("upstream_timeout")


def test_body_over_limit_is_413(upstream, gateway_factory) -> None:
    gw = gateway_factory(upstream[1].url, max_body=1024)
    response = httpx.post(f"{gw.base('r', 'big')}/chat/completions", content=b"x" * 4096)
    assert response.status_code == 413
    assert "1024 bytes" in response.json()["error"]["message"]
    assert upstream[0].requests == []
    row = _rows(gw, task_id="big")[0]
    assert row.status_code == 413 and row.error.startswith("request_too_large")


def test_non_json_body_forwarded_and_stored_raw(upstream, gateway) -> None:
    script, _ = upstream
    script.push(Reply(400, [("content-type", "text/plain")], body=b"bad request"))
    response = httpx.post(f"{gateway.base()}/chat/completions", content=b"\x00not json\xff",
                          headers={"content-type": "application/octet-stream"})
    assert (response.status_code, response.content) == (400, b"bad request")
    assert script.requests[-1].body == b"\x00not json\xff"
    row = _rows(gateway)[-1]
    assert row.request_body is None and row.request_raw == b"\x00not json\xff"
    assert row.status_code == 400 and row.response_raw == b"bad request"


def test_client_disconnect_mid_stream_cancels_upstream(upstream, gateway) -> None:
    script, _ = upstream
    gate = threading.Event()
    chunks = [sse([chat_chunk({"content": "first"})], done=False), sse([chat_chunk({"content": "never"})])]
    script.push(Reply(200, [("content-type", "text/event-stream")], chunks=chunks, gate=gate))
    try:
        with httpx.stream("POST", f"{gateway.base('r', 'gone')}/chat/completions",
                          json={"model": "m", "stream": True, "messages": []}, timeout=20) as response:
            assert b"first" in next(response.iter_raw())
        # leaving the block closes the connection mid-stream
        for _ in range(500):
            rows = _rows(gateway, task_id="gone")
            if rows and script.disconnects:
                break
            threading.Event().wait(0.02)
    finally:
        gate.set()
    row = rows[0]
    assert row.error == "client_disconnected"
    assert b"first" in row.response_raw and b"never" not in row.response_raw
    assert script.disconnects == 1 and script.completed == 0


def test_bare_v1_is_adhoc_unless_headers_say_otherwise(upstream, gateway) -> None:
    httpx.post(f"{gateway.url}/v1/chat/completions", json={"model": "m", "messages": []})
    httpx.post(f"{gateway.url}/v1/chat/completions", json={"model": "m", "messages": []},
               headers={"x-probegate-run": "hdr-run", "x-probegate-task": "hdr-task"})
    assert [(r.run_id, r.task_id) for r in _rows(gateway)] == [("adhoc", "-"), ("hdr-run", "hdr-task")]


def test_get_routes_and_ollama_native_stream(upstream, gateway) -> None:
    script, _ = upstream
    script.push(Reply.json({"object": "list", "data": [{"id": "m"}]}))
    lines = [{"model": "q", "message": {"role": "assistant", "content": "Hi"}, "done": False},
             {"model": "q", "message": {"role": "assistant", "content": "!"}, "done": True, "done_reason": "stop",
              "prompt_eval_count": 3, "eval_count": 2}]
    script.push(Reply(200, [("content-type", "application/x-ndjson")],
                      chunks=[(json.dumps(line) + "\n").encode() for line in lines]))
    models = httpx.get(f"{gateway.base('r', 'ol')}/models")
    assert models.json()["data"][0]["id"] == "m"
    with httpx.stream("POST", f"{gateway.url}/r/r/ol/0/api/chat",
                      json={"model": "q", "messages": [{"role": "user", "content": "x"}]}) as response:
        body = b"".join(response.iter_raw())
    assert body.count(b"\n") == 2
    rows = _rows(gateway, task_id="ol")
    assert [r.path for r in rows] == ["/v1/models", "/api/chat"]
    assert rows[0].method == "GET" and rows[0].completion is None
    assert rows[1].stream_format == "ndjson"
    assert rows[1].completion["assistant"]["content"] == "Hi!"
    assert rows[1].completion["usage"] == {"prompt_tokens": 3, "completion_tokens": 2}


def test_a_scripted_turn_answers_api_chat_in_ollamas_form(upstream, gateway) -> None:
    """``Turn`` on ``/api/chat``: NDJSON by default (Ollama streams unless told not to), one
    object with ``"stream": false``; calls whole, arguments an object, no id."""
    script, _ = upstream
    call = {"name": "get_weather", "arguments": {"city": "Oslo"}}
    script.push(Turn("Sunny in Oslo."), Turn(tool_calls=[call]))
    url = f"{gateway.url}/r/r/native/0/api/chat"
    streamed = httpx.post(url, json={"model": "q", "messages": [{"role": "user", "content": "x"}]})
    lines = [json.loads(line) for line in streamed.text.splitlines()]
    assert streamed.headers["content-type"] == "application/x-ndjson"
    assert "".join(line["message"]["content"] for line in lines) == "Sunny in Oslo."
    assert [line["done"] for line in lines][-2:] == [False, True] and lines[-1]["done_reason"] == "stop"
    whole = httpx.post(url, json={"model": "q", "messages": [{"role": "user", "content": "x"}], "stream": False}).json()
    assert whole["message"]["tool_calls"] == [{"function": call}] and whole["done"] is True
    rows = _rows(gateway, task_id="native")
    assert [(r.stream_format, r.completion["assistant"]["content"]) for r in rows] == [
        ("ndjson", "Sunny in Oslo."), (None, None)]
    assert [(c["id"], c["name"], c["arguments"]) for c in rows[1].completion["assistant"]["tool_calls"]] == [
        (None, "get_weather", {"city": "Oslo"})]
    assert rows[0].completion["usage"] == {"prompt_tokens": 10, "completion_tokens": 5}


def test_health_reports_writer(upstream, gateway) -> None:
    httpx.post(f"{gateway.base()}/chat/completions", json={"model": "m", "messages": []})
    gateway.flush()
    health = httpx.get(f"{gateway.url}/probegate/health").json()
    assert health["status"] == "ok"
    assert health["rows_written"] >= 1 and health["queue_depth"] == 0 and health["writer_errors"] == 0


def test_unknown_route_is_404_not_forwarded(upstream, gateway) -> None:
    assert httpx.get(f"{gateway.url}/r/only-run").status_code == 404
    assert httpx.get(f"{gateway.url}/elsewhere").status_code == 404
    assert upstream[0].requests == []


def test_upstream_breaking_mid_stream_is_recorded(upstream, gateway) -> None:
    script, _ = upstream
    chunks = [sse([chat_chunk({"content": "part"})], done=False), b"data: [DONE]\n\n"]
    script.push(Reply(200, [("content-type", "text/event-stream")], chunks=chunks, break_after=1))
    with pytest.raises(httpx.HTTPError):
        with httpx.stream("POST", f"{gateway.base('r', 'reset')}/chat/completions",
                          json={"model": "m", "stream": True, "messages": []}) as response:
            b"".join(response.iter_raw())
    row = _rows(gateway, task_id="reset")[0]
    assert row.error and "mid-response" in row.error
    assert row.completion["assistant"]["content"] == "part"
    assert "stream_incomplete" in row.flags


def test_port_helper_gives_a_bindable_port() -> None:
    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_token_protects_every_route(upstream, gateway_factory) -> None:
    gw = gateway_factory(upstream[1].url, token="s3cret")
    assert httpx.get(f"{gw.url}/probegate/health").status_code == 401
    denied = httpx.post(f"{gw.base()}/chat/completions", json={"model": "m", "messages": []})
    assert denied.status_code == 401 and denied.json()["error"]["code"] == "unauthorized"
    ok = httpx.get(f"{gw.url}/probegate/health", headers={"authorization": "Bearer s3cret"})
    assert ok.status_code == 200


def test_scripted_upstream_serves_directly() -> None:
    script = ScriptedUpstream([Turn("direct")])
    server = serve_in_thread(script)
    try:
        reply = httpx.post(f"{server.url}/v1/chat/completions", json={"model": "m", "messages": []})
    finally:
        server.stop()
    assert reply.json()["choices"][0]["message"]["content"] == "direct"
