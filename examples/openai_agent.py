"""A plain openai-SDK agent, evaluated by probegate without changing its code path.

    probegate run --harness 'cmd:python examples/openai_agent.py' --tasks p0-weather-berlin

It only reads the environment the ``cmd:`` harness sets (``OPENAI_BASE_URL``,
``OPENAI_API_KEY``, ``OPENAI_MODEL``, ``PROBEGATE_TOOLS_URL``,
``PROBEGATE_TASK_PROMPT``): it lists the tools, runs a function-calling loop, calls
the tools with httpx and prints the final answer.
"""

import json
import os

import httpx
from openai import OpenAI

client = OpenAI()  # OPENAI_BASE_URL and OPENAI_API_KEY come from the environment
tools_url = os.environ["PROBEGATE_TOOLS_URL"]
tools = httpx.get(tools_url).json()["tools"]
messages = [{"role": "user", "content": os.environ["PROBEGATE_TASK_PROMPT"]}]
for _ in range(int(os.environ.get("PROBEGATE_MAX_STEPS", "8"))):
    message = client.chat.completions.create(
        model=os.environ["OPENAI_MODEL"], messages=messages, tools=tools
    ).choices[0].message
    if not message.tool_calls:
        print(message.content)
        break
    messages.append(message.model_dump(exclude_none=True))
    for call in message.tool_calls:
        result = httpx.post(f"{tools_url}/{call.function.name}", content=call.function.arguments)
        messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result.json())})
