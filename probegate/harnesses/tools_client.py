"""A small HTTP client for the probes (docs/probes-api.md).

Tool calls go to ``POST {tools_url}/{tool}`` with the JSON arguments. Whatever the
status (200 result, 422 blocked with a hint, 400 tool error, 404 unknown tool), the
JSON body is the observation the model sees. World resets go to
``POST {gateway}/probegate/attempts/reset`` before every attempt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from probegate.errors import ProbegateError


class ProbesError(ProbegateError):
    """The probes cannot be reached or refused a reset."""


@dataclass(frozen=True)
class Observation:
    """A probe's answer to one tool call.

    Attributes:
        tool: the tool that was called.
        status: HTTP status (200 executed, 422 blocked, 400 tool error, 404 unknown
            tool; 0 when the probe could not be reached).
        body: the parsed JSON body (a dict for every documented answer).
    """

    tool: str
    status: int
    body: Any

    @property
    def ok(self) -> bool:
        """Whether the tool executed (HTTP 200)."""
        return self.status == 200

    def text(self) -> str:
        """The observation as the model sees it: the body as compact JSON."""
        return json.dumps(self.body, ensure_ascii=False, separators=(", ", ": "))


def attempt_urls(gateway: str, run: str, task: str, attempt: int) -> tuple[str, str]:
    """The model base URL and tools URL of one attempt.

    Returns:
        ``({gateway}/r/{run}/{task}/{attempt}/v1, {gateway}/r/{run}/{task}/{attempt}/tools)``.
    """
    prefix = f"{gateway.rstrip('/')}/r/{run}/{task}/{attempt}"
    return f"{prefix}/v1", f"{prefix}/tools"


def _body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return {"error": "non_json_answer", "status": response.status_code, "text": response.text[:2000]}


class ToolsClient:
    """Calls the tools of one attempt.

    Args:
        tools_url: ``{gateway}/r/{run}/{task}/{attempt}/tools``.
        timeout: seconds per HTTP request.
    """

    def __init__(self, tools_url: str, *, timeout: float = 60.0) -> None:
        self.tools_url = tools_url.rstrip("/")
        self._client = httpx.Client(timeout=timeout)

    def __enter__(self) -> ToolsClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def list_tools(self) -> list[dict[str, Any]]:
        """The OpenAI tool objects offered to this attempt.

        Raises:
            ProbesError: the probes cannot be reached or answered without ``tools``.
        """
        try:
            response = self._client.get(self.tools_url)
        except httpx.HTTPError as exc:
            raise ProbesError(f"cannot reach the probes at {self.tools_url}: {exc}") from exc
        body = _body(response)
        if response.status_code != 200 or not isinstance(body, dict) or "tools" not in body:
            raise ProbesError(f"GET {self.tools_url} answered {response.status_code}: {str(body)[:300]}")
        return list(body["tools"])

    def call(self, tool: str, arguments: Any) -> Observation:
        """Call ``tool``; never raises.

        Args:
            tool: tool name as the model wrote it (URL-quoted here).
            arguments: a dict (sent as JSON) or the raw arguments text exactly as the
                model wrote it (sent as is, so the probe logs the real bytes).

        Returns:
            The :class:`Observation`; status 0 with an ``unreachable`` body when the
            probe could not be reached.
        """
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        url = f"{self.tools_url}/{quote(tool, safe='')}"
        try:
            response = self._client.post(
                url, content=raw.encode("utf-8"), headers={"content-type": "application/json"}
            )
        except httpx.HTTPError as exc:
            return Observation(tool, 0, {"error": "unreachable", "message": f"{type(exc).__name__}: {exc}"})
        return Observation(tool, response.status_code, _body(response))


def reset_attempt(
    gateway: str,
    *,
    run: str,
    task: str,
    attempt: int,
    world: str = "default",
    world_patch: dict[str, Any] | None = None,
    tools: list[str] | None = None,
    feedback: str = "actionable",
    timeout: float = 60.0,
) -> list[dict[str, Any]]:
    """Reset the world of one attempt from its fixture.

    Returns:
        The OpenAI tool objects the attempt offers.

    Raises:
        ProbesError: the probes are unreachable or refused the reset (unknown world,
            unknown tool name in the task).
    """
    url = f"{gateway.rstrip('/')}/probegate/attempts/reset"
    payload = {
        "run": run,
        "task": task,
        "attempt": attempt,
        "world": world,
        "world_patch": world_patch or {},
        "tools": tools or [],
        "feedback": feedback,
    }
    try:
        response = httpx.post(url, json=payload, timeout=timeout)
    except httpx.HTTPError as exc:
        raise ProbesError(f"cannot reach the probes at {url}: {exc}") from exc
    body = _body(response)
    if response.status_code != 200 or not isinstance(body, dict):
        raise ProbesError(f"reset of {run}/{task}/{attempt} refused ({response.status_code}): {str(body)[:300]}")
    return list(body.get("tools") or [])
