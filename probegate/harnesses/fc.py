"""``fc``: strict OpenAI function calling (``tools`` / ``tool_calls``).

Every turn either calls tools through ``tool_calls`` with arguments that are a JSON
object, or answers in text without calls. Anything else (arguments that are not
strict JSON, an empty reply) ends the attempt with ``parse_failure``: this is the
loop a strict framework runs, and it shows how a model fares under one.
"""

from __future__ import annotations

import json
from typing import Any

from probegate.harnesses.ablation import COMPLETION_CHECK, Ablation, AttemptAblation
from probegate.harnesses.base import Deadline, HarnessContext, HarnessResult, out_of_steps, timed_out
from probegate.harnesses.chat import (
    ModelCallError,
    assistant_turn,
    complete,
    model_client,
    with_system,
)
from probegate.harnesses.tools_client import ToolsClient

FC_SYSTEM = (
    "You are a helpful assistant that completes the user's request with the tools provided. "
    "Call tools whenever they are needed; when you have everything, answer the user in plain text."
)


def call_problem(call: dict[str, Any]) -> str | None:
    """Why a ``tool_calls`` entry is not a valid call (``None`` when it is).

    A valid call has a function name and arguments that parse as a strict JSON object.
    """
    fn = call.get("function") or {}
    if not fn.get("name"):
        return "a tool call without a function name"
    raw = fn.get("arguments")
    if raw is None or raw == "":
        return None
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return f"arguments of {fn['name']} are not valid JSON: {str(raw)[:200]!r}"
    if not isinstance(value, dict):
        return f"arguments of {fn['name']} are not a JSON object: {str(raw)[:200]!r}"
    return None


def _raw_arguments(call: dict[str, Any]) -> str:
    raw = (call.get("function") or {}).get("arguments")
    if raw is None or raw == "":
        return "{}"
    return raw if isinstance(raw, str) else json.dumps(raw)


class FcHarness:
    """The strict function-calling loop.

    Args:
        system: system text (the task's own system text is appended).
        ablation: the run's ``--protocol`` / ``--memory`` (default: both off).
    """

    name = "fc"

    def __init__(self, system: str = FC_SYSTEM, ablation: Ablation | None = None) -> None:
        self.system = system
        self.ablation = ablation or Ablation()

    def run(self, ctx: HarnessContext) -> HarnessResult:
        """Drive one attempt; see :class:`~probegate.harnesses.base.Harness`."""
        deadline = Deadline(ctx)
        messages = with_system(ctx, self.system)
        client = model_client(ctx)
        aids = self.ablation.start(ctx.max_steps)
        step = 0
        with ToolsClient(ctx.tools_url, timeout=ctx.timeout) as tools:
            while step < ctx.max_steps + aids.extra_turns:
                step += 1
                try:
                    reply = complete(client, ctx, deadline, aids.request(messages, step), tools=ctx.tools or None)
                except ModelCallError as exc:
                    return exc.result(step - 1)
                outcome = self._handle(reply, messages, tools, step, aids)
                if outcome is not None:
                    return outcome
                if deadline.expired():
                    return timed_out(step)
        return out_of_steps(step)

    def _handle(
        self, reply: dict[str, Any], messages: list[dict[str, Any]], tools: ToolsClient, step: int,
        aids: AttemptAblation,
    ) -> HarnessResult | None:
        calls = reply.get("tool_calls") or []
        if not calls:
            content = (reply.get("content") or "").strip()
            if content and aids.check_before_answer(content):
                messages.append(assistant_turn(reply))
                messages.append({"role": "user", "content": COMPLETION_CHECK})
                return None
            answer = aids.final_answer(content)
            if answer:
                return HarnessResult(answer, "answered", None, step)
            return HarnessResult(None, "parse_failure", "the reply held neither a tool call nor an answer", step)
        for call in calls:
            problem = call_problem(call)
            if problem:
                return HarnessResult(None, "parse_failure", problem, step)
        messages.append(assistant_turn(reply))
        for call in calls:
            observation = tools.call(call["function"]["name"], _raw_arguments(call))
            aids.observe(observation.tool, _raw_arguments(call), observation.ok, observation.body)
            messages.append({"role": "tool", "tool_call_id": call.get("id") or "", "content": observation.text()})
        return None
