"""The gateway a run starts for itself (pass-through + probes, in-process).

``probegate run`` without ``--gateway`` builds the same application ``probegate
serve`` serves (:func:`probegate.runner.compose.build_app`) on a free loopback port,
with its own capture writer on the run's store, and gives the ``delegate`` probe
a :class:`~probegate.harnesses.subagent.SubAgentRunner` bound to that gateway's URL.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
from sqlalchemy.engine import Engine

from probegate.runner.serving import BackgroundServer, free_port
from probegate.harnesses.subagent import SubAgentRunner
from probegate.gateway.app import GatewayConfig
from probegate.runner.compose import build_app
from probegate.store.writer import CaptureWriter


class LocalGateway:
    """A gateway + probes serving on loopback for the length of a run.

    Args:
        upstream: the model server's base URL.
        engine: the run's store.
        model: model name (for the sub-agent).
        api_key: key the sub-agent sends.
        temperature: the sub-agent's temperature.
        host: bind address.
        compat: opt-in request shims (``probegate.gateway.compat``), recorded on every exchange.
    """

    def __init__(
        self,
        upstream: str,
        engine: Engine,
        *,
        model: str,
        api_key: str = "probegate",
        temperature: float = 0.0,
        host: str = "127.0.0.1",
        compat: tuple[str, ...] = (),
    ) -> None:
        port = free_port(host)
        self.url = f"http://{host}:{port}"
        self.subagent = SubAgentRunner(self.url, model, api_key, temperature)
        self.writer = CaptureWriter(engine)
        self.app = build_app(GatewayConfig(upstream=upstream, compat=list(compat)), engine=engine, writer=self.writer)
        wire_subagent(self.app, self.subagent)
        # an attempt abandoned at Ctrl-C may hold a connection: do not wait for it long
        self.server = BackgroundServer(self.app, host, port, timeout_graceful_shutdown=5)

    def __enter__(self) -> LocalGateway:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def start(self) -> LocalGateway:
        """Start serving (the writer starts with the app's lifespan)."""
        self.writer.start()
        self.server.start()
        return self

    def stop(self) -> None:
        """Stop serving, then commit every capture still queued."""
        self.server.stop()
        self.writer.close()


@dataclass(frozen=True)
class GatewayHandle:
    """A run's gateway: its URL, and how to wait until its captures are committed."""

    url: str
    drain: Callable[[], object]


@contextlib.contextmanager
def run_gateway(
    external: str | None,
    upstream: str | None,
    engine: Engine,
    *,
    model: str,
    api_key: str = "probegate",
    temperature: float = 0.0,
    compat: tuple[str, ...] = (),
) -> Iterator[GatewayHandle]:
    """The gateway a run uses: ``external`` (already running, with its own store and
    upstream), or a :class:`LocalGateway` in front of ``upstream`` started here and
    stopped (its captures committed) when the block ends."""
    if external:
        url = external.rstrip("/")
        yield GatewayHandle(url, lambda: wait_drained(url))
        wait_drained(url)
        return
    if upstream is None:
        raise ValueError("a local gateway needs an upstream")
    with LocalGateway(upstream, engine, model=model, api_key=api_key, temperature=temperature,
                      compat=compat) as gateway:
        yield GatewayHandle(gateway.url, gateway.writer.flush)


def wire_subagent(app: Any, subagent: SubAgentRunner) -> None:
    """Hand the sub-agent runner to the probes mounted in ``app``.

    ``probegate.probes.http.add_routes`` keeps its ``ProbeService`` on ``api.state.probes``;
    its ``subagent`` attribute is what the ``delegate`` tool calls.

    Raises:
        RuntimeError: ``app`` has no probes mounted.
    """
    probes = getattr(app.api.state, "probes", None)
    if probes is None:
        raise RuntimeError("the gateway has no probes mounted (probegate.probes.http is missing)")
    probes.subagent = subagent


def _settled(health: dict[str, Any], last_written: Any) -> bool:
    if "pending" in health:  # captures accepted but not yet committed, when the gateway says
        return bool(health["pending"] == 0)
    # otherwise: nothing queued and nothing committed since the last look (the writer
    # takes a batch off the queue, lingers, then commits it)
    return bool(health.get("queue_depth", 0) == 0 and health.get("rows_written") == last_written)


def wait_drained(gateway_url: str, timeout: float = 30.0, poll_s: float = 0.1) -> bool:
    """Wait until a running gateway has committed every capture it accepted.

    Returns:
        Whether it drained within ``timeout`` seconds (``False`` also when the
        gateway does not answer ``/probegate/health``).
    """
    deadline = time.monotonic() + timeout
    last_written: Any = None
    while time.monotonic() < deadline:
        try:
            health = httpx.get(f"{gateway_url.rstrip('/')}/probegate/health", timeout=5).json()
        except (httpx.HTTPError, ValueError):
            return False
        if _settled(health, last_written):
            return True
        last_written = health.get("rows_written")
        time.sleep(poll_s)
    return False
