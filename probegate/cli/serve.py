"""``probegate serve``: run the recording gateway (and the probes) under uvicorn."""

from __future__ import annotations

import gc
import ipaddress
import sys

import typer

from pathlib import Path

from probegate.cli.options import LOG_LEVELS, PORT, StoreOption, can_listen, choice, http_url, number, writable_dir
from probegate.errors import StoreError, UsageError


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, allow_remote: bool, token: str | None) -> None:
    """Refuse a non-loopback bind without ``--allow-remote`` and ``--token``.

    Raises:
        UsageError: the bind would expose the gateway without protection.
    """
    if _is_loopback(host):
        return
    if not allow_remote:
        raise UsageError(f"refusing to bind {host}: it is not loopback; add --allow-remote and --token")
    if not token:
        raise UsageError("--allow-remote needs --token: every route then requires that bearer token")


def serve(
    upstream: str | None = typer.Option(None, "--upstream", help="Base URL of the model server, e.g. http://127.0.0.1:11434 (optional with --replay).", parser=http_url),
    store: str | None = StoreOption,
    host: str = typer.Option("127.0.0.1", "--host", help="Bind address (loopback unless --allow-remote)."),
    port: int = typer.Option(8700, "--port", help="Bind port (1-65535).", **PORT),
    max_body: str = typer.Option("32MiB", "--max-body", help="Largest request body accepted (413 above)."),
    upstream_timeout: float = typer.Option(600.0, "--upstream-timeout", help="Seconds to wait for upstream bytes (504 after).", parser=number(above=0, what="seconds")),
    payload_cap: str | None = typer.Option(None, "--payload-cap", help="Store at most this much of each response body (flagged when cut)."),
    transport: str = typer.Option("aiohttp", "--transport", help="Upstream transport: aiohttp or httpx.", parser=choice("aiohttp", "httpx")),
    allow_remote: bool = typer.Option(False, "--allow-remote", help="Allow binding a non-loopback address."),
    token: str | None = typer.Option(None, "--token", envvar="PROBEGATE_TOKEN", help="Require Authorization: Bearer TOKEN on every route."),
    compat: list[str] = typer.Option([], "--compat", help="Opt-in request shims, e.g. null-content,args-as-string,drop-params=NAME,max-tokens-alias,default-max-tokens=1024, responses-via-chat (rules: gateway/compat/, README Interop). Every rewrite is recorded."),
    redact: list[str] = typer.Option([], "--redact", help="A regex scrubbed from stored bodies (repeatable). API keys and bearer tokens always are."),
    redact_pii: bool = typer.Option(False, "--redact-pii", help="Also scrub e-mail addresses from stored bodies."),
    replay: str | None = typer.Option(None, "--replay", help="Answer model requests from the captures of this run."),
    replay_mode: str = typer.Option("none", "--replay-mode", help="none: unrecorded requests get an error; new_episodes: they go upstream; all: re-record everything.", parser=choice("none", "new_episodes", "all")),
    replay_timing: str = typer.Option("fast", "--replay-timing", help="recorded: keep the recorded pacing of streams; fast: send at once.", parser=choice("recorded", "fast")),
    replay_ignore_model: bool = typer.Option(False, "--replay-ignore-model", help="Match recorded requests whatever model name they ask for."),
    replay_store: str | None = typer.Option(None, "--replay-store", help="Store holding the replayed run (default: --store)."),
    spool: Path | None = typer.Option(None, "--spool", help="Directory of the capture spool: every answered exchange is journaled there before its last byte leaves, and replayed at the next start after a crash. Default: beside an SQLite store file (FILE-spool), else $XDG_STATE_HOME/probegate/spool/HASH."),
    no_spool: bool = typer.Option(False, "--no-spool", help="Keep captures only in memory until committed: a SIGKILL then loses what is queued (for measuring what the spool costs)."),
    log_level: str = typer.Option("warning", "--log-level", help="uvicorn log level.", parser=choice(*LOG_LEVELS)),
    mcp_upstream: list[str] = typer.Option([], "--mcp-upstream", help="NAME=URL: forward /r/RUN/TASK[/ATTEMPT]/mcp/NAME to your own MCP server (streamable HTTP) and record every message (repeatable)."),
) -> None:
    """Forward /v1/... and /api/... to UPSTREAM and record every exchange.

    Attribute traffic with /r/RUN/TASK[/ATTEMPT]/v1 as the agent's base_url
    (/r/RUN/TASK/v1 or /r/RUN/TASK/ATTEMPT/v1); a bare /v1 is recorded under run 'adhoc'. Probes answer at
    /r/RUN/TASK/ATTEMPT/tools (REST) and /r/RUN/TASK/ATTEMPT/mcp (MCP); --mcp-upstream
    NAME=URL puts your own MCP server at /r/RUN/TASK/ATTEMPT/mcp/NAME, recorded.
    """
    import uvicorn

    from probegate.gateway.app import GatewayConfig
    from probegate.gateway.mcp_upstreams import parse_mcp_upstreams
    from probegate.cli.sizes import parse_size
    from probegate.runner.compose import build_app
    from probegate.store.engine import check_store_url, open_existing_store
    from probegate.store.spool import default_spool_dir

    check_bind(host, allow_remote, token)
    mcp_upstreams = parse_mcp_upstreams(mcp_upstream)
    if upstream is None and replay is None:
        raise UsageError("--upstream URL is required (or --replay RUN to answer from a recorded run)")
    if upstream is not None and not upstream.startswith(("http://", "https://")):
        raise UsageError(f"--upstream must be an http(s) URL, got {upstream!r}")
    if replay_mode not in ("none", "new_episodes", "all"):
        raise UsageError(f"--replay-mode must be none, new_episodes or all, got {replay_mode!r}")
    if replay_timing not in ("recorded", "fast"):
        raise UsageError(f"--replay-timing must be recorded or fast, got {replay_timing!r}")
    if transport not in ("aiohttp", "httpx"):
        raise UsageError(f"--transport must be aiohttp or httpx, got {transport!r}")
    from probegate.gateway.replay import ReplaySettings

    from probegate.gateway.compat import parse_rules
    from probegate.redact import make_redactor

    parse_rules(list(compat))  # bad shims and regexes are refused before the store is opened
    make_redactor(list(redact), pii=redact_pii)
    max_body_bytes = parse_size(max_body)
    payload_cap_bytes = parse_size(payload_cap) if payload_cap else None
    store_url = check_store_url(store)
    if replay is not None:  # the replayed run must exist before a store is made for this one
        try:
            open_existing_store(replay_store or store).dispose()
        except StoreError as exc:
            raise StoreError(f"--replay {replay}: {exc}") from None
    if spool is not None and no_spool:
        raise UsageError("give --spool DIR or --no-spool, not both")
    spool_dir = None if no_spool else spool or default_spool_dir(store_url)
    if spool_dir is not None:
        writable_dir(spool_dir, "--spool")

    settings = (
        ReplaySettings(replay, replay_mode, replay_timing, replay_ignore_model)  # type: ignore[arg-type]
        if replay
        else None
    )
    config = GatewayConfig(
        upstream=upstream or "",
        replay=settings,
        replay_store=replay_store,
        store=store,
        max_body=max_body_bytes,
        upstream_timeout=upstream_timeout,
        payload_cap=payload_cap_bytes,
        transport=transport,  # type: ignore[arg-type]
        token=token,
        compat=list(compat),
        redact=list(redact),
        redact_pii=redact_pii,
        spool=str(spool_dir) if spool_dir is not None else None,
        mcp_upstreams=mcp_upstreams,
    )
    can_listen(host, port)
    app = build_app(config)
    # The capture writer is a thread: let the event loop take the GIL back within
    # 1 ms instead of the default 5 ms, which otherwise shows up as tail latency.
    sys.setswitchinterval(0.001)
    target = upstream or f"replay of {replay}"
    if replay and upstream:
        target = f"replay of {replay} ({replay_mode}), else {upstream}"
    typer.echo(f"probegate gateway on http://{host}:{port} -> {target} (store: {store_url})", err=True)
    for name, url in mcp_upstreams.items():
        typer.echo(f"  MCP server {name}: /r/RUN/TASK/mcp/{name} -> {url}", err=True)
    # Move everything imported so far (FastAPI, SQLAlchemy, pydantic: ~150,000 objects) out of
    # the collector's reach: full collections while the writer drains a burst then walk only
    # the captures, and the longest stream gap after a burst falls from ~90 to ~24 ms
    # (docs/benchmarks.md, "what the profiles show").
    gc.freeze()
    uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=30)


def register(app: typer.Typer) -> None:
    """Add ``serve`` to the CLI."""
    app.command("serve")(serve)
