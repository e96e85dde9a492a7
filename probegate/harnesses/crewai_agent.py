"""``crewai``: a real CrewAI agent (one ``Agent``, one ``Task``, one ``Crew``) whose
``LLM`` has its ``base_url`` at the gateway.

CrewAI's own code path, unmodified: we provide the tools (``BaseTool`` subclasses
built from the probes' schemas, calling the probe endpoints) and turn off CrewAI's
telemetry, tracing and version check through its documented environment
variables before it is imported (this box has no network, and those would be
traffic the run did not ask for). Known interop fault, recorded as is: after a
tool call CrewAI 1.15 sends ``{"role": "assistant", "content": null, "tool_calls":
[...]}``, which llama-cpp-python's server answers with HTTP 500.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

from probegate.harnesses.base import HarnessContext, HarnessResult
from probegate.harnesses.schemas import tool_function
from probegate.harnesses.tools_client import ToolsClient
from probegate.errors import UsageError

EXTRA_HINT = "pip install 'probegate[frameworks]'"

#: CrewAI's documented opt-outs, set (unless the user set them) before importing it.
QUIET_ENV = {
    "CREWAI_DISABLE_TELEMETRY": "true",
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "CREWAI_DISABLE_VERSION_CHECK": "true",
}

_JSON_TYPES: dict[str, Any] = {
    "string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict,
}


#: CrewAI loggers that repeat one warning on every model call; each message is shown once.
REPEATING_LOGGERS = ("crewai.llms.base_llm",)


class OnceFilter(logging.Filter):
    """Let each distinct message through once per process, drop its repeats.

    CrewAI 1.15 warns "Using an approximate input token count for model ..." before
    its model calls (often more than once per call) when it has no token counter for
    the model, as for any local model: 481 lines for the 287 model calls of CrewAI's
    leg of the README's main command, burying the run's own output. The first still
    shows. Thread-safe enough: a race shows a message twice at worst.
    """

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in self.seen:
            return False
        self.seen.add(message)
        return True


def _quiet() -> None:
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)
    for name in REPEATING_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, OnceFilter) for f in logger.filters):
            logger.addFilter(OnceFilter())


def require_crewai() -> None:
    """Check that CrewAI imports.

    Raises:
        UsageError: it is missing (one line naming the extra to install).
    """
    _quiet()
    try:
        import crewai  # noqa: F401
    except ImportError as exc:
        raise UsageError(f"the crewai harness needs CrewAI ({exc.name} is missing): {EXTRA_HINT}") from exc


def args_model(name: str, schema: dict[str, Any]) -> Any:
    """A pydantic model for a tool's JSON Schema parameters (CrewAI wants one).

    Types map one level deep (``string`` -> ``str``, ...; anything else ``Any``);
    optional parameters default to ``None``. The probe does the real validation.
    """
    from pydantic import Field, create_model

    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    fields: dict[str, Any] = {}
    for key, spec in props.items():
        kind = _JSON_TYPES.get(spec.get("type"), Any) if isinstance(spec.get("type"), str) else Any
        description = spec.get("description") or key
        if key in required:
            fields[key] = (kind, Field(..., description=description))
        else:
            fields[key] = (kind | None, Field(None, description=description))
    return create_model(f"{name}_args", **fields)


def probe_tools(ctx: HarnessContext, client: ToolsClient) -> list[Any]:
    """CrewAI tools, one per offered tool, calling the probes."""
    from crewai.tools import BaseTool

    tools = []
    for tool in ctx.tools:
        fn = tool_function(tool)

        def _run(self: Any, **arguments: Any) -> str:
            sent = {k: v for k, v in arguments.items() if v is not None}
            return client.call(self.name, sent).text()

        cls = type(f"Probe_{fn['name']}", (BaseTool,), {"_run": _run, "__annotations__": {}})
        tools.append(
            cls(
                name=fn["name"],
                description=fn.get("description") or fn["name"],
                args_schema=args_model(fn["name"], fn.get("parameters") or {}),
            )
        )
    return tools


class CrewAIHarness:
    """A one-agent crew driving the attempt."""

    name = "crewai"

    def check(self) -> None:
        """Raise :class:`UsageError` when the extra is missing."""
        require_crewai()

    def run(self, ctx: HarnessContext) -> HarnessResult:
        """Drive one attempt; see :class:`~probegate.harnesses.base.Harness`."""
        _quiet()
        from crewai import LLM, Agent, Crew, Task

        llm = LLM(
            model=f"openai/{ctx.model}",
            base_url=ctx.model_base_url,
            api_key=ctx.api_key,
            temperature=ctx.temperature,
            timeout=ctx.timeout,
            max_retries=0,
        )
        with self.tool_source(ctx) as tools:
            agent = Agent(
                role="Assistant",
                goal="Complete the user's request with the tools available.",
                backstory=ctx.system or "You are a careful assistant who uses tools to get facts right.",
                llm=llm,
                max_iter=ctx.max_steps,
                allow_delegation=False,
                verbose=False,
                **tools,
            )
            task = Task(description=ctx.prompt, expected_output="The answer to the user's request.", agent=agent)
            try:
                output = Crew(agents=[agent], tasks=[task], verbose=False).kickoff()
            except Exception as exc:  # the framework's own failure is the measurement
                return HarnessResult(None, "error", f"CrewAI raised {type(exc).__name__}: {str(exc)[:500]}")
        answer = (getattr(output, "raw", None) or str(output) or "").strip()
        if not answer:
            return HarnessResult(None, "parse_failure", "CrewAI ended without an answer")
        return HarnessResult(answer, "answered")

    @contextlib.contextmanager
    def tool_source(self, ctx: HarnessContext) -> Iterator[dict[str, Any]]:
        """The ``Agent`` keyword arguments that give it its tools: ``tools``, probe-backed."""
        with ToolsClient(ctx.tools_url, timeout=ctx.timeout) as client:
            yield {"tools": probe_tools(ctx, client)}
