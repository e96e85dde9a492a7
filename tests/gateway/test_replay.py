"""Replay: a recorded run answers again, byte for byte, without the model."""

from __future__ import annotations

import httpx
import openai
import pytest
from sqlmodel import Session, select

from probegate.gateway.app import GatewayConfig
from probegate.gateway.replay import ReplaySettings
from probegate.runner.compose import build_app
from probegate.errors import UsageError
from probegate.store import CaptureWriter, Exchange, open_store
from probegate.testing import ScriptedUpstream, Turn, serve_in_thread

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


def _conversation(base_url: str) -> list[str]:
    client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0)
    out = []
    for text in ("first", "first"):  # identical requests: answered in recorded order
        out.append(client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
                   .choices[0].message.content)
    stream = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "stream"}],
                                            stream=True, tools=TOOLS)
    out.append("".join(c.choices[0].delta.content or "" for c in stream if c.choices))
    calls = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "call"}], tools=TOOLS)
    out.append(calls.choices[0].message.tool_calls[0].function.arguments)
    return out


@pytest.fixture
def recorded(tmp_path, gateway_factory):
    script = ScriptedUpstream([Turn("one"), Turn("two"), Turn("streamed words here"),
                               Turn(tool_calls=[{"name": "get_weather", "arguments": {"city": "Oslo"}}])])
    upstream = serve_in_thread(script)
    try:
        gw = gateway_factory(upstream.url)
        answers = _conversation(gw.base("rec", "t1", 0))
        gw.flush()
    finally:
        upstream.stop()
    return gw, answers


def _replay_gateway(source_engine, tmp_path, **settings):
    store = open_store(f"sqlite:///{tmp_path / 'replayed.db'}")
    writer = CaptureWriter(store).start()
    app = build_app(GatewayConfig(upstream=settings.pop("upstream", ""), replay=ReplaySettings("rec", **settings)),
                    engine=source_engine, writer=writer)
    return serve_in_thread(app), store, writer


def test_replay_answers_byte_for_byte_without_upstream(recorded, tmp_path) -> None:
    gw, answers = recorded
    server, store, writer = _replay_gateway(gw.engine, tmp_path, timing="recorded")
    try:
        replayed = _conversation(f"{server.url}/r/again/t1/0/v1")
    finally:
        server.stop()
        writer.close()
    assert replayed == answers == ["one", "two", "streamed words here", '{"city": "Oslo"}']
    with Session(gw.engine) as session:
        original = {e.seq: e for e in session.exec(select(Exchange).where(Exchange.run_id == "rec")).all()}
    with Session(store) as session:
        copies = session.exec(select(Exchange).where(Exchange.run_id == "again").order_by(Exchange.seq)).all()
    assert len(copies) == 4
    for copy in copies:
        source = original[copy.seq]
        assert copy.compat == [{"rule": "replay", "source": source.id}]
        assert copy.response_raw == source.response_raw
        assert copy.completion == source.completion
        assert len(copy.chunks) == len(source.chunks)


def test_unrecorded_request_names_the_nearest_and_first_difference(recorded, tmp_path) -> None:
    gw, _ = recorded
    server, _, writer = _replay_gateway(gw.engine, tmp_path)
    try:
        response = httpx.post(f"{server.url}/r/again/t1/0/v1/chat/completions",
                              json={"model": "m", "messages": [{"role": "user", "content": "firts"}]})
    finally:
        server.stop()
        writer.close()
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "replay_miss"
    assert "messages[0].content" in error["message"] and "nearest is exchange" in error["message"]


def test_new_episodes_go_upstream(recorded, tmp_path) -> None:
    gw, _ = recorded
    fresh = serve_in_thread(ScriptedUpstream([Turn("from the model")]))
    server, _, writer = _replay_gateway(gw.engine, tmp_path, mode="new_episodes", upstream=fresh.url)
    try:
        client = openai.OpenAI(base_url=f"{server.url}/r/again/t1/0/v1", api_key="x", max_retries=0)
        hit = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "first"}])
        miss = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "new"}])
    finally:
        server.stop()
        writer.close()
        fresh.stop()
    assert (hit.choices[0].message.content, miss.choices[0].message.content) == ("one", "from the model")


def test_ignore_model(recorded, tmp_path) -> None:
    gw, _ = recorded
    server, _, writer = _replay_gateway(gw.engine, tmp_path, ignore_model=True)
    try:
        client = openai.OpenAI(base_url=f"{server.url}/r/again/t1/0/v1", api_key="x", max_retries=0)
        answer = client.chat.completions.create(model="renamed", messages=[{"role": "user", "content": "first"}])
    finally:
        server.stop()
        writer.close()
    assert answer.choices[0].message.content == "one"


def test_replaying_an_unknown_run_is_a_usage_error(engine) -> None:
    with pytest.raises(UsageError, match="no replayable exchange"):
        build_app(GatewayConfig(upstream="", replay=ReplaySettings("nope")), engine=engine)


def test_a_redacted_recording_still_replays(tmp_path, gateway_factory) -> None:
    """A scrubbed body is shorter or longer than the one answered: the replay drops the
    stale ``content-length`` and serves the scrubbed bytes at the recorded pacing."""
    key = "sk-proj-abcdefghijklmnopqrstuvwx"
    script = ScriptedUpstream([Turn(f"the key is {key}"), Turn(f"streamed {key} here")])
    upstream = serve_in_thread(script)
    try:
        gw = gateway_factory(upstream.url)
        client = openai.OpenAI(base_url=gw.base("rec", "t1", 0), api_key="x", max_retries=0)
        plain = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}])
        assert plain.choices[0].message.content == f"the key is {key}"
        list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "b"}], stream=True))
        gw.flush()
    finally:
        upstream.stop()
    server, store, writer = _replay_gateway(gw.engine, tmp_path, timing="recorded")
    try:
        again = openai.OpenAI(base_url=f"{server.url}/r/again/t1/0/v1", api_key="x", max_retries=0)
        first = again.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}])
        stream = again.chat.completions.create(model="m", messages=[{"role": "user", "content": "b"}], stream=True)
        second = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    finally:
        server.stop()
        writer.close()
    assert first.choices[0].message.content == "the key is [redacted]"
    assert second == "streamed [redacted] here"
