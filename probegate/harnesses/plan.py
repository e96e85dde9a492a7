"""``plan``: plan first, then execute step by step, re-planning when a step fails.

Turn 1 asks for a numbered plan (tools described, none offered, so the model
plans instead of acting). Each plan step is then one user turn ("Step 2 of 4: ...")
answered with tool calls, read tolerantly: structured ``tool_calls`` (arguments
repaired, or sent raw so the probe judges them) or calls written in the text.
Results go back as tool messages. When a call fails (any probe status but 200),
the model writes a new plan for the remaining work, at most :data:`MAX_REPLANS`
times. After the last step the model gives its final answer. It all stays one
conversation, so the scorer sees one thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from probegate.harnesses.ablation import COMPLETION_CHECK, Ablation
from probegate.harnesses.base import Deadline, HarnessContext, HarnessResult, out_of_steps
from probegate.harnesses.chat import (
    ModelCallError,
    assistant_turn,
    complete,
    model_client,
    with_system,
)
from probegate.harnesses.schemas import describe_tools
from probegate.harnesses.tools_client import Observation, ToolsClient
from probegate.wire.content_calls import detect_content_calls

PLAN_SYSTEM = """You solve the user's request in two phases: first you plan, then you execute the plan.
Tools you can use:

{tools}"""

PLAN_REQUEST = (
    "First write a short numbered plan (1., 2., ...) of the steps needed, one tool call per step "
    "where a tool is needed. Do not execute anything yet."
)
PLAN_AGAIN = "Write the plan as a numbered list: one line per step, starting with 1."
STEP = (
    "Step {number} of {total}: {step}\n"
    "Carry out this step now: call the tool it needs, or, if it needs none, say its result."
)
REPLAN = (
    "Step {number} failed: {observation}\n"
    "Write a new numbered plan for the remaining work (leave out steps that already succeeded)."
)
FINAL = "All steps are done. Now give your final answer to the user's request."

#: Re-plans allowed per attempt.
MAX_REPLANS = 2

_STEP_LINE = re.compile(r"^\s*(?:[*#]+\s*)?(?:step\s*)?(\d{1,2})\s*[.):\]-]\s*(?:\*\*)?\s*(.+?)\s*$", re.I | re.M)
_BULLET = re.compile(r"^\s*[-*\u2022]\s+(.+?)\s*$", re.M)
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)


def parse_plan(text: str | None) -> list[str]:
    """The steps of a plan: numbered lines (``1.``, ``2)``, ``Step 3:``), else bullets.

    Returns:
        Step texts in order; ``[]`` when the text holds no list.
    """
    body = _THINK.sub("", text or "")
    steps = [m.group(2).strip("* ") for m in _STEP_LINE.finditer(body)]
    if not steps:
        steps = [m.group(1).strip() for m in _BULLET.finditer(body)]
    return [s for s in steps if s]


@dataclass(frozen=True)
class ToolCall:
    """A call to execute: ``arguments`` is the raw text or a parsed dict."""

    name: str
    arguments: Any
    call_id: str | None


def calls_in(reply: dict[str, Any], tools: list[dict[str, Any]]) -> list[ToolCall]:
    """The calls a reply makes: structured ``tool_calls`` first, else calls in the text."""
    structured = [
        ToolCall(c["function"].get("name", ""), c["function"].get("arguments") or "{}", c.get("id"))
        for c in reply.get("tool_calls") or []
        if isinstance(c.get("function"), dict)
    ]
    if structured:
        return structured
    found, _ = detect_content_calls(reply.get("content"), {"tools": tools})
    return [ToolCall(c.name, c.arguments if c.arguments is not None else c.raw, None) for c in found]


class PlanHarness:
    """Plan, execute, re-plan on failure.

    Args:
        max_replans: re-plans allowed per attempt.
        ablation: the run's ``--protocol`` / ``--memory`` (default: both off).
    """

    name = "plan"

    def __init__(self, max_replans: int = MAX_REPLANS, ablation: Ablation | None = None) -> None:
        self.max_replans = max_replans
        self.ablation = ablation or Ablation()

    def run(self, ctx: HarnessContext) -> HarnessResult:
        """Drive one attempt; see :class:`~probegate.harnesses.base.Harness`."""
        session = _Session(ctx, self.ablation)
        try:
            return session.run(self.max_replans)
        except ModelCallError as exc:
            return exc.result(session.turns)
        except _OutOfSteps:
            return out_of_steps(session.turns)
        finally:
            session.tools.close()


class _OutOfSteps(Exception):
    pass


class _Session:
    """The state of one plan attempt: the conversation and its turn budget."""

    def __init__(self, ctx: HarnessContext, ablation: Ablation) -> None:
        self.ctx = ctx
        self.aids = ablation.start(ctx.max_steps)
        self.deadline = Deadline(ctx)
        self.client = model_client(ctx)
        self.tools = ToolsClient(ctx.tools_url, timeout=ctx.timeout)
        self.messages = with_system(ctx, PLAN_SYSTEM.format(tools=describe_tools(ctx.tools)))
        self.messages[-1] = {"role": "user", "content": f"{ctx.prompt}\n\n{PLAN_REQUEST}"}
        self.turns = 0

    def ask(self, text: str | None, *, offer_tools: bool) -> dict[str, Any]:
        if self.turns >= self.ctx.max_steps + self.aids.extra_turns:
            raise _OutOfSteps
        if text is not None:
            self.messages.append({"role": "user", "content": text})
        options = {"tools": self.ctx.tools} if offer_tools and self.ctx.tools else {}
        request = self.aids.request(self.messages, self.turns + 1)
        reply = complete(self.client, self.ctx, self.deadline, request, **options)
        self.turns += 1
        self.messages.append(assistant_turn(reply))
        return reply

    def plan(self, prompt: str | None) -> list[str]:
        steps = parse_plan(self.ask(prompt, offer_tools=False).get("content"))
        if not steps:
            steps = parse_plan(self.ask(PLAN_AGAIN, offer_tools=False).get("content"))
        return steps or [self.ctx.prompt]

    def run(self, max_replans: int) -> HarnessResult:
        steps, replans, number = self.plan(None), 0, 0
        while number < len(steps):
            reply = self.ask(STEP.format(number=number + 1, total=len(steps), step=steps[number]), offer_tools=True)
            failed = self.execute(reply)
            if failed is not None and replans < max_replans:
                replans += 1
                # the new plan replaces the failed step and everything after it
                steps = steps[:number] + self.plan(REPLAN.format(number=number + 1, observation=failed.text()))
                continue
            number += 1
        return self.finish()

    def execute(self, reply: dict[str, Any]) -> Observation | None:
        """Run the reply's calls; returns the first failed observation, if any."""
        calls = calls_in(reply, self.ctx.tools)
        failed = None
        for call in calls:
            observation = self.tools.call(call.name, call.arguments)
            self.aids.observe(observation.tool, call.arguments, observation.ok, observation.body)
            failed = failed or (None if observation.ok else observation)
            if call.call_id is not None:
                self.messages.append({"role": "tool", "tool_call_id": call.call_id, "content": observation.text()})
            else:
                self.messages.append({"role": "user", "content": f"Result of {call.name}: {observation.text()}"})
        return failed

    def finish(self) -> HarnessResult:
        prompt: str | None = FINAL
        while True:
            reply = self.ask(prompt, offer_tools=True)
            if calls_in(reply, self.ctx.tools):
                self.execute(reply)
                prompt = FINAL
                continue
            content = (reply.get("content") or "").strip()
            if content and self.aids.check_before_answer(content):
                prompt = COMPLETION_CHECK
                continue
            answer = self.aids.final_answer(content)
            if answer:
                return HarnessResult(answer, "answered", None, self.turns)
            return HarnessResult(None, "parse_failure", "the final reply was empty", self.turns)

