"""``probegate serve --host 0.0.0.0 --allow-remote --token T``: every route wants the token.

The model pass-through, the probe routes (``/r/.../tools``, ``/tools``) and the
control routes (``/probegate/*``, ``/openapi.json``) are tried without a token,
with a wrong one and with the token in the wrong place: each gets the 401, nothing
reaches the model server and nothing is stored. The route list is read from the
application itself, so a route added later is covered too.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlmodel import Session, select

from probegate.gateway.app import GatewayConfig
from probegate.runner.compose import build_app
from probegate.store import CaptureWriter, Exchange, ProbeCall, WorldState, open_store
from probegate.testing import ScriptedUpstream, Turn, free_port, serve_in_thread

TOKEN = "s3cret-token"
GOOD = {"authorization": f"Bearer {TOKEN}"}
BAD_CREDENTIALS = [
    {},
    {"authorization": "Bearer wrong"},
    {"authorization": f"Basic {TOKEN}"},
    {"authorization": TOKEN},
    {"x-api-key": TOKEN},
    {"authorization": f"Bearer {TOKEN}x"},
]
MODEL_ROUTES = [("POST", "/v1/chat/completions"), ("POST", "/r/denied/t1/0/v1/chat/completions"),
                ("GET", "/v1/models"), ("POST", "/r/denied/t1/v1/completions"), ("GET", "/anything/else")]
_VALUES = {"run": "denied", "task": "t1", "attempt": "0", "tool": "get_weather"}


def app_routes() -> list[tuple[str, str]]:
    """(method, concrete path) of every route the composed application declares."""
    engine = open_store("sqlite:///:memory:")
    app = build_app(GatewayConfig(upstream="http://127.0.0.1:9", token=TOKEN), engine=engine,
                    writer=CaptureWriter(engine))
    routes = []
    for route in app.api.routes:
        path = re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: _VALUES[m.group(1)], route.path)  # type: ignore[attr-defined]
        routes.extend((method, path) for method in sorted(route.methods or ()) if method != "HEAD")  # type: ignore[attr-defined]
    engine.dispose()
    return routes


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, ScriptedUpstream, str, subprocess.Popen[bytes]]]:
    """``probegate serve`` bound to 0.0.0.0 with --allow-remote --token, in front of a scripted model."""
    script = ScriptedUpstream(default=Turn("hello"))
    upstream = serve_in_thread(script)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    port = free_port("0.0.0.0")
    proc = subprocess.Popen(
        [sys.executable, "-m", "probegate", "serve", "--host", "0.0.0.0", "--port", str(port), "--allow-remote",
         "--token", TOKEN, "--upstream", upstream.url, "--store", store],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/probegate/health", headers=GOOD, timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    try:
        yield url, script, store, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
        upstream.stop()


def test_every_route_wants_the_token(served) -> None:
    url, script, store, proc = served
    routes = app_routes() + MODEL_ROUTES
    assert {("GET", "/r/denied/t1/0/tools"), ("POST", "/r/denied/t1/0/tools/get_weather"), ("GET", "/tools"),
            ("POST", "/probegate/attempts/reset"), ("GET", "/probegate/health"), ("GET", "/openapi.json")} <= set(routes)
    with httpx.Client(base_url=url, timeout=30) as http:
        for method, path in routes:
            for headers in BAD_CREDENTIALS:
                body = {"run": "denied", "task": "t1", "city": "Berlin", "model": "m", "messages": []}
                response = http.request(method, path, headers=headers, json=body, params={"token": TOKEN})
                assert response.status_code == 401, (method, path, headers, response.status_code)
                assert response.json()["error"]["code"] == "unauthorized"
        assert script.requests == []  # nothing reached the model server
        # the token opens the same routes
        assert http.get("/probegate/health", headers=GOOD).status_code == 200
        reset = http.post("/probegate/attempts/reset", headers=GOOD, json={"run": "allowed", "task": "t1",
                                                                        "tools": ["get_weather"]})
        assert reset.status_code == 200, reset.text
        call = http.post("/r/allowed/t1/0/tools/get_weather", headers=GOOD, json={"city": "Berlin"})
        assert call.status_code == 200, call.text
        chat = http.post("/r/allowed/t1/0/v1/chat/completions", headers=GOOD, json={"model": "m", "messages": []})
        assert chat.status_code == 200 and len(script.requests) == 1
    # refused requests left no row: only the allowed run is stored (SIGTERM drains the writer)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) in (0, -signal.SIGTERM)
    engine = open_store(store)
    with Session(engine) as session:
        for table in (Exchange, ProbeCall, WorldState):
            assert {row.run_id for row in session.exec(select(table))} == {"allowed"}, table.__name__
    engine.dispose()
