"""An ordinary LangChain agent that takes its tools from an MCP server.

Nothing here knows about probegate: the model comes from ``OPENAI_BASE_URL`` (read by
``langchain_openai``) and the tools from one MCP URL (``langchain-mcp-adapters``).
Pointed at probegate, the URL is the one the ``cmd:`` harness exports:

    probegate run --harness 'cmd:python examples/langchain_mcp_agent.py' --tasks p0-weather-berlin
"""

from __future__ import annotations

import asyncio
import os

from langchain.agents import create_agent
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_openai import ChatOpenAI

MCP_URL = os.environ.get("MCP_URL") or os.environ["PROBEGATE_MCP_URL"]


async def main() -> None:
    client = MultiServerMCPClient({"tools": {"transport": "streamable_http", "url": MCP_URL}})
    tools = await client.get_tools()
    llm = ChatOpenAI(model=os.environ.get("OPENAI_MODEL", "default"), temperature=0)
    agent = create_agent(llm, tools)
    state = await agent.ainvoke({"messages": [{"role": "user", "content": os.environ["PROBEGATE_TASK_PROMPT"]}]},
                                config={"recursion_limit": 16})
    print(state["messages"][-1].text)


if __name__ == "__main__":
    asyncio.run(main())
