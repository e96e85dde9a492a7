"""Wiring the parts together: the gateway with the probes mounted.

The CLI and the runner both build the served application here, so ``probegate
serve`` and an in-process run expose the same routes.
"""

from __future__ import annotations

import importlib
from typing import Any

from sqlalchemy.engine import Engine

from gateway.app import GatewayApp, GatewayConfig, create_gateway
from probegate.store.writer import CaptureWriter

#: Modules that add routes to the gateway's FastAPI app: ``add_routes(api, writer, engine)``.
ROUTE_MODULES = ["probes.http"]


def route_adders() -> list[Any]:
    """The ``add_routes`` functions of every installed route module."""
    adders = []
    for name in ROUTE_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not name.startswith(exc.name):
                raise  # a missing dependency inside the module is a real error
            continue
        adders.append(module.add_routes)
    return adders


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
