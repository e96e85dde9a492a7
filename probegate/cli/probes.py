"""``probegate probes serve|log|list`` and ``probegate intercept`` (black-box mode)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from probegate.cli.options import LOG_LEVELS, PORT, JsonOption, StoreOption, can_listen, choice, writable_dir
from probegate.errors import UsageError

probes_app = typer.Typer(name="probes", help="The tool probes: serve them, read their call log, list the catalogue.",
                         no_args_is_help=True)
EXAMPLE_MAP = Path(__file__).resolve().parents[2] / "probes" / "mappings" / "example.yaml"
FEEDBACK_HELP = "Feedback on invalid calls: plain (bare error) or actionable (says how to fix it)."


def _feedback(value: str) -> str:
    if value not in ("plain", "actionable"):
        raise UsageError(f"--feedback must be plain or actionable, got {value!r}")
    return value


def _loopback_only(host: str) -> None:
    from probegate.cli.serve import _is_loopback

    if not _is_loopback(host):
        raise UsageError(f"refusing to bind {host}: probes bind loopback only (use probegate serve for remote access)")


@probes_app.command("serve")
def serve(
    store: str | None = StoreOption,
    host: str = typer.Option("127.0.0.1", "--host", help="Bind address (loopback)."),
    port: int = typer.Option(8701, "--port", help="Bind port (1-65535).", **PORT),
    feedback: str = typer.Option("actionable", "--feedback", help=FEEDBACK_HELP, parser=choice("plain", "actionable")),
    log_level: str = typer.Option("warning", "--log-level", help="uvicorn log level.", parser=choice(*LOG_LEVELS)),
) -> None:
    """Serve the probes alone: POST /r/RUN/TASK/ATTEMPT/tools/TOOL (ATTEMPT optional), GET .../tools."""
    import uvicorn

    from probegate.store.engine import check_store_url, open_store
    from probegate.probes.app import create_probe_app

    _loopback_only(host)
    check_store_url(store)
    can_listen(host, port)
    app = create_probe_app(open_store(store), feedback=_feedback(feedback))  # type: ignore[arg-type]
    typer.echo(f"probegate probes on http://{host}:{port} (feedback: {feedback})", err=True)
    uvicorn.run(app, host=host, port=port, log_level=log_level)


def _short(value: Any, width: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= width else text[: width - 1] + "…"


def _result_summary(row: Any) -> str:
    result = row.result if isinstance(row.result, dict) else {}
    if row.status == "blocked":
        parts = [f"missing {row.missing}" if row.missing else "", f"invalid {list((row.invalid or {}))}" if row.invalid else ""]
        return " ".join(p for p in parts if p)
    if "error" in result:
        return f"{result['error']}: {result.get('message', '')}"
    return _short(result)


@probes_app.command("log")
def log_command(
    run: str = typer.Argument(..., help="Run id."),
    task: str | None = typer.Argument(None, help="Only this task."),
    attempt: int | None = typer.Option(None, "--attempt", help="Only this attempt.", min=0),
    as_json: bool = JsonOption,
    store: str | None = StoreOption,
) -> None:
    """Print the probe call log of a run (every call, blocked ones included, with the door
    it came through: rest, mcp, mitm), and the tool calls recorded by the MCP proxy
    (door mcp-proxy)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from probegate.store.engine import open_existing_store
    from probegate.probes.store import read_probe_calls
    from probegate.scorer import mcp_proxy_calls

    engine = open_existing_store(store)
    try:
        rows = read_probe_calls(engine, run, task, attempt) + mcp_proxy_calls(engine, run, task, attempt)
        rows.sort(key=lambda r: (r.task_id, r.attempt, r.door == "mcp-proxy", r.seq))
    finally:
        engine.dispose()
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in rows], indent=2, ensure_ascii=False))
        return
    if not rows:
        typer.echo(f"no probe calls recorded for run {run!r}" + (f" task {task!r}" if task else ""), err=True)
        return
    table = Table(title=f"probe calls of {run}")
    for name in ("task", "att", "seq", "tool", "status", "args", "result", "ms", "door"):
        table.add_column(name, overflow="fold", no_wrap=name not in ("args", "result"))
    colour = {"ok": "green", "blocked": "yellow", "error": "red"}
    for r in rows:
        cells = [r.task_id, str(r.attempt), str(r.seq), r.tool, r.status,
                 _short(r.args if r.args is not None else r.raw_args or ""), _result_summary(r),
                 f"{r.latency_ms or 0:.1f}", r.door]
        table.add_row(*(Text(c, style=colour[r.status] if c is r.status else "") for c in cells))
    Console().print(table)


