"""An ordinary OpenAI Agents SDK agent that takes its tools from an MCP server.

Nothing here knows about probegate: the model is the SDK's chat-completions model over
an ``AsyncOpenAI`` client (which reads ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``),
the tools come from ``MCPServerStreamableHttp`` at one URL:

    probegate run --harness 'cmd:python examples/openai_agents_mcp_agent.py' --tasks p0-weather-berlin
"""

from __future__ import annotations

import asyncio
import os

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled  # noqa: TID251 (the SDK)
from agents.mcp import MCPServerStreamableHttp  # noqa: TID251
from openai import AsyncOpenAI

MCP_URL = os.environ.get("MCP_URL") or os.environ["PROBEGATE_MCP_URL"]


async def main() -> None:
    set_tracing_disabled(True)  # no trace export to OpenAI's servers
    model = OpenAIChatCompletionsModel(model=os.environ.get("OPENAI_MODEL", "default"), openai_client=AsyncOpenAI())
    async with MCPServerStreamableHttp(params={"url": MCP_URL}, cache_tools_list=True) as server:
        agent = Agent(name="Assistant", instructions="Use the tools to answer.", model=model, mcp_servers=[server])
        result = await Runner.run(agent, os.environ["PROBEGATE_TASK_PROMPT"], max_turns=8)
    print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
