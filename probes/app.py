"""The probes served alone (``probegate probes serve``): a FastAPI app with the probe routes."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI
from sqlalchemy.engine import Engine

from probegate.store.writer import CaptureWriter
from probegate.probes.http import add_routes
from probegate.probes.mcp import add_routes as add_mcp_routes
from probegate.probes.service import ProbeService
from probegate.probes.tool import Feedback, SubAgentRunner


def create_probe_app(
    engine: Engine,
    writer: CaptureWriter | None = None,
    *,
    feedback: Feedback = "actionable",
    subagent: SubAgentRunner | None = None,
) -> FastAPI:
    """A FastAPI app serving only the probes (the same REST and MCP routes the gateway
    mounts; MCP exchanges are not recorded here, as no gateway sees them).

    Args:
        engine: the capture store.
        writer: a capture writer; one is made (and started/stopped with the app) when ``None``.
        feedback: feedback style of attempts nobody reset.
        subagent: the runner behind the ``delegate`` tool.
    """
    own_writer = writer is None
    active = writer or CaptureWriter(engine)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        active.start()
        try:
            yield
        finally:
            if own_writer:
                active.close()
            else:
                active.flush()

    api = FastAPI(title="probegate probes", lifespan=lifespan, docs_url=None, redoc_url=None)
    api.state.probes = ProbeService(active, default_feedback=feedback, subagent=subagent)
    add_routes(api, active, engine)
    add_mcp_routes(api, active, engine)  # the same service behind both doors

    @api.get("/probegate/health")
    def health() -> dict[str, Any]:
        """Writer queue depth (items), rows written, writer errors."""
        return {
            "status": "ok" if active.stats.spilled == 0 else "degraded",
            "queue_depth": active.depth,
            "rows_written": active.stats.written,
            "writer_errors": active.stats.errors,
        }

    return api
