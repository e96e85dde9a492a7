"""``langchain``: a real LangChain agent (``langchain.agents.create_agent`` over
``langchain_openai.ChatOpenAI``) with its ``base_url`` at the gateway.

This is LangChain's own code path, unmodified: no callbacks, middleware or patches
of ours. The only thing we provide is the tools, built from the probes' OpenAI
schemas (passed to LangChain as JSON Schema, so the model sees exactly what the
probe validates) and calling the probe endpoints; the probe's JSON answer, errors
included, is the tool's output. LangChain is imported lazily: it lives in the
``frameworks`` extra.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from probegate.harnesses.base import HarnessContext, HarnessResult
from probegate.harnesses.schemas import tool_function
from probegate.harnesses.tools_client import ToolsClient
from probegate.errors import UsageError

EXTRA_HINT = "pip install 'probegate[frameworks]'"


def require_langchain() -> None:
    """Check that LangChain and langchain-openai import.

    Raises:
        UsageError: they are missing (one line naming the extra to install).
    """
    try:
        import langchain.agents  # noqa: F401
        import langchain_openai  # noqa: F401
    except ImportError as exc:
        raise UsageError(f"the langchain harness needs LangChain ({exc.name} is missing): {EXTRA_HINT}") from exc


def probe_tools(ctx: HarnessContext, client: ToolsClient) -> list[Any]:
    """LangChain ``StructuredTool``s, one per offered tool, calling the probes."""
    from langchain_core.tools import StructuredTool

    def caller(name: str) -> Any:
        def call(**arguments: Any) -> str:
            return client.call(name, arguments).text()

        return call

    tools = []
    for tool in ctx.tools:
        fn = tool_function(tool)
        tools.append(
            StructuredTool.from_function(
                func=caller(fn["name"]),
                name=fn["name"],
                description=fn.get("description") or fn["name"],
                args_schema=fn.get("parameters") or {"type": "object", "properties": {}},
            )
        )
    return tools


def _final_text(messages: list[Any]) -> str | None:
    for message in reversed(messages):
        if getattr(message, "type", None) == "ai":
            text = message.text if isinstance(message.text, str) else message.text()
            return text.strip() or None
    return None


class LangChainHarness:
    """A LangChain ``create_agent`` agent driving the attempt."""

    name = "langchain"

    def check(self) -> None:
        """Raise :class:`UsageError` when the extra is missing."""
        require_langchain()

    def run(self, ctx: HarnessContext) -> HarnessResult:
        """Drive one attempt; see :class:`~probegate.harnesses.base.Harness`."""
        from langchain.agents import create_agent

        with ToolsClient(ctx.tools_url, timeout=ctx.timeout) as client:
            agent = create_agent(chat_model(ctx), probe_tools(ctx, client), system_prompt=ctx.system)
            with agent_failures(ctx) as failed:
                state = agent.invoke(first_input(ctx), config=run_config(ctx))
        return failed[0] if failed else outcome(state)


def chat_model(ctx: HarnessContext) -> Any:
    """``ChatOpenAI`` at the attempt's model URL (no retries: a failure is the measurement)."""
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=ctx.model,
        base_url=ctx.model_base_url,
        api_key=ctx.api_key,  # type: ignore[arg-type]
        temperature=ctx.temperature,
        timeout=ctx.timeout,
        max_retries=0,
    )


def first_input(ctx: HarnessContext) -> dict[str, Any]:
    """The agent's input: the user's request as the only message."""
    return {"messages": [{"role": "user", "content": ctx.prompt}]}


def run_config(ctx: HarnessContext) -> dict[str, Any]:
    """The run config: a model turn and its tools are 2 graph steps."""
    return {"recursion_limit": 2 * ctx.max_steps}


@contextlib.contextmanager
def agent_failures(ctx: HarnessContext) -> Iterator[list[HarnessResult]]:
    """Turn what LangChain raises into a :class:`HarnessResult`, appended to the yielded list."""
    import openai
    from langgraph.errors import GraphRecursionError

    failed: list[HarnessResult] = []
    try:
        yield failed
    except GraphRecursionError:
        failed.append(HarnessResult(None, "max_steps", f"LangChain hit its recursion limit ({ctx.max_steps} turns)"))
    except openai.APITimeoutError as exc:
        failed.append(HarnessResult(None, "timeout", f"LangChain: {exc}"))
    except TimeoutError:
        failed.append(HarnessResult(None, "timeout", f"LangChain ran past the attempt's {ctx.timeout:g} s"))
    except Exception as exc:  # the framework's own failure is the measurement
        failed.append(HarnessResult(None, "error", f"LangChain raised {type(exc).__name__}: {str(exc)[:500]}"))


def outcome(state: dict[str, Any]) -> HarnessResult:
    """The attempt's result from the agent's final state."""
    messages = state.get("messages", [])
    answer = _final_text(messages)
    steps = sum(1 for m in messages if getattr(m, "type", None) == "ai")
    if answer is None:
        return HarnessResult(None, "parse_failure", "LangChain ended without a text answer", steps)
    return HarnessResult(answer, "answered", None, steps)
