"""``probegate captures list|show``: look at what the gateway recorded."""

from __future__ import annotations

import json
from typing import Any

import typer

from probegate.cli.options import JsonOption, StoreOption
from probegate.errors import UsageError

captures = typer.Typer(help="Look at recorded exchanges.", no_args_is_help=True)


def _summary(row: Any) -> dict[str, Any]:
    assistant = ((row.completion or {}).get("assistant") or {})
    calls = [c.get("name") for c in assistant.get("tool_calls") or []]
    return {
        "id": row.id,
        "run": row.run_id,
        "task": row.task_id,
        "attempt": row.attempt,
        "seq": row.seq,
        "started_at": row.started_at.isoformat() if row.started_at else None,
        "method": row.method,
        "path": row.path,
        "status": row.status_code,
        "stream": row.stream,
        "latency_ms": round(row.latency_ms, 2) if row.latency_ms is not None else None,
        "tool_calls": calls,
        "flags": row.flags or [],
        "error": row.error,
    }


@captures.command("list")
def list_captures(
    run: str | None = typer.Option(None, "--run", help="Only this run."),
    task: str | None = typer.Option(None, "--task", help="Only this task."),
    limit: int = typer.Option(50, "--limit", min=1, help="Most rows shown (newest first)."),
    as_json: bool = JsonOption,
    store: str | None = StoreOption,
) -> None:
    """List exchanges, newest first."""
    from rich.console import Console
    from rich.table import Table
    from sqlmodel import Session, select

    from probegate.store import Exchange, open_existing_store

    engine = open_existing_store(store)
    with Session(engine) as session:
        query = select(Exchange)
        if run:
            query = query.where(Exchange.run_id == run)
        if task:
            query = query.where(Exchange.task_id == task)
        rows = session.exec(query.order_by(Exchange.started_at.desc(), Exchange.seq.desc()).limit(limit)).all()
        items = [_summary(r) for r in rows]
    if as_json:
        typer.echo(json.dumps(items, indent=2))
        return
    table = Table(title=f"{len(items)} exchange(s)")
    table.add_column("id", no_wrap=True)
    for col in ("run/task/attempt#seq", "route", "status", "ms", "tool calls", "flags / error"):
        table.add_column(col, overflow="fold")
    for it in items:
        note = ", ".join(it["flags"]) + (f" {it['error']}" if it["error"] else "")
        where = f"{it['run']}/{it['task']}/{it['attempt']}#{it['seq']}"
        route = f"{it['method']} {it['path']}" + (" (stream)" if it["stream"] else "")
        table.add_row(it["id"], where, route, str(it["status"]), str(it["latency_ms"]),
                      ", ".join(n or "?" for n in it["tool_calls"]), note.strip())
    Console().print(table)


@captures.command("show")
def show_capture(
    exchange_id: str = typer.Argument(..., help="Exchange id (from x-probegate-exchange-id or `captures list`)."),
    as_json: bool = JsonOption,
    store: str | None = StoreOption,
) -> None:
    """Show one exchange: request, reassembled turn, flags, timings."""
    from rich.console import Console
    from rich.json import JSON
    from rich.panel import Panel
    from sqlmodel import Session

    from probegate.store import Exchange, open_existing_store

    engine = open_existing_store(store)
    with Session(engine) as session:
        row = session.get(Exchange, exchange_id)
        if row is None:
            raise UsageError(f"no exchange {exchange_id!r} in the store")
        data = row.model_dump(exclude={"response_raw", "request_raw"})
        data["response_bytes"] = len(row.response_raw or b"")
    for key in ("started_at", "ended_at"):
        data[key] = data[key].isoformat() if data[key] else None
    if as_json:
        typer.echo(json.dumps(data, indent=2, default=str))
        return
    console = Console()
    console.print(Panel(JSON.from_data(_summary(row)), title="exchange"))
    console.print(Panel(JSON.from_data(data.get("request_body")), title="request"))
    console.print(Panel(JSON.from_data(data.get("completion")), title="reassembled turn"))


def register(app: typer.Typer) -> None:
    """Add ``captures`` to the CLI."""
    app.add_typer(captures, name="captures")
