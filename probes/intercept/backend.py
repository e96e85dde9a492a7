"""How the intercepting proxy reaches the probes: in the same process, or over HTTP.

Both backends are synchronous; the addon calls them in a worker thread so a slow
probe (``delegate``) never stalls the proxy's event loop.
"""

from __future__ import annotations

import json
from typing import Protocol

import httpx

from probegate.probes.service import ProbeService


class ProbeBackend(Protocol):
    """Answers one tool call: ``(status, JSON body bytes)``."""

    def call(self, run: str, task: str, attempt: int, tool: str, body: bytes) -> tuple[int, bytes]: ...

    def close(self) -> None: ...


class InProcessBackend:
    """Calls a :class:`~probegate.probes.service.ProbeService` directly (logged with door ``mitm``)."""

    def __init__(self, service: ProbeService) -> None:
        self.service = service

    def call(self, run: str, task: str, attempt: int, tool: str, body: bytes) -> tuple[int, bytes]:
        """Run the call in this process."""
        outcome = self.service.call(run, task, attempt, tool, body, door="mitm")
        return outcome.status_code, json.dumps(outcome.body).encode()

    def close(self) -> None:
        """Nothing to release."""


class HttpBackend:
    """Posts to a probe server (``probegate serve`` or ``probegate probes serve``).

    Args:
        base_url: the server, e.g. ``http://127.0.0.1:8700``.
        timeout: seconds to wait for a probe (delegation can take minutes).
    """

    def __init__(self, base_url: str, timeout: float = 600.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.client = httpx.Client(timeout=timeout, trust_env=False)

    def call(self, run: str, task: str, attempt: int, tool: str, body: bytes) -> tuple[int, bytes]:
        """POST the call; an unreachable server answers 502 with a JSON error."""
        url = f"{self.base_url}/r/{run}/{task}/{attempt}/tools/{tool}"
        headers = {"content-type": "application/json", "x-probegate-via": "mitm"}
        try:
            response = self.client.post(url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            message = f"probe server {self.base_url} unreachable: {type(exc).__name__}"
            return 502, json.dumps({"error": "probes_unreachable", "message": message}).encode()
        return response.status_code, response.content

    def close(self) -> None:
        """Close the HTTP client."""
        self.client.close()
