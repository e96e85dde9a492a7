"""The upstream HTTP client: the httpx API over a transport chosen by measurement.

``aiohttp`` (via ``httpx-aiohttp``) is the default: on this class of machine it added
about 1.1 ms per request at ~870 req/s, against 2.5-3.7 ms and falling throughput for
httpx's own transport (see docs/benchmarks.md). Either transport forwards the body
bytes raw: no decompression and no headers of its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Literal
from urllib.parse import quote

import httpx

from probegate.errors import UsageError

Transport = Literal["aiohttp", "httpx"]


class UpstreamFailure(Exception):
    """An upstream request failed; ``status`` is what the client gets (502 or 504)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def make_transport(
    transport: Transport = "aiohttp", *, max_connections: int = 1000
) -> httpx.AsyncBaseTransport:
    """An httpx transport for forwarding.

    The forwarder calls the transport directly (``handle_async_request``): a proxy
    needs none of the client layer's cookies, auth flows, redirects or default
    headers, and skipping it is measurably cheaper on the hot path.

    Raises:
        UsageError: an unknown transport name.
    """
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
    if transport == "httpx":
        return httpx.AsyncHTTPTransport(limits=limits, retries=0)
    if transport == "aiohttp":
        import aiohttp
        from httpx_aiohttp import AiohttpTransport

        def session() -> aiohttp.ClientSession:
            connector = aiohttp.TCPConnector(limit=max_connections, force_close=False)
            # no headers of aiohttp's own: the upstream must see what the agent sent
            skip = ("User-Agent", "Accept", "Accept-Encoding", "Content-Type")
            return aiohttp.ClientSession(connector=connector, skip_auto_headers=skip)

        return AiohttpTransport(client=session, limits=limits)
    raise UsageError(f"unknown upstream transport {transport!r}; use aiohttp or httpx")


def upstream_url(base: str, path: str, query: str) -> str:
    """Join the upstream base URL and a request path without doubling ``/v1``.

    ``http://h:8080`` + ``/v1/models`` -> ``http://h:8080/v1/models``;
    ``http://h:8080/v1`` + ``/v1/models`` -> ``http://h:8080/v1/models``. Ollama's native
    routes live next to ``/v1``, not under it: ``http://h:11434/v1`` + ``/api/chat`` ->
    ``http://h:11434/api/chat``.

    ``path`` is the decoded path (ASGI ``scope["path"]``); characters that cannot
    stand in a path as they are (``%``, space, non-ASCII) are percent-encoded again,
    so an encoded character never turns into syntax on the way upstream.
    """
    base = base.rstrip("/")
    if base.endswith("/v1") and (path == "/v1" or path.startswith("/v1/")):
        path = path[3:]
    elif base.endswith("/v1") and path.startswith("/api/"):
        base = base[: -len("/v1")]
    path = quote(path, safe="/:@!$&'()*+,;=~")
    return f"{base}{path}" + (f"?{query}" if query else "")


def _is_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is a timeout.

    httpx-aiohttp maps every ``aiohttp.ClientConnectionError`` to ``ConnectTimeout``,
    a refused connection included, so the original exception decides.
    """
    import asyncio

    cause = exc.__cause__
    if cause is not None:
        try:
            import aiohttp

            if isinstance(cause, aiohttp.ServerTimeoutError):
                return True
            if isinstance(cause, aiohttp.ClientError):
                return False
        except ImportError:  # pragma: no cover - aiohttp is a dependency
            pass
        if isinstance(cause, (TimeoutError, asyncio.TimeoutError)):
            return True
    return isinstance(exc, (httpx.TimeoutException, TimeoutError))


def classify(exc: BaseException, timeout_s: float) -> UpstreamFailure:
    """The client-facing failure for an upstream transport error (502 or 504)."""
    if _is_timeout(exc):
        return UpstreamFailure(
            504, "upstream_timeout", f"the upstream did not answer within {timeout_s:g} s"
        )
    detail = str(exc.__cause__ or exc) or type(exc).__name__
    return UpstreamFailure(502, "upstream_unreachable", f"cannot reach the upstream: {detail}")


@contextlib.contextmanager
def mapped_errors(timeout_s: float) -> Iterator[None]:
    """Translate httpx transport errors into :class:`UpstreamFailure` (502/504)."""
    try:
        yield
    except (httpx.TransportError, OSError, TimeoutError) as exc:
        raise classify(exc, timeout_s) from exc
