"""``--mcp-upstream NAME=URL``: the agent's own MCP servers behind the gateway (pure).

The gateway forwards ``/r/{run}/{task}[/{attempt}]/mcp/{NAME}`` to ``URL`` (the MCP
server's streamable HTTP endpoint, e.g. ``http://127.0.0.1:9000/mcp``) byte for byte
and records every exchange, SSE streams included, as it records model exchanges; the
scorer reads the ``tools/call`` messages there as the attempt's actual tool calls.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from probegate.errors import UsageError
from probegate.urls import valid_id


def parse_mcp_upstreams(values: list[str]) -> dict[str, str]:
    """``["NAME=URL", ...]`` -> ``{NAME: URL}``.

    Raises:
        UsageError: a value without ``=``, a name not usable in a URL path segment,
            a URL that is not http(s) with a host, or a name given twice.
    """
    out: dict[str, str] = {}
    for value in values:
        name, sep, url = value.partition("=")
        name, url = name.strip(), url.strip()
        if not sep or not name or not url:
            raise UsageError(f"--mcp-upstream wants NAME=URL, got {value!r}")
        if not valid_id(name):
            raise UsageError(f"--mcp-upstream name {name!r} is not usable in a URL (letters, digits, . _ - : @ +)")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise UsageError(f"--mcp-upstream {name}: the URL must be http(s)://HOST[:PORT]/PATH, got {url!r}")
        if name in out:
            raise UsageError(f"--mcp-upstream {name} is given twice")
        out[name] = url
    return out
