"""``langchain-mcp``: the ``langchain`` agent with its tools from the probes' MCP door.

The same ``create_agent`` over ``ChatOpenAI`` as :mod:`probegate.harnesses.langchain_agent`,
but the tools are whatever ``langchain-mcp-adapters`` builds from the attempt's MCP URL
(``MultiServerMCPClient``, streamable HTTP), as a user's MCP agent would get them; so
a run shows whether the tool transport changes the result. The agent runs async
(MCP tools are coroutines), on its own event loop in the attempt's thread.
"""

from __future__ import annotations

import asyncio

from probegate.errors import UsageError
from probegate.harnesses.base import HarnessContext, HarnessResult
from probegate.harnesses.langchain_agent import (
    EXTRA_HINT,
    agent_failures,
    chat_model,
    first_input,
    outcome,
    require_langchain,
    run_config,
)


def require_adapters() -> None:
    """Check that LangChain and ``langchain-mcp-adapters`` import.

    Raises:
        UsageError: one is missing (one line naming the extra to install).
    """
    require_langchain()
    try:
        import langchain_mcp_adapters  # noqa: F401
    except ImportError as exc:
        raise UsageError(f"the langchain-mcp harness needs langchain-mcp-adapters: {EXTRA_HINT}") from exc


class LangChainMcpHarness:
    """A LangChain ``create_agent`` agent whose tools come over MCP."""

    name = "langchain-mcp"

    def check(self) -> None:
        """Raise :class:`UsageError` when the extra is missing."""
        require_adapters()

    def run(self, ctx: HarnessContext) -> HarnessResult:
        """Drive one attempt; see :class:`~probegate.harnesses.base.Harness`."""
        return asyncio.run(self._run(ctx))

    async def _run(self, ctx: HarnessContext) -> HarnessResult:
        from langchain.agents import create_agent
        from langchain_mcp_adapters.client import MultiServerMCPClient

        client = MultiServerMCPClient({"probes": {"transport": "streamable_http", "url": ctx.mcp_url}})
        with agent_failures(ctx) as failed:
            agent = create_agent(chat_model(ctx), await client.get_tools(), system_prompt=ctx.system)
            state = await asyncio.wait_for(agent.ainvoke(first_input(ctx), config=run_config(ctx)), ctx.timeout)
        return failed[0] if failed else outcome(state)
