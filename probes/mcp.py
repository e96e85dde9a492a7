"""The probes' MCP door: every attempt's tools as an MCP server (streamable HTTP).

``/r/{run}/{task}[/{attempt}]/mcp`` (and a bare ``/mcp``, attributed like a bare
``/v1``) answers MCP with the official SDK: a low-level
:class:`mcp.server.lowlevel.Server` behind a stateless
:class:`mcp.server.streamable_http_manager.StreamableHTTPSessionManager`, so any
request can reach any attempt with no session to keep. The attempt comes from the
request's path (:func:`probegate.urls.parse_path`), read in the handler from the
SDK's request context.

``tools/list`` answers the attempt's offered tools with their JSON Schemas;
``tools/call`` goes through :meth:`ProbeService.call` exactly as the REST door does
(same validation, world state, feedback style and call log, logged with door
``mcp``). The SDK's own input validation is off: a blocked call must be the probe's
verdict, so it is a tool result with ``isError: true`` whose text is the REST door's
JSON body (the same hint). Unknown tools and tool errors are ``isError`` results too,
so the model can read them, as it reads the REST door's 404 and 400 bodies.
The gateway records these exchanges like model exchanges; this module only serves.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
from fastapi import FastAPI
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from sqlalchemy.engine import Engine
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from probegate.probes.service import ProbeOutcome, ProbeService
from probegate.store.writer import CaptureWriter
from probegate.urls import ADHOC_RUN, ADHOC_TASK, Target, parse_path

#: The MCP routes, one per attribution prefix (as the REST door's).
PATHS = ("/r/{run}/{task}/mcp", "/r/{run}/{task}/{attempt:int}/mcp", "/mcp")
SERVER_NAME = "probegate-probes"


def mcp_tool(openai_tool: dict[str, Any]) -> types.Tool:
    """An OpenAI tool object (``{"type": "function", "function": {...}}``) as an MCP tool."""
    fn = openai_tool["function"]
    schema = fn.get("parameters") or {"type": "object", "properties": {}}
    return types.Tool(name=fn["name"], description=fn.get("description"), inputSchema=schema)


def tool_result(status_code: int, body: Any) -> types.CallToolResult:
    """A probe's answer as an MCP tool result.

    Args:
        status_code: the REST door's status (200 ran; 422 blocked; 400 tool error;
            404 unknown tool; 500 a bug in a tool).
        body: the REST door's JSON body.

    Returns:
        The body as compact JSON text (what the REST door's clients show the model)
        and as ``structuredContent`` when it is an object; ``isError`` unless 200.
    """
    text = json.dumps(body, ensure_ascii=False, separators=(", ", ": "))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structuredContent=body if isinstance(body, dict) else None,
        isError=status_code != 200,
    )


def request_target(request: Request | None) -> Target:
    """The attempt an MCP request belongs to, from its path (and attribution headers).

    Raises:
        LookupError: no HTTP request behind the message, or not an MCP route.
    """
    if request is None:
        raise LookupError("no HTTP request behind this MCP message")
    run = request.headers.get("x-probegate-run") or ADHOC_RUN
    task = request.headers.get("x-probegate-task") or ADHOC_TASK
    target = parse_path(request.url.path, run=run, task=task)
    if target is None or target.kind != "mcp":
        raise LookupError(f"{request.url.path} is not an MCP route of the probes")
    return target


def mcp_server(service: ProbeService) -> Server[Any, Request]:
    """The low-level MCP server answering ``tools/list`` and ``tools/call`` from ``service``."""
    server: Server[Any, Request] = Server(SERVER_NAME)

    def target() -> Target:
        return request_target(server.request_context.request)

    @server.list_tools()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        where = target()
        return [mcp_tool(t) for t in service.tools_for(where.run, where.task, where.attempt)]

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        where = target()
        raw = json.dumps(arguments, ensure_ascii=False).encode("utf-8")
        args = (where.run, where.task, where.attempt, name, raw, "mcp")
        outcome: ProbeOutcome
        if service.is_blocking(name):  # delegate: its sub-agent calls back into this server
            outcome = await anyio.to_thread.run_sync(service.call, *args)
        else:
            outcome = service.call(*args)
        return tool_result(outcome.status_code, outcome.body)

    return server


class _Endpoint:
    """The ASGI endpoint of the MCP routes (a class, so Starlette passes it raw ASGI).

    ``GET`` (a stream for server-initiated messages) is answered 405, as the
    streamable HTTP transport allows: the probes never start a message of their own,
    and a stateless stream nobody writes to would only hold the attempt open.
    """

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "GET":
            response = JSONResponse({"error": "method_not_allowed", "message": "POST JSON-RPC messages to this URL"},
                                    status_code=405, headers={"allow": "POST"})
            await response(scope, receive, send)
            return
        await self.manager.handle_request(scope, receive, send)


def add_routes(api: FastAPI, writer: CaptureWriter, engine: Engine) -> None:
    """Mount the MCP door on ``api`` and run its session manager in ``api``'s lifespan.

    Uses ``api.state.probes`` when set (the REST door's service: one world per
    attempt whatever the door), else makes one writing through ``writer`` and stores it.
    """
    del engine  # the MCP door reads no stored state
    service: ProbeService = getattr(api.state, "probes", None) or ProbeService(writer)
    api.state.probes = service
    manager = StreamableHTTPSessionManager(mcp_server(service), stateless=True)
    endpoint = _Endpoint(manager)
    for path in PATHS:
        api.router.routes.append(Route(path, endpoint=endpoint, include_in_schema=False))
    outer = api.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        async with outer(app) as state, manager.run():
            yield state

    api.router.lifespan_context = lifespan
