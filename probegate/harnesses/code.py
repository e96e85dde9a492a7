"""``code``: the model writes Python that calls the tools as functions.

Tools are shown as Python stubs (``def query_stock(sku: str) -> dict``). The
model's code block runs in :func:`probegate.harnesses.sandbox.run_sandboxed`, where each tool
is a function the harness relays to the probe; what the code prints is the answer. When the
code raises or prints nothing, the error goes back to the model for another try;
when the sandbox stops it (a limit, a blocked operation), the attempt ends with
``error`` and the sandbox's reason.

The code runs under bubblewrap (:mod:`probegate.harnesses.sandbox_isolation`); the
harness refuses to start without it unless built with ``isolated=False``
(``probegate run --unsafe-no-sandbox``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import Any

from probegate.harnesses.ablation import COMPLETION_CHECK, Ablation, AttemptAblation
from probegate.harnesses.base import Deadline, HarnessContext, HarnessResult, out_of_steps, timed_out
from probegate.harnesses.chat import ModelCallError, complete, model_client, with_system
from probegate.errors import UsageError
from probegate.harnesses.sandbox import SandboxLimits, SandboxResult, run_sandboxed
from probegate.harnesses.sandbox_isolation import SandboxUnavailable, check_isolation
from probegate.harnesses.schemas import python_signature
from probegate.harnesses.tools_client import Observation

CODE_SYSTEM = """You solve the user's request by writing Python.
These functions are already defined; call them directly (do not define or import them):

{signatures}

Each returns the tool's JSON result as a Python value. A call the tool refuses raises ToolError, whose message
says why. Reply with one ```python code block. It runs once, with the standard library only and no file or
network access except these functions. print() the final answer for the user: only what the code prints is
shown to them."""

NO_CODE = "Reply with one ```python code block that calls the functions and prints the final answer."
FAILED = "Your code failed:\n{error}\nFix it and reply with a new ```python code block."
SILENT = "Your code printed nothing. print() the final answer for the user, in a new ```python code block."
#: The completion check of ``--protocol steps``, as the code harness asks it (after the code printed an answer).
CHECK = (
    "Your code printed:\n{stdout}\n\n" + COMPLETION_CHECK + "\n"
    "(To call a tool, reply with a new ```python code block that calls it and prints the final answer; "
    "if everything is done, reply without code.)"
)

#: Replies in a row without a code block before the attempt ends with ``parse_failure``.
MAX_CORRECTIONS = 2

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)


def extract_code(text: str | None) -> str | None:
    """The code in a reply: the first ```python fence, else the first fence, else the
    whole reply when it parses as Python that calls something; ``None`` otherwise."""
    body = _THINK.sub("", text or "").strip()
    fences = [(str(lang).lower(), str(code).strip()) for lang, code in _FENCE.findall(body)]
    for lang, code in fences:
        if lang in ("python", "py", "python3") and code:
            return code
    for _, code in fences:
        if code:
            return code
    try:
        tree = ast.parse(body)
    except (SyntaxError, ValueError):
        return None
    return body if body and any(isinstance(n, ast.Call) for n in ast.walk(tree)) else None


def feedback(result: SandboxResult) -> str | None:
    """The message for a run that did not answer (``None`` when it answered)."""
    if not result.ok:
        return FAILED.format(error=(result.stderr.strip() or f"exit status {result.exit_code}")[-2000:])
    if not result.stdout.strip():
        return SILENT
    return None


class CodeHarness:
    """Write code, run it sandboxed, print the answer.

    Args:
        limits: the sandbox's bounds (the wall-clock limit is also capped by the
            attempt's remaining time).
        isolated: run the code under bubblewrap; ``False`` keeps only the audit
            hook and the limits (unsafe: for machines without bubblewrap).
        ablation: the run's ``--protocol`` / ``--memory`` (default: both off).
    """

    name = "code"

    def __init__(
        self, limits: SandboxLimits | None = None, *, isolated: bool = True, ablation: Ablation | None = None
    ) -> None:
        self.limits = limits or SandboxLimits()
        self.isolated = isolated
        self.ablation = ablation or Ablation()

    def check(self) -> None:
        """Refuse to run where the sandbox cannot start (the registry calls this first).

        Raises:
            UsageError: bubblewrap is missing or cannot start a sandbox here (one line:
                what is missing, how to install it, and the unsafe flag).
        """
        if not self.isolated:
            return
        try:
            check_isolation()
        except SandboxUnavailable as exc:
            raise UsageError(str(exc)) from None

    def run(self, ctx: HarnessContext) -> HarnessResult:
        """Drive one attempt; see :class:`~probegate.harnesses.base.Harness`."""
        deadline = Deadline(ctx)
        signatures = "\n\n".join(python_signature(t) for t in ctx.tools)
        messages = with_system(ctx, CODE_SYSTEM.format(signatures=signatures))
        client = model_client(ctx)
        corrections = 0
        aids = self.ablation.start(ctx.max_steps)
        step = 0
        while step < ctx.max_steps + aids.extra_turns:
            step += 1
            try:
                reply = complete(client, ctx, deadline, aids.request(messages, step))
            except ModelCallError as exc:
                return exc.result(step - 1)
            content = reply.get("content") or ""
            messages.append({"role": "assistant", "content": content})
            code = extract_code(content)
            if code is None and aids.answering_check:
                # the reply to the completion check wrote no code: the earlier printed answer stands
                return HarnessResult(aids.first_answer, "answered", None, step)
            if code is None:
                corrections += 1
                if corrections > MAX_CORRECTIONS:
                    return HarnessResult(None, "parse_failure", "the reply held no Python code", step)
                messages.append({"role": "user", "content": NO_CODE})
                continue
            corrections = 0
            result = self._execute(code, ctx, deadline, aids)
            if result.stopped:
                return HarnessResult(None, "error", f"the sandbox stopped the code: {result.stopped}", step)
            message = feedback(result)
            if message is None and aids.check_before_answer(result.stdout.strip()):
                message = CHECK.format(stdout=result.stdout.strip())
            if message is None:
                return HarnessResult(result.stdout.strip(), "answered", None, step)
            messages.append({"role": "user", "content": message})
            if deadline.expired():
                return timed_out(step)
        return out_of_steps(step)

    def _execute(self, code: str, ctx: HarnessContext, deadline: Deadline, aids: AttemptAblation) -> SandboxResult:
        limits = replace(self.limits, wall_s=min(self.limits.wall_s, deadline.remaining()))

        def observe(arguments: dict[str, Any], observation: Observation) -> None:
            aids.observe(observation.tool, arguments, observation.ok, observation.body)

        return run_sandboxed(code, ctx.tools, ctx.tools_url, limits, isolated=self.isolated, observe=observe)