@probes_app.command("list")
def list_command(as_json: bool = JsonOption) -> None:
    """The tool catalogue: name, domain, side effect, what it returns."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from probegate.probes.catalog import CATALOG

    if as_json:
        typer.echo(json.dumps([{"name": t.name, "domain": t.domain, "side_effect": t.side_effect,
                                "returns": t.returns, **t.openai()["function"]} for t in CATALOG.values()], indent=2))
        return
    table = Table(title=f"{len(CATALOG)} probe tools")
    for name in ("tool", "domain", "side effect", "parameters", "returns"):
        table.add_column(name, overflow="fold")
    for t in CATALOG.values():
        required = set(t.parameters.get("required", []))
        params = ", ".join(p if p in required else f"{p}?" for p in t.parameters["properties"])
        table.add_row(*(Text(c) for c in (t.name, t.domain, t.side_effect or "-", params, t.returns)))
    Console().print(table)


def intercept(
    port: int = typer.Option(8080, "--port", help="Proxy port (1-65535).", **PORT),
    host: str = typer.Option("127.0.0.1", "--host", help="Proxy bind address (loopback)."),
    map_file: Path = typer.Option(EXAMPLE_MAP, "--map", help="Mapping file: host + path -> probe tool.",
                                  exists=True, dir_okay=False),
    probes: str = typer.Option("in-process", "--probes", help="'in-process' or the URL of a probe server."),
    store: str | None = StoreOption,
    confdir: str = typer.Option("~/.mitmproxy", "--confdir", help="mitmproxy confdir (holds mitmproxy-ca-cert.pem)."),
    allow: list[str] = typer.Option(["127.0.0.1", "localhost", "::1"], "--allow",
                                    help="Host passed through unchanged (repeat; default: loopback)."),
    feedback: str = typer.Option("actionable", "--feedback", help=FEEDBACK_HELP + " (in-process only)",
                                 parser=choice("plain", "actionable")),
) -> None:
    """Black-box mode: an HTTP(S) proxy answering mapped API hosts from the probes.

    Point the agent at http://RUN:TASK@HOST:PORT (HTTPS_PROXY / HTTP_PROXY) and make it
    trust CONFDIR/mitmproxy-ca-cert.pem. Unmapped hosts get a 403; nothing leaves the machine.
    """
    from probegate.probes.intercept import InterceptProxy, load_mapping
    from probegate.probes.intercept.mapping import MappingError
    from probegate.cli.signals import sigterm_as_interrupt
    from probegate.probes.catalog import tool_names
    from probegate.store.engine import check_store_url

    _loopback_only(host)
    try:
        load_mapping(map_file, tool_names())
    except MappingError as exc:
        raise UsageError(str(exc)) from exc
    if probes != "in-process" and not probes.startswith(("http://", "https://")):
        raise UsageError(f"--probes must be 'in-process' or an http(s) URL, got {probes!r}")
    if probes == "in-process":
        check_store_url(store)
    writable_dir(Path(confdir).expanduser(), "--confdir")
    can_listen(host, port)
    backend, close = _backend(probes, store, feedback)
    try:
        proxy = InterceptProxy(map_file, backend, host=host, port=port, confdir=confdir, allow=tuple(allow)).start()
        typer.echo(f"probegate intercept on {proxy.url} (map: {map_file}; CA: {proxy.ca_path})", err=True)
        with sigterm_as_interrupt():  # docker stop / kill: flush the probe log as on Ctrl-C
            proxy.wait()
        proxy.stop()
    finally:
        close()


def _backend(probes: str, store: str | None, feedback: str) -> tuple[Any, Any]:
    """The intercept's probe backend and a function releasing what it opened.

    Raises:
        UsageError: ``--probes`` is neither ``in-process`` nor a URL, or a bad feedback style.
    """
    from probegate.probes.intercept import HttpBackend, InProcessBackend

    if probes.startswith(("http://", "https://")):
        return HttpBackend(probes), lambda: None
    if probes != "in-process":
        raise UsageError(f"--probes must be 'in-process' or an http(s) URL, got {probes!r}")
    from probegate.store.engine import open_store
    from probegate.store.writer import CaptureWriter
    from probegate.probes.service import ProbeService

    style = _feedback(feedback)
    engine = open_store(store)
    writer = CaptureWriter(engine).start()

    def close() -> None:
        writer.close()
        engine.dispose()

    return InProcessBackend(ProbeService(writer, default_feedback=style)), close  # type: ignore[arg-type]


def register(app: typer.Typer) -> None:
    """Add ``probes`` (serve, log, list) and ``intercept`` to the CLI."""
    app.add_typer(probes_app, name="probes")
    app.command("intercept")(intercept)
