"""``react``: the Thought / Action / Action Input text protocol, read tolerantly.

No ``tools`` field is sent: the tools are described in the system text and the
model writes its actions as text, read by :func:`probegate.harnesses.react_parser.read_react_reply`.
Observations come back as ``Observation: <probe JSON>`` user turns. When a turn
cannot be read, the model gets a short corrective message instead of the attempt
ending, up to :data:`MAX_CORRECTIONS` times in a row.
"""

from __future__ import annotations

from probegate.harnesses.ablation import COMPLETION_CHECK, Ablation, AttemptAblation
from probegate.harnesses.base import Deadline, HarnessContext, HarnessResult, out_of_steps, timed_out
from probegate.harnesses.chat import ModelCallError, complete, model_client, with_system
from probegate.harnesses.react_parser import ReactReply, read_react_reply
from probegate.harnesses.schemas import describe_tools, schemas_of
from probegate.harnesses.tools_client import ToolsClient

REACT_SYSTEM = """Answer the user's request as best you can. You have access to the following tools:

{tools}

Use this format:

Thought: think about what to do next
Action: the tool to use, one of [{tool_names}]
Action Input: the tool's arguments as a JSON object
Observation: the tool's result (written for you; never write it yourself)
... (Thought / Action / Action Input / Observation can repeat)
Thought: I now know the final answer
Final Answer: the final answer to the user's request"""

CORRECTION = """{problem}. Reply in the format:
Thought: ...
Action: one of [{tool_names}]
Action Input: {{"key": "value"}}
or, when you are done:
Final Answer: ..."""

#: Corrective messages in a row before the attempt ends with ``parse_failure``.
MAX_CORRECTIONS = 2


def correction(problem: str | None, tool_names: str) -> str:
    """The corrective message for a turn that could not be read."""
    text = problem or "your reply could not be read"
    return CORRECTION.format(problem=text[:1].upper() + text[1:], tool_names=tool_names)


class ReactHarness:
    """The tolerant ReAct loop.

    Args:
        system: the system template (``{tools}`` and ``{tool_names}`` filled in).
        max_corrections: corrective messages in a row before giving up.
        ablation: the run's ``--protocol`` / ``--memory`` (default: both off).
    """

    name = "react"

    def __init__(
        self, system: str = REACT_SYSTEM, max_corrections: int = MAX_CORRECTIONS, ablation: Ablation | None = None
    ) -> None:
        self.system = system
        self.max_corrections = max_corrections
        self.ablation = ablation or Ablation()

    def run(self, ctx: HarnessContext) -> HarnessResult:
        """Drive one attempt; see :class:`~probegate.harnesses.base.Harness`."""
        deadline = Deadline(ctx)
        names = ", ".join(ctx.tool_names())
        schemas = schemas_of(ctx.tools)
        messages = with_system(ctx, self.system.format(tools=describe_tools(ctx.tools), tool_names=names))
        client = model_client(ctx)
        corrections = 0
        aids = self.ablation.start(ctx.max_steps)
        step = 0
        with ToolsClient(ctx.tools_url, timeout=ctx.timeout) as tools:
            while step < ctx.max_steps + aids.extra_turns:
                step += 1
                try:
                    reply = complete(client, ctx, deadline, aids.request(messages, step), stop=["\nObservation:"])
                except ModelCallError as exc:
                    return exc.result(step - 1)
                content = reply.get("content") or ""
                parsed = read_react_reply(content, schemas)
                messages.append({"role": "assistant", "content": content})
                if parsed.kind == "final" and aids.check_before_answer(parsed.answer):
                    messages.append({"role": "user", "content": COMPLETION_CHECK})
                    continue
                if parsed.kind == "final" or (aids.answering_check and parsed.kind != "action"):
                    # a reply to the completion check that takes no action keeps the earlier answer
                    answer = aids.final_answer(parsed.answer if parsed.kind == "final" else None)
                    return HarnessResult(answer, "answered", None, step)
                if parsed.kind == "action":
                    corrections = 0
                    messages.append({"role": "user", "content": self._observe(tools, parsed, aids)})
                else:
                    corrections += 1
                    if corrections > self.max_corrections:
                        return HarnessResult(None, "parse_failure", parsed.problem, step)
                    messages.append({"role": "user", "content": correction(parsed.problem, names)})
                if deadline.expired():
                    return timed_out(step)
        return out_of_steps(step)

    @staticmethod
    def _observe(tools: ToolsClient, parsed: ReactReply, aids: AttemptAblation) -> str:
        observation = tools.call(parsed.tool or "", parsed.arguments or {})
        aids.observe(observation.tool, parsed.arguments or {}, observation.ok, observation.body)
        return f"Observation: {observation.text()}"
