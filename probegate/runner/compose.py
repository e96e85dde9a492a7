"""Wiring the parts together: the gateway with the probes mounted.

The CLI and the runner both build the served application here, so ``probegate
serve`` and an in-process run expose the same routes.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Engine

from probegate.gateway.app import GatewayApp, GatewayConfig, create_gateway
from probegate.probes.http import add_routes as add_probe_routes
from probegate.probes.mcp import add_routes as add_mcp_routes
from probegate.store.writer import CaptureWriter

def route_adders() -> list[Any]:
    """The functions that add routes to the gateway's FastAPI app: ``add_routes(api, writer, engine)``
    (the probes' REST door, then their MCP door, sharing one probe service)."""
    return [add_probe_routes, add_mcp_routes]


def build_app(
    config: GatewayConfig,
    *,
    engine: Engine | None = None,
    writer: CaptureWriter | None = None,
    **kwargs: Any,
) -> GatewayApp:
    """The full gateway application (pass-through + probes), ready for uvicorn.

    Raises:
        StoreError: the store cannot be opened.
    """
    return create_gateway(config, engine=engine, writer=writer, routers=route_adders(), **kwargs)
