"""An ordinary CrewAI agent that takes its tools from an MCP server.

Nothing here knows about probegate: the model is CrewAI's ``LLM`` at
``OPENAI_BASE_URL``, the tools come from CrewAI's own MCP support
(``Agent(mcps=[MCPServerHTTP(url=...)])``, streamable HTTP):

    probegate run --harness 'cmd:python examples/crewai_mcp_agent.py' --tasks p0-weather-berlin

(CrewAI's ``crewai-tools[mcp]`` ``MCPServerAdapter`` does the same; CrewAI 1.x has
MCP built in, so this example needs nothing beyond ``crewai``.)
"""

from __future__ import annotations

import os

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.mcp import MCPServerHTTP  # noqa: E402

MCP_URL = os.environ.get("MCP_URL") or os.environ["PROBEGATE_MCP_URL"]


def main() -> None:
    llm = LLM(model=f"openai/{os.environ.get('OPENAI_MODEL', 'default')}", base_url=os.environ["OPENAI_BASE_URL"],
              api_key=os.environ.get("OPENAI_API_KEY", "none"), temperature=0)
    agent = Agent(role="Assistant", goal="Answer the user's request with the tools available.",
                  backstory="You use tools to get facts right.", llm=llm, mcps=[MCPServerHTTP(url=MCP_URL)],
                  max_iter=8, verbose=False)
    task = Task(description=os.environ["PROBEGATE_TASK_PROMPT"], expected_output="The answer.", agent=agent)
    print(Crew(agents=[agent], tasks=[task], verbose=False).kickoff().raw)


if __name__ == "__main__":
    main()
