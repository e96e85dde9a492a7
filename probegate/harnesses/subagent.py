"""The sub-agent runner behind the ``delegate`` probe.

The probes call it with a ``probegate.probes.tool.SubAgentRequest`` (run, task, attempt,
instruction, allowed tool names, ...) and use its return value as the tool's
result. It runs a small strict function-calling loop (:class:`probegate.harnesses.fc.FcHarness`)
with the same model, through the gateway, under the same attribution prefix: its
requests do not extend the main agent's conversation, so the scorer sees them as a
new thread, and its tool calls land in the same world and probe log. ``delegate``
itself is never offered to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from probegate.harnesses.base import HarnessContext
from probegate.harnesses.fc import FcHarness
from probegate.harnesses.schemas import tool_function
from probegate.harnesses.tools_client import ToolsClient, attempt_urls

SUBAGENT_SYSTEM = (
    "You are a sub-agent. Complete the task you are given with the tools provided, then reply with "
    "a short, complete answer in plain text: it is handed back to the agent that delegated the task."
)


class SubAgentTask(Protocol):
    """What the probes hand over (``probegate.probes.tool.SubAgentRequest`` has these fields)."""

    run: str
    task: str
    attempt: int
    instruction: str
    tools: tuple[str, ...]


class SubAgentFailed(RuntimeError):
    """The sub-agent stopped without an answer (the probe reports it as a tool error)."""


@dataclass(frozen=True)
class SubAgentRunner:
    """A callable ``(request) -> final answer`` for the probes' ``subagent`` hook.

    Attributes:
        gateway_url: the gateway, ``http://host:port``.
        model: model name.
        api_key: key sent to the gateway.
        temperature: sampling temperature.
        max_steps: model turns the sub-agent may take.
        timeout: seconds the sub-agent may take.
    """

    gateway_url: str
    model: str
    api_key: str = "probegate"
    temperature: float = 0.0
    max_steps: int = 6
    timeout: float = 120.0

    def __call__(self, request: SubAgentTask) -> str:
        """Run the sub-task; returns the sub-agent's final answer.

        Raises:
            SubAgentFailed: the sub-agent ended without an answer.
            ProbesError: the probes could not list the attempt's tools.
        """
        model_url, tools_url = attempt_urls(self.gateway_url, request.run, request.task, request.attempt)
        with ToolsClient(tools_url, timeout=self.timeout) as client:
            offered = client.list_tools()
        allowed = set(request.tools) - {"delegate"}
        tools = [t for t in offered if tool_function(t).get("name") in allowed]
        ctx = HarnessContext(
            model_base_url=model_url,
            tools_url=tools_url,
            model=self.model,
            prompt=request.instruction,
            tools=tools,
            api_key=self.api_key,
            temperature=self.temperature,
            max_steps=self.max_steps,
            timeout=self.timeout,
            run_id=request.run,
            task_id=request.task,
            attempt=request.attempt,
        )
        result = FcHarness(system=SUBAGENT_SYSTEM).run(ctx)
        if result.final_answer is None:
            raise SubAgentFailed(f"the sub-agent stopped ({result.stop}): {result.error}")
        return result.final_answer
