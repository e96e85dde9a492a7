"""The gateway ASGI application: a thin dispatcher in front of FastAPI.

Model routes (``/v1/...``, ``/api/...``, and both under ``/r/{run}/{task}[/{attempt}]``)
go straight to the raw-ASGI :class:`~probegate.gateway.forward.Forwarder`, so the hot path
pays for no routing or middleware; so do ``.../mcp/{name}`` routes, forwarded to the
agent's own MCP servers (``--mcp-upstream NAME=URL``). ``.../mcp`` routes are answered
by whatever the FastAPI app mounts there (the probes' MCP door) and recorded on the
way (:class:`~probegate.gateway.local.LocalRecorder`). Everything else (health, probes,
captures) is a FastAPI app whose lifespan owns the capture writer and the upstream client.
"""

from __future__ import annotations

import contextlib
import hmac
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.engine import Engine

from probegate.urls import ADHOC_RUN, ADHOC_TASK, Target, parse_path
from probegate.gateway.compat import apply_rules, parse_rules
from probegate.gateway.forward import ForwardConfig, Forwarder, Receive, Scope, Send, openai_error
from probegate.gateway.headers import header
from probegate.gateway.local import LocalRecorder
from probegate.redact import make_redactor
from probegate.gateway.replay import ReplaySettings, ReplayTransport, load_index
from probegate.gateway.upstream import Transport, make_transport
from probegate.errors import UsageError
from probegate.store.engine import open_existing_store, open_store
from probegate.store.writer import CaptureWriter


@dataclass
class GatewayConfig:
    """Everything ``probegate serve`` configures.

    Attributes:
        upstream: base URL of the model server (``http://127.0.0.1:11434``).
        store: store URL (``sqlite:///probegate.db`` or ``postgresql+psycopg://...``).
        max_body: largest request body (bytes).
        upstream_timeout: longest wait for upstream bytes (s).
        payload_cap: largest stored response body per exchange (bytes), ``None`` = all.
        transport: upstream transport, ``aiohttp`` or ``httpx``.
        token: when set, every route needs ``Authorization: Bearer <token>``.
        queue_size: capture queue bound (items).
        compat: opt-in request shims (``probegate.gateway.compat`` rule specs), off by default.
        redact: extra regexes scrubbed from every stored row (API keys, bearer tokens
            and credential headers always are); set on the writer, so probe calls and
            world states get them too.
        redact_pii: also scrub e-mail addresses from every stored row.
        replay: answer from a recorded run (``--replay``) instead of, or before, the
            upstream.
        replay_store: the store holding the replayed run (default: ``store``).
        spool: the capture spool directory (:mod:`probegate.store.spool`); ``None``
            keeps captures in memory until committed (a SIGKILL loses the queue).
        mcp_upstreams: the agent's own MCP servers by name (``--mcp-upstream
            NAME=URL``); ``/r/{run}/{task}[/{attempt}]/mcp/{name}`` is forwarded
            to the URL and recorded.
    """

    upstream: str
    store: str | None = None
    max_body: int = 32 * 1024 * 1024
    upstream_timeout: float = 600.0
    payload_cap: int | None = None
    transport: Transport = "aiohttp"
    token: str | None = None
    queue_size: int = 10_000
    compat: list[str] = field(default_factory=list)
    redact: list[str] = field(default_factory=list)
    redact_pii: bool = False
    replay: ReplaySettings | None = None
    replay_store: str | None = None
    spool: str | None = None
    mcp_upstreams: dict[str, str] = field(default_factory=dict)


