"""Delegation: the master/sub-agent pattern, where a sub-agent is one more tool.

Probes never call a model. ``delegate`` hands the sub-task to the sub-agent runner
the service was given (the runner (probegate.runner) injects one that drives a
sub-agent through the gateway, on the same run, task and attempt, so the
sub-agent's own tool calls land in the same world and probe log). Without a
runner the call is a tool error, logged like any other.
"""

from __future__ import annotations

from typing import Any

from probegate.probes.catalog import _schema as s
from probegate.probes.tool import SubAgentRequest, ToolContext, ToolError, tool

DOMAIN = "delegation"


@tool(
    "delegate",
    DOMAIN,
    "Hand a self-contained sub-task to a sub-agent and get its final answer as text. The sub-agent sees only "
    "the task text you write (include every id, address and constraint it needs) and may use the listed tools. "
    "Do NOT use it for a single tool call you can make yourself.",
    s.params(
        ["task"],
        task=s.text("The sub-task, complete and self-contained.", 5000),
        tools=s.array(s.string("Tool name.", pattern=r"^[a-z][a-z0-9_]{0,63}$"), "Tools the sub-agent may use "
                      "(default: all tools offered here except delegate)."),
    ),
    returns="task, tools, result (the sub-agent's final answer, text)",
    blocking=True,
)
def delegate(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    if ctx.subagent is None:
        raise ToolError("unavailable", "delegation unavailable: no sub-agent runner configured")
    allowed = tuple(t for t in ctx.offered if t != "delegate")
    wanted = tuple(args.get("tools", allowed))
    unknown = [t for t in wanted if t not in allowed]
    if unknown:
        raise ToolError("unknown_tools", f"not available to a sub-agent: {', '.join(unknown)}",
                        f"choose from: {', '.join(allowed)}")
    request = SubAgentRequest(ctx.run, ctx.task, ctx.attempt, args["task"], wanted, ctx.feedback, ctx.seq)
    try:
        answer = ctx.subagent(request)
    except Exception as exc:  # the runner's failure is the tool's failure, reported to the agent
        raise ToolError("subagent_failed", f"the sub-agent failed: {type(exc).__name__}: {exc}") from exc
    return {"task": args["task"], "tools": list(wanted), "result": str(answer)}


TOOLS = [delegate]
