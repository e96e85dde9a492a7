"""The gateway: an OpenAI-compatible reverse proxy that records every exchange.

It forwards each request to the model server (JSON, SSE and NDJSON pass through as
they arrive), applies the opt-in compat rules (:mod:`probegate.gateway.compat`; ``responses-via-chat``
translates a whole route, :mod:`probegate.gateway.via_chat`),
captures the exchange (:mod:`probegate.gateway.capture`) for the store's writer,
and can answer from a stored run instead (:mod:`probegate.gateway.replay`). It never
imports the probes; :mod:`probegate.runner.compose` mounts them beside it.
"""

from probegate.gateway.app import GatewayApp, GatewayConfig, create_gateway

__all__ = ["GatewayApp", "GatewayConfig", "create_gateway"]