class GatewayApp:
    """The ASGI callable uvicorn serves."""

    def __init__(self, forwarder: Forwarder, api: FastAPI, token: str | None = None) -> None:
        self.forwarder = forwarder
        self.api = api
        self.token = token
        self.local = LocalRecorder(forwarder)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            if self.token is not None and not self._authorized(scope):
                await _deny(send)
                return
            path: str = scope["path"]
            if path.startswith(("/v1", "/api/", "/r/", "/mcp")):
                target = self._target(scope, path)
                if target is not None and target.kind in ("model", "mcp_proxy"):
                    await self.forwarder(scope, receive, send, target)
                    return
                if target is not None and target.kind == "mcp":
                    await self.local(scope, receive, send, target, self.api)
                    return
        await self.api(scope, receive, send)

    def _target(self, scope: Scope, path: str) -> Target | None:
        headers = scope.get("headers", [])
        run = header(headers, b"x-probegate-run") or ADHOC_RUN
        task = header(headers, b"x-probegate-task") or ADHOC_TASK
        return parse_path(path, run=run, task=task)

    def _authorized(self, scope: Scope) -> bool:
        value = header(scope.get("headers", []), b"authorization") or ""
        scheme, _, given = value.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip(), self.token or "")


async def _deny(send: Send) -> None:
    body = openai_error(401, "unauthorized", "this gateway needs Authorization: Bearer <token> (--token)")
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _transport(config: GatewayConfig, engine: Engine) -> httpx.AsyncBaseTransport:
    upstream = make_transport(config.transport) if config.upstream else None
    if config.replay is None:
        if upstream is None:
            raise UsageError("--upstream is required (or --replay RUN to answer from a recorded run)")
        return upstream
    source = open_existing_store(config.replay_store) if config.replay_store else engine
    return ReplayTransport(load_index(source, config.replay), config.replay, upstream)


def create_gateway(
    config: GatewayConfig,
    *,
    engine: Engine | None = None,
    writer: CaptureWriter | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    routers: list[Callable[[FastAPI, CaptureWriter, Engine], None]] | None = None,
) -> GatewayApp:
    """Build the gateway.

    Args:
        config: the gateway settings.
        engine: an open store; opened from ``config.store`` when ``None``.
        writer: a capture writer; one is made (and started/stopped with the app).
        transport: the upstream transport (the seam for tests and faster transports).
        routers: callables that add routes (probes, captures) to the FastAPI app.

    Raises:
        StoreError: the store cannot be opened.
    """
    engine = engine or open_store(config.store)
    own_writer = writer is None
    writer = writer or CaptureWriter(engine, maxsize=config.queue_size, spool=config.spool)
    # one redaction list for every row this gateway stores: exchanges, probe calls, worlds
    writer.redactor = make_redactor(config.redact, pii=config.redact_pii)
    transport = transport or _transport(config, engine)
    rules = parse_rules(config.compat)
    forwarder = Forwarder(
        ForwardConfig(
            upstream=config.upstream or "http://replay.invalid",
            max_body=config.max_body,
            timeout_s=config.upstream_timeout,
            payload_cap=config.payload_cap,
            mcp_upstreams=dict(config.mcp_upstreams),
            mcp_any_name=config.replay is not None,
        ),
        transport,
        writer,
        rewrite=(lambda _target, body, _headers: apply_rules(rules, body)) if rules else None,
        responses_via_chat="responses-via-chat" in rules,
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        writer.start()
        try:
            yield
        finally:
            await transport.aclose()
            if own_writer:
                writer.close()
            else:
                writer.flush()

    api = FastAPI(title="probegate gateway", lifespan=lifespan, docs_url=None, redoc_url=None)
    api.state.writer = writer
    api.state.engine = engine
    api.state.config = config

    @api.get("/probegate/health")
    def health() -> dict[str, Any]:
        """Queue depth (items), rows written, writer errors and spilled rows."""
        stats = writer.stats
        return {
            "status": "ok" if stats.spilled == 0 and stats.spool_errors == 0 else "degraded",
            "upstream": config.upstream or None,
            "replay": config.replay.run if config.replay else None,
            "queue_depth": writer.depth,
            "pending": forwarder.inflight + writer.pending,
            "rows_written": stats.written,
            "writer_errors": stats.errors,
            "spilled": stats.spilled,
            "spool": str(writer.spool.directory) if writer.spool else None,
            "replayed": stats.replayed,
            "spool_errors": stats.spool_errors,
            "last_error": stats.last_error,
            "compat": list(rules.names),
        }

    for add_routes in routers or []:
        add_routes(api, writer, engine)
    return GatewayApp(forwarder, api, token=config.token)
