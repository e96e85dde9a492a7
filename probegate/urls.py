"""Which run, task and attempt a request belongs to: read from its URL (pure).

Agent frameworks only let users set ``base_url``, so attribution travels in the path:
``/r/{run}/{task}[/{attempt}]/v1/...`` (or ``/api/...`` for Ollama's native routes,
``/tools[/{tool}]`` for the probes' REST door, ``/mcp`` for their MCP door,
``/mcp/{name}`` for the recording proxy in front of the agent's own MCP server
``name``). A bare ``/v1/...`` or ``/api/...`` belongs to run
``adhoc``, task ``-``, unless ``x-probegate-run`` / ``x-probegate-task`` headers say
otherwise.

Ids follow the one rule of :mod:`probegate.ids`, whether they come from the path or
from those headers. A model route's path is normalised (``.`` and ``..`` segments
removed) and refused when it would leave its API prefix (``/v1/../secret``), holds a
control character or an encoded ``?`` / ``#`` / backslash: such a request is answered
400 and recorded, never forwarded.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from probegate.ids import ADHOC_RUN, ADHOC_TASK, valid_id, valid_task_id

__all__ = ["ADHOC_RUN", "ADHOC_TASK", "Target", "attempt_prefix", "normalise_model_path", "parse_path", "valid_id"]

_ROUTE_ROOTS = ("v1", "api", "tools", "mcp")
_BAD_PATH_CHARS = re.compile(r"[\x00-\x1f\x7f?#\\]")

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
        problem: why the request must be refused with a 400 (an unusable id in a
            header, a path leaving its API prefix), else ``None``.
    """

    run: str
    task: str
    attempt: int
    kind: Kind
    rest: str
    prefix: str
    problem: str | None = None


def normalise_model_path(path: str) -> str:
    """Remove ``.`` / ``..`` segments from a model route's path, keeping its API prefix.

    ``/v1/chat/./completions`` -> ``/v1/chat/completions``. Repeated slashes are
    kept (the upstream sees what the client sent, minus dot segments).

    Raises:
        ValueError: the path holds a control character (``%00 %09 %0a %0d %7f``...),
            an encoded ``?`` / ``#`` or a backslash, or a ``..`` would leave the first
            segment (``/v1/../secret``).
    """
    bad = _BAD_PATH_CHARS.search(path)
    if bad:
        raise ValueError(f"the path holds {bad.group()!r}, which a model route cannot carry")
    segments = path.split("/")[1:]
    kept: list[str] = []
    for segment in segments:
        if segment == "..":
            if len(kept) <= 1:
                raise ValueError("the path leaves its API prefix (a '..' segment)")
            kept.pop()
        elif segment != ".":
            kept.append(segment)
    if segments and segments[-1] in (".", "..") and kept:
        kept.append("")  # "/v1/a/." names the folder "/v1/a/"
    return "/" + "/".join(kept)


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
    path = "/" + "/".join(segments)
    try:
        return Target(run, task, attempt, "model", normalise_model_path(path), prefix)
    except ValueError as exc:
        return Target(run, task, attempt, "model", path, prefix, f"bad_path: {exc}")


def parse_path(path: str, run: str = ADHOC_RUN, task: str = ADHOC_TASK) -> Target | None:
    """Parse a request path.

    Args:
        path: the URL path (no query).
        run: run id for bare routes (from ``x-probegate-run``).
        task: task id for bare routes (from ``x-probegate-task``).

    Returns:
        The :class:`Target`, or ``None`` when the path is not a gateway route. A target
        with ``problem`` set must be refused (400); when an id in the URL or a header
        is unusable, it is attributed to ``adhoc`` / ``-``, never to that id.
    """
    segments = path.split("/")[1:]
    if segments and segments[0] != "r":
        found = _route(segments, ADHOC_RUN, ADHOC_TASK, 0, "")
        if found is None:
            return None
        if not valid_id(run):
            return found._replace(problem=f"bad_attribution: x-probegate-run {run!r} is not a usable id")
        if not valid_task_id(task):
            return found._replace(problem=f"bad_attribution: x-probegate-task {task!r} is not a usable id")
        return found._replace(run=run, task=task)
    if len(segments) < 4:
        return None
    run, task = segments[1], segments[2]
    if segments[3].isdigit() and len(segments[3]) <= 9:
        found = _route(segments[4:], run, task, int(segments[3]), "/" + "/".join(segments[:4]))
    else:
        found = _route(segments[3:], run, task, 0, "/" + "/".join(segments[:3]))
    if found is None or (valid_id(run) and valid_id(task)):
        return found
    which, value = ("run", run) if not valid_id(run) else ("task", task)
    problem = f"bad_attribution: the {which} id {value!r} in the URL is not a usable id"
    return found._replace(run=ADHOC_RUN, task=ADHOC_TASK, attempt=0, prefix="", problem=problem)


def attempt_prefix(run: str, task: str, attempt: int | None = None) -> str:
    """The URL prefix for a run/task/attempt, e.g. ``/r/run1/t01/0``."""
    tail = f"/{attempt}" if attempt is not None else ""
    return f"/r/{run}/{task}{tail}"
