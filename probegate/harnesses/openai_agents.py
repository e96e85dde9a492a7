"""``openai-agents`` and ``openai-agents-chat``: a real OpenAI Agents SDK agent
(``agents.Agent`` run by ``agents.Runner.run``) whose model client has its
``base_url`` at the gateway.

``openai-agents`` uses the SDK's default model class, ``OpenAIResponsesModel``
(``POST /v1/responses``); ``openai-agents-chat`` uses ``OpenAIChatCompletionsModel``
(``POST /v1/chat/completions``), so one run can compare the two APIs on the same
model. The SDK's own code path, unmodified: we provide the tools (``FunctionTool``s
built from the probes' OpenAI schemas, passed as they are with
``strict_json_schema=False``, whose raw JSON arguments go to the probe endpoints as
the model wrote them) and turn the SDK's trace export off through its documented
switches (``set_tracing_disabled(True)`` and ``RunConfig(tracing_disabled=True)``):
this box has no network, and an export would be traffic the run did not ask for.
The SDK lives in the ``frameworks`` extra and is imported lazily.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from probegate.harnesses.base import HarnessContext, HarnessResult
from probegate.harnesses.schemas import tool_function
from probegate.harnesses.tools_client import ToolsClient
from probegate.errors import UsageError

EXTRA_HINT = "pip install 'probegate[frameworks]'"

Api = Literal["responses", "chat"]


def require_agents_sdk() -> None:
    """Check that the OpenAI Agents SDK imports.

    Raises:
        UsageError: it is missing (one line naming the extra to install).
    """
    try:
        import agents  # noqa: F401
    except ImportError as exc:
        raise UsageError(
            f"the openai-agents harnesses need the OpenAI Agents SDK ({exc.name} is missing): {EXTRA_HINT}"
        ) from exc


def probe_tools(ctx: HarnessContext, client: ToolsClient) -> list[Any]:
    """SDK ``FunctionTool``s, one per offered tool, calling the probes.

    Each tool's ``params_json_schema`` is the probe's JSON Schema as served
    (``strict_json_schema=False``: the SDK's strict mode would rewrite it, making
    optional parameters required). The tool's output is the probe's JSON answer,
    errors included (:meth:`~probegate.harnesses.tools_client.Observation.text`).
    """
    from agents import FunctionTool

    def invoker(name: str) -> Any:
        async def invoke(_context: Any, arguments: str) -> str:
            observation = await asyncio.to_thread(client.call, name, arguments or "{}")
            return observation.text()

        return invoke

    tools = []
    for tool in ctx.tools:
        fn = tool_function(tool)
        tools.append(
            FunctionTool(
                name=fn["name"],
                description=fn.get("description") or fn["name"],
                params_json_schema=fn.get("parameters") or {"type": "object", "properties": {}},
                on_invoke_tool=invoker(fn["name"]),
                strict_json_schema=False,
            )
        )
    return tools


class OpenAIAgentsHarness:
    """An Agents SDK agent driving the attempt.

    Args:
        api: ``responses`` (``OpenAIResponsesModel``, harness ``openai-agents``) or
            ``chat`` (``OpenAIChatCompletionsModel``, harness ``openai-agents-chat``).
    """

    def __init__(self, api: Api = "responses") -> None:
        self.api = api
        self.name = "openai-agents" if api == "responses" else "openai-agents-chat"

    def check(self) -> None:
        """Raise :class:`UsageError` when the extra is missing."""
        require_agents_sdk()

    def run(self, ctx: HarnessContext) -> HarnessResult:
        """Drive one attempt; see :class:`~probegate.harnesses.base.Harness`."""
        return asyncio.run(self._run(ctx))

    async def _run(self, ctx: HarnessContext) -> HarnessResult:
        import openai
        from agents import Agent, MaxTurnsExceeded, ModelSettings, RunConfig, Runner, set_tracing_disabled

        set_tracing_disabled(True)
        model_client = openai.AsyncOpenAI(
            base_url=ctx.model_base_url, api_key=ctx.api_key, timeout=ctx.timeout, max_retries=0
        )
        try:
            with ToolsClient(ctx.tools_url, timeout=ctx.timeout) as client:
                agent = Agent(
                    name="Assistant",
                    instructions=ctx.system,
                    tools=probe_tools(ctx, client),
                    model=self.model(ctx, model_client),
                    model_settings=ModelSettings(temperature=ctx.temperature),
                )
                run = Runner.run(agent, ctx.prompt, max_turns=ctx.max_steps, run_config=RunConfig(tracing_disabled=True))
                try:
                    result = await asyncio.wait_for(run, ctx.timeout)
                except MaxTurnsExceeded:
                    return HarnessResult(
                        None, "max_steps", f"the Agents SDK hit max_turns ({ctx.max_steps} turns)", ctx.max_steps
                    )
                except (openai.APITimeoutError, TimeoutError):
                    return HarnessResult(None, "timeout", f"the Agents SDK ran past the attempt's {ctx.timeout:g} s")
                except Exception as exc:  # the framework's own failure is the measurement
                    return HarnessResult(
                        None, "error", f"the Agents SDK raised {type(exc).__name__}: {str(exc)[:500]}"
                    )
        finally:
            await model_client.close()
        return outcome(result)

    def model(self, ctx: HarnessContext, model_client: Any) -> Any:
        """The SDK model object for :attr:`api` over ``model_client``."""
        from agents import OpenAIChatCompletionsModel, OpenAIResponsesModel

        if self.api == "chat":
            return OpenAIChatCompletionsModel(model=ctx.model, openai_client=model_client)
        return OpenAIResponsesModel(model=ctx.model, openai_client=model_client)


def outcome(result: Any) -> HarnessResult:
    """The attempt's result from the SDK's ``RunResult``: ``final_output`` as the answer,
    one step per model response (``raw_responses``)."""
    steps = len(getattr(result, "raw_responses", None) or [])
    final = result.final_output
    answer = (final if isinstance(final, str) else "" if final is None else str(final)).strip()
    if not answer:
        return HarnessResult(None, "parse_failure", "the Agents SDK ended without a text answer", steps)
    return HarnessResult(answer, "answered", None, steps)
