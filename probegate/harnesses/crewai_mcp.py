"""``crewai-mcp``: the ``crewai`` agent with its tools from the probes' MCP door.

The same one-agent crew as :mod:`probegate.harnesses.crewai_agent`, but the agent gets
its tools through CrewAI's own MCP support, ``Agent(mcps=[MCPServerHTTP(url=...)])``
(streamable HTTP), as a user's CrewAI MCP agent would. CrewAI names MCP tools after
the server's URL (``mcp_127_0_0_1_8080_r_run_t01_0_mcp_get_weather``): the model sees
those names, the probe log the real ones, so a run shows what the transport costs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from probegate.harnesses.base import HarnessContext
from probegate.harnesses.crewai_agent import CrewAIHarness


class CrewAIMcpHarness(CrewAIHarness):
    """A one-agent crew whose tools come over MCP."""

    name = "crewai-mcp"

    @contextlib.contextmanager
    def tool_source(self, ctx: HarnessContext) -> Iterator[dict[str, Any]]:
        """``mcps``: the attempt's MCP door."""
        from crewai.mcp import MCPServerHTTP

        yield {"mcps": [MCPServerHTTP(url=ctx.mcp_url)]}
