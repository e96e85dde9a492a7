"""Relaying a stream while watching for the client going away (the forwarder's and the
``responses-via-chat`` translator's shared wait)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

import httpx

from probegate.gateway.capture import RecordedExchange

T = TypeVar("T")


async def wait_disconnect(receive: Any) -> None:
    """Return when the ASGI client sends ``http.disconnect``."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def pump_until_disconnect(pump: Awaitable[T], receive: Any, response: httpx.Response,
                                rec: RecordedExchange) -> T | None:
    """Run ``pump`` (the relay of ``response``) while watching for the client going away.

    Returns:
        ``pump``'s result; ``None`` when the client left first: then ``pump`` is
        cancelled, the upstream response closed and ``rec.error`` set to
        ``client_disconnected`` (the partial exchange is kept).
    """
    task = asyncio.ensure_future(pump)
    watch = asyncio.ensure_future(wait_disconnect(receive))
    done, _ = await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        watch.cancel()
        return task.result()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    rec.error = "client_disconnected"
    await response.aclose()
    return None
