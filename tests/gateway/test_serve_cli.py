"""``probegate serve`` as a user runs it: a subprocess, stopped with SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from sqlmodel import Session, select

from probegate.store import Exchange, open_store
from probegate.testing import ScriptedUpstream, Turn, serve_in_thread
from probegate.testing.serve_process import start_serve

PROBEGATE = [sys.executable, "-m", "probegate"]


def test_sigterm_under_load_loses_nothing(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    upstream = serve_in_thread(ScriptedUpstream(default=Turn("ok", gap_s=0.001)))
    store = f"sqlite:///{tmp_path / 'store.db'}"
    server = start_serve(["--upstream", upstream.url, "--store", store])
    proc = server.proc
    request.addfinalizer(server.close)
    url = f"{server.url}/r/load/t/0/v1/chat/completions"

    def one(i: int) -> str | None:
        try:
            response = httpx.post(url, json={"model": "m", "stream": i % 2 == 0, "messages": []}, timeout=30)
            response.read()
        except httpx.TransportError:
            return None  # refused after shutdown began: never reached the gateway
        return response.headers.get("x-probegate-exchange-id") if response.status_code == 200 else None

    try:
        with ThreadPoolExecutor(16) as pool:
            futures = [pool.submit(one, i) for i in range(400)]
            while sum(f.done() for f in futures) < 100:
                time.sleep(0.01)
            proc.send_signal(signal.SIGTERM)
            answered = {f.result() for f in futures} - {None}
        proc.wait(60)
        # uvicorn drains, runs the lifespan shutdown, then re-raises the signal
        assert proc.returncode in (0, -signal.SIGTERM)
        assert "Traceback" not in server.stderr()
    finally:
        proc.kill()
        upstream.stop()
    with Session(open_store(store)) as session:
        stored = {row.id for row in session.exec(select(Exchange)).all()}
    assert len(answered) >= 100
    assert answered <= stored, f"{len(answered - stored)} answered exchanges missing from the store"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--upstream", "http://127.0.0.1:1", "--host", "0.0.0.0"], "not loopback"),
        (["--upstream", "http://127.0.0.1:1", "--host", "0.0.0.0", "--allow-remote"], "needs --token"),
        (["--upstream", "ftp://x"], "Invalid value for '--upstream': 'ftp://x' is not an http(s) URL"),
        (["--upstream", "http://127.0.0.1:1", "--max-body", "lots"], "not a size"),
        (["--upstream", "http://127.0.0.1:1", "--store", "nosuch://x"], "stores are SQLite or PostgreSQL, not nosuch"),
        (["--upstream", "http://127.0.0.1:1", "--port", "99999"], "Invalid value for '--port'"),
        (["--upstream", "http://127.0.0.1:1", "--upstream-timeout", "-1"], "-1 must be more than 0"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args: list[str], message: str) -> None:
    result = subprocess.run([*PROBEGATE, "serve", *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_captures_cli(tmp_path: Path, sqlite_url: str) -> None:
    upstream = serve_in_thread(ScriptedUpstream(default=Turn("listed")))
    with start_serve(["--upstream", upstream.url, "--store", sqlite_url]) as server:
        try:
            response = httpx.post(f"{server.url}/r/cli/t7/v1/chat/completions", json={"model": "m", "messages": []})
        finally:
            server.terminate(30)
            upstream.stop()
    xid = response.headers["x-probegate-exchange-id"]
    env = {**os.environ, "COLUMNS": "200"}
    listed = subprocess.run([*PROBEGATE, "captures", "list", "--run", "cli", "--json", "--store", sqlite_url],
                            capture_output=True, text=True, env=env, timeout=60)
    assert listed.returncode == 0 and f'"{xid}"' in listed.stdout and '"task": "t7"' in listed.stdout
    shown = subprocess.run([*PROBEGATE, "captures", "show", xid, "--store", sqlite_url],
                           capture_output=True, text=True, env=env, timeout=60)
    assert shown.returncode == 0 and "listed" in shown.stdout


def test_serve_help_renders_the_attribution_urls() -> None:
    """The help text once held ``[/ATTEMPT]``, which rich read as a closing markup tag (MarkupError)."""
    out = subprocess.run([sys.executable, "-m", "probegate", "serve", "--help"], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert out.returncode == 0 and "MarkupError" not in out.stderr, out.stderr[-500:]
    assert "/r/RUN/TASK/ATTEMPT/v1" in out.stdout
