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
from probegate.testing import ScriptedUpstream, Turn, free_port, serve_in_thread

PROBEGATE = [sys.executable, "-m", "probegate"]


def _start(args: list[str], port: int) -> subprocess.Popen:
    proc = subprocess.Popen([*PROBEGATE, "serve", "--port", str(port), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # little is logged here (no faults), so the pipe cannot fill before communicate()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/probegate/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"serve did not start: {proc.communicate()[1].decode()[-2000:]}")


def test_sigterm_under_load_loses_nothing(tmp_path: Path) -> None:
    upstream = serve_in_thread(ScriptedUpstream(default=Turn("ok", gap_s=0.001)))
    store = f"sqlite:///{tmp_path / 'store.db'}"
    port = free_port()
    proc = _start(["--upstream", upstream.url, "--store", store], port)
    url = f"http://127.0.0.1:{port}/r/load/t/0/v1/chat/completions"

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
        _, err = proc.communicate(timeout=60)
        # uvicorn drains, runs the lifespan shutdown, then re-raises the signal
        assert proc.returncode in (0, -signal.SIGTERM)
        assert b"Traceback" not in err
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
        (["--upstream", "ftp://x"], "--upstream must be an http(s) URL"),
        (["--upstream", "http://127.0.0.1:1", "--max-body", "lots"], "not a size"),
        (["--upstream", "http://127.0.0.1:1", "--store", "nosuch://x"], "cannot open store"),
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
    port = free_port()
    proc = _start(["--upstream", upstream.url, "--store", sqlite_url], port)
    try:
        response = httpx.post(f"http://127.0.0.1:{port}/r/cli/t7/v1/chat/completions",
                              json={"model": "m", "messages": []})
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
        upstream.stop()
    xid = response.headers["x-probegate-exchange-id"]
    env = {**os.environ, "COLUMNS": "200"}
    listed = subprocess.run([*PROBEGATE, "captures", "list", "--run", "cli", "--json", "--store", sqlite_url],
                            capture_output=True, text=True, env=env, timeout=60)
    assert listed.returncode == 0 and f'"{xid}"' in listed.stdout and '"task": "t7"' in listed.stdout
    shown = subprocess.run([*PROBEGATE, "captures", "show", xid, "--store", sqlite_url],
                           capture_output=True, text=True, env=env, timeout=60)
    assert shown.returncode == 0 and "listed" in shown.stdout
