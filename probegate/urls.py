"""Which run, task and attempt a request belongs to: read from its URL (pure).

Agent frameworks only let users set ``base_url``, so attribution travels in the path:
``/r/{run}/{task}[/{attempt}]/v1/...`` (or ``/api/...`` for Ollama's native routes,
``/tools[/{tool}]`` for the probes' REST door, ``/mcp`` for their MCP door,
``/mcp/{name}`` for the recording proxy in front of the agent's own MCP server
``name``). A bare ``/v1/...`` or ``/api/...`` belongs to run
``adhoc``, task ``-``, unless ``x-probegate-run`` / ``x-probegate-task`` headers say
otherwise.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

ADHOC_RUN = "adhoc"
ADHOC_TASK = "-"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+\-]{0,127}$")
_ROUTE_ROOTS = ("v1", "api", "tools", "mcp")

Kind = Literal["model", "tools", "mcp", "mcp_proxy"]


class Target(NamedTuple):
    """Where a request goes and whom it is attributed to.

    Attributes:
        run: run id.
        task: task id.
        attempt: attempt number (0 when the URL has none).
        kind: ``model`` (forward upstream), ``tools`` (the probes' REST door),
            ``mcp`` (the probes' MCP door) or ``mcp_proxy`` (forward to the agent's
            own MCP server, ``probegate serve --mcp-upstream NAME=URL``).
        rest: the upstream path (``/v1/chat/completions``); for tools, the tool
            name (``""`` for the catalogue); for ``mcp`` ``/mcp``; for ``mcp_proxy``
            ``/mcp/{name}``.
        prefix: the attribution prefix that was stripped (``/r/run/task/0``).
    """

    run: str
    task: str
    attempt: int
    kind: Kind
    rest: str
    prefix: str


def valid_id(value: str) -> bool:
    """Whether ``value`` is usable as a run or task id in a URL."""
    return bool(_ID.match(value))


def _route(segments: list[str], run: str, task: str, attempt: int, prefix: str) -> Target | None:
    if not segments or segments[0] not in _ROUTE_ROOTS:
        return None
    if segments[0] == "tools":
        if len(segments) > 2:
            return None
        tool = segments[1] if len(segments) == 2 else ""
        return Target(run, task, attempt, "tools", tool, prefix)
    if segments[0] == "mcp":
        if len(segments) > 2 or (len(segments) == 2 and not valid_id(segments[1])):
            return None
        kind: Kind = "mcp_proxy" if len(segments) == 2 else "mcp"
        return Target(run, task, attempt, kind, "/" + "/".join(segments), prefix)
    return Target(run, task, attempt, "model", "/" + "/".join(segments), prefix)


def parse_path(path: str, run: str = ADHOC_RUN, task: str = ADHOC_TASK) -> Target | None:
    """Parse a request path.

    Args:
        path: the URL path (no query).
        run: run id for bare routes.
        task: task id for bare routes.

    Returns:
        The :class:`Target`, or ``None`` when the path is not a gateway route.
    """
    segments = path.split("/")[1:]
    if segments and segments[0] != "r":
        return _route(segments, run, task, 0, "")
    if len(segments) < 4 or not (valid_id(segments[1]) and valid_id(segments[2])):
        return None
    run, task = segments[1], segments[2]
    if segments[3].isdigit() and len(segments[3]) <= 9:
        return _route(segments[4:], run, task, int(segments[3]), "/" + "/".join(segments[:4]))
    return _route(segments[3:], run, task, 0, "/" + "/".join(segments[:3]))


def attempt_prefix(run: str, task: str, attempt: int | None = None) -> str:
    """The URL prefix for a run/task/attempt, e.g. ``/r/run1/t01/0``."""
    tail = f"/{attempt}" if attempt is not None else ""
    return f"/r/{run}/{task}{tail}"
