"""An ordinary LangChain agent, evaluated by probegate without changing its code path.

Run it under probegate with the ``cmd:`` harness:

    probegate run --harness 'cmd:python examples/langchain_agent.py' --tasks p0-weather-berlin

probegate sets ``OPENAI_BASE_URL`` (the gateway, attributed to the run, task and
attempt), ``OPENAI_API_KEY``, ``OPENAI_MODEL``, ``PROBEGATE_TOOLS_URL`` (the probes
serving this task's tools) and ``PROBEGATE_TASK_PROMPT``. Your own agent only needs
to take its model URL and its tools from there; whatever it prints last is its answer.
"""

from __future__ import annotations

import os

import httpx
from langchain.agents import create_agent
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI

TOOLS_URL = os.environ["PROBEGATE_TOOLS_URL"]


def tool(spec: dict) -> StructuredTool:
    """A LangChain tool that calls one probe endpoint."""
    fn = spec["function"]

    def call(**arguments: object) -> str:
        return httpx.post(f"{TOOLS_URL}/{fn['name']}", json=arguments, timeout=60).text

    return StructuredTool.from_function(func=call, name=fn["name"], description=fn.get("description", ""),
                                        args_schema=fn.get("parameters") or {"type": "object", "properties": {}})


def main() -> None:
    specs = httpx.get(TOOLS_URL, timeout=60).json()["tools"]
    llm = ChatOpenAI(model=os.environ.get("OPENAI_MODEL", "default"), temperature=0)  # base URL from the env
    agent = create_agent(llm, [tool(s) for s in specs])
    state = agent.invoke({"messages": [{"role": "user", "content": os.environ["PROBEGATE_TASK_PROMPT"]}]},
                         config={"recursion_limit": 16})
    print(state["messages"][-1].text)


if __name__ == "__main__":
    main()
