"""``probegate probes list|log|serve`` and ``probegate intercept`` argument checks."""

from __future__ import annotations

import json
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from probegate.cli import app
from probegate.errors import UsageError
from probegate.store.engine import open_store
from probegate.store.writer import CaptureWriter
from probegate.testing import free_port
from probegate.testing.signals import default_sigint
from probegate.probes.catalog import tool_names
from probegate.probes.service import ProbeService
from probegate.probes.store import read_probe_calls

runner = CliRunner()


def test_probes_list() -> None:
    as_json = runner.invoke(app, ["probes", "list", "--json"])
    assert as_json.exit_code == 0
    listed = json.loads(as_json.stdout)
    assert [t["name"] for t in listed] == tool_names()
    assert {t["side_effect"] for t in listed} >= {"email", "order", "file", None}
    table = runner.invoke(app, ["probes", "list"], env={"COLUMNS": "200"})
    assert table.exit_code == 0 and "send_email" in table.stdout and "to, subject, body, cc?" in table.stdout


@pytest.fixture
def logged_run(engine: Engine, store_url: str) -> str:
    writer = CaptureWriter(engine).start()
    service = ProbeService(writer)
    service.call("cli-run", "t1", 0, "get_weather", b'{"city": "Berlin"}')
    service.call("cli-run", "t1", 0, "send_email", b'{"to": "[bold]bob"}')
    service.call("cli-run", "t2", 1, "get_order", b'{"order_id": "ORD-0001"}')
    writer.close()
    return store_url


def test_probes_log_json(logged_run: str) -> None:
    result = runner.invoke(app, ["probes", "log", "cli-run", "--json", "--store", logged_run])
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert [(r["task_id"], r["seq"], r["tool"], r["status"]) for r in rows] == [
        ("t1", 1, "get_weather", "ok"), ("t1", 2, "send_email", "blocked"), ("t2", 1, "get_order", "error")]
    only = json.loads(runner.invoke(app, ["probes", "log", "cli-run", "t2", "--attempt", "1", "--json",
                                          "--store", logged_run]).stdout)
    assert [r["tool"] for r in only] == ["get_order"]


def test_probes_log_table(logged_run: str) -> None:
    result = runner.invoke(app, ["probes", "log", "cli-run", "--store", logged_run], env={"COLUMNS": "250"})
    assert result.exit_code == 0
    assert "get_weather" in result.stdout and "blocked" in result.stdout
    assert "[bold]bob" in result.stdout, "cell text is printed literally, never as rich markup"
    assert "not_found: unknown order 'ORD-0001'" in result.stdout


def test_probes_log_of_an_unknown_run(sqlite_url: str) -> None:
    open_store(sqlite_url).dispose()
    result = runner.invoke(app, ["probes", "log", "nobody", "--store", sqlite_url])
    assert result.exit_code == 0 and "no probe calls recorded for run 'nobody'" in result.stderr


def test_serve_refuses_a_remote_bind() -> None:
    result = runner.invoke(app, ["probes", "serve", "--host", "0.0.0.0"])
    assert isinstance(result.exception, UsageError) and "loopback" in str(result.exception)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--probes", "somewhere"], "--probes must be 'in-process' or an http(s) URL"),
        (["--feedback", "loud", "--probes", "in-process"], "'loud' is not one of plain, actionable"),
        (["--host", "10.0.0.1"], "loopback"),
    ],
)
def test_intercept_argument_errors(args: list[str], message: str, sqlite_url: str) -> None:
    result = runner.invoke(app, ["intercept", "--store", sqlite_url, *args])
    if isinstance(result.exception, SystemExit):  # refused by the option's own check (click)
        assert result.exit_code == 2 and message in result.output
    else:
        assert isinstance(result.exception, UsageError) and message in str(result.exception)


def test_intercept_bad_mapping_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "map.yaml"
    bad.write_text("routes:\n  - {host: api.x.example, path: /v1/x, tool: fly}\n")
    done = subprocess.run([str(Path(sys.executable).parent / "probegate"), "intercept", "--map", str(bad)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"error: {bad}: routes[0]: unknown tool 'fly'"]


def _start(args: list[str], ready: str) -> subprocess.Popen[str]:
    """Start a probegate command, as from a terminal (Ctrl-C works), and wait for its ready line on stderr."""
    proc = subprocess.Popen([str(Path(sys.executable).parent / "probegate"), *args],
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert ready in line, line
    return proc


def _interrupt(proc: subprocess.Popen[str], sig: signal.Signals = signal.SIGINT) -> None:
    """Ctrl-C (or ``sig``) the command; it must end cleanly within 60 s (killed otherwise, so no
    later test inherits it)."""
    proc.send_signal(sig)
    try:
        proc.communicate(timeout=60)  # drains and closes stderr
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate(timeout=60)
        pytest.fail(f"{proc.args[1]} did not stop within 60 s of {sig.name}; its stderr ends with: {stderr[-2000:]}")
    assert proc.returncode in (0, 130, -signal.SIGINT), proc.returncode


def test_probes_serve_end_to_end(sqlite_url: str) -> None:
    port = free_port()
    proc = _start(["probes", "serve", "--port", str(port), "--store", sqlite_url, "--feedback", "plain"], "probegate probes on")
    try:
        for _ in range(200):  # uvicorn binds right after the banner
            try:
                response = httpx.post(f"http://127.0.0.1:{port}/r/cli/t1/tools/send_email", json={"to": "x"})
                break
            except httpx.ConnectError:
                time.sleep(0.05)
        assert response.status_code == 422 and response.json()["hint"] == "invalid parameters for send_email"
    finally:
        _interrupt(proc)
    engine = open_store(sqlite_url)
    assert [(r.tool, r.status, r.feedback) for r in read_probe_calls(engine, "cli")] == [("send_email", "blocked", "plain")]
    engine.dispose()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_intercept_end_to_end(sqlite_url: str, tmp_path: Path, sig: signal.Signals) -> None:
    """A request answered by a probe, one refused; the probe call is stored after Ctrl-C or a
    SIGTERM (``docker stop``, ``kill``) ends the proxy."""
    port = free_port()
    proc = _start(["intercept", "--port", str(port), "--confdir", str(tmp_path), "--store", sqlite_url],
                  "probegate intercept on")
    try:
        verify = ssl.create_default_context(cafile=str(tmp_path / "mitmproxy-ca-cert.pem"))
        with httpx.Client(proxy=f"http://cli:t2@127.0.0.1:{port}", verify=verify, trust_env=False) as client:
            found = client.get("https://api.crm.example/v1/customers", params={"q": "umbrella"})
            refused = client.get("https://example.org/")
    finally:
        _interrupt(proc, sig)
    assert found.json()["customers"][0]["customer_id"] == "CUST-1003"
    assert refused.status_code == 403
    engine = open_store(sqlite_url)
    assert [(r.task_id, r.tool, r.via) for r in read_probe_calls(engine, "cli")] == [("t2", "search_customers", "mitm")]
    engine.dispose()
