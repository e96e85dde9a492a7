"""``probegate doctor``: probe a model server and say which shims a run against it needs."""

from __future__ import annotations

import json
from dataclasses import asdict

import typer

from probegate.cli.options import JsonOption, http_url, number
from probegate.errors import UpstreamError, UsageError


def doctor(
    model_endpoint: str | None = typer.Option(
        None, "--model-endpoint", help="Base URL of the model server. Default: the embedded local model.",
        parser=http_url),
    model: str | None = typer.Option(None, "--model", help="Model name (default: the first one /v1/models lists)."),
    timeout: float = typer.Option(120.0, "--timeout", help="Seconds per request.", parser=number(above=0, what="seconds")),
    chat_handler: str | None = typer.Option(
        None, "--chat-handler",
        help="The embedded server's chat handler: probegate-chatml-tools (default) or chatml-function-calling.",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Send a short series of requests and print what the server supports.

    Plain chat, tools (streamed and not, with and without tool_choice), a tool-result
    round trip with content: null, object arguments in the history, whether tool
    results and unescaped content reach the prompt (prompt token counts),
    max_completion_tokens, parallel_tool_calls, a long prompt, and last a tool schema
    with a long maxLength (it can crash llama.cpp servers). Run it first when you
    bring a new server; the last line is the --compat value a run needs.
    """
    from rich.console import Console
    from rich.table import Table

    from probegate.runner.doctor import Doctor, recommended_shims
    from probegate.runner.embedded import check_chat_handler, embedded_server

    if model_endpoint is not None and not model_endpoint.startswith(("http://", "https://")):
        raise UsageError(f"--model-endpoint must be an http(s) URL, got {model_endpoint!r}")
    if chat_handler is not None and model_endpoint is not None:
        raise UsageError("--chat-handler picks the embedded server's prompt format: leave out --model-endpoint")
    options = {"chat_handler": check_chat_handler(chat_handler)} if chat_handler else {}

    def examine(url: str, name: str | None, ready: object = None) -> list:
        doc = Doctor(url, name, timeout, ready=ready)  # type: ignore[arg-type]
        checks = doc.run()
        if checks[0].verdict == "error" and checks[0].evidence.startswith(("ConnectError", "ConnectTimeout")):
            raise UpstreamError(f"cannot reach a model server at {url}: {checks[0].evidence}")
        return [doc.model, checks]

    if model_endpoint is None:
        with embedded_server(**options) as server:
            served, checks = examine(server.url, model or server.model, server.wait_until_ready)
            where = f"embedded {server.model} ({server.url}, chat handler {server.chat_handler})"
    else:
        served, checks = examine(model_endpoint, model)
        where = model_endpoint
    shims = recommended_shims(checks)
    if as_json:
        typer.echo(json.dumps({"server": where, "model": served, "checks": [asdict(c) for c in checks],
                               "recommended_compat": shims}, indent=2))
        return
    table = Table(title=f"probegate doctor: {where}, model {served}")
    for column in ("check", "asks", "verdict", "evidence", "shim"):
        table.add_column(column, overflow="fold")
    colors = {"ok": "green", "problem": "red", "unsupported": "yellow", "error": "red"}
    for c in checks:
        table.add_row(c.name, c.question, f"[{colors[c.verdict]}]{c.verdict}[/]", c.evidence, c.shim or "")
    console = Console()
    console.print(table)
    console.print("recommended: " + (f"--compat {','.join(shims)}" if shims else "no shim needed"))


def register(app: typer.Typer) -> None:
    """Add ``doctor`` to the CLI."""
    app.command("doctor")(doctor)
