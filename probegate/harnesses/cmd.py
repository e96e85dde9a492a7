"""``cmd:"..."``: any user's agent, unmodified, as a subprocess.

The command runs once per attempt with these in its environment (on top of ours):

| variable | value |
|---|---|
| ``OPENAI_BASE_URL`` | the attempt's model base URL at the gateway (``.../v1``) |
| ``OPENAI_API_KEY`` | the run's API key |
| ``OPENAI_MODEL``, ``PROBEGATE_MODEL`` | the model name |
| ``PROBEGATE_TOOLS_URL`` | the attempt's tools URL (``GET`` lists, ``POST .../{tool}`` calls) |
| ``PROBEGATE_MCP_URL`` | the same tools as an MCP server (streamable HTTP) |
| ``PROBEGATE_TASK_PROMPT`` | the user's request |
| ``PROBEGATE_SYSTEM`` | the task's system text (may be empty) |
| ``PROBEGATE_RUN``, ``PROBEGATE_TASK``, ``PROBEGATE_ATTEMPT`` | attribution |
| ``PROBEGATE_MAX_STEPS``, ``PROBEGATE_TEMPERATURE`` | the run's settings |

What the command prints on stdout is its final answer; a non-zero exit status is
an ``error`` with the tail of its stderr; running past the attempt's time limit
kills its whole process group (``timeout``).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess

from probegate.harnesses.base import Deadline, HarnessContext, HarnessResult

#: Characters of stdout kept as the answer, and of stderr kept as the error.
OUTPUT_CHARS = 20_000
ERROR_CHARS = 2_000


def agent_environment(ctx: HarnessContext, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment the user's agent runs with (pure apart from ``base``)."""
    env = dict(os.environ if base is None else base)
    env.update(
        {
            "OPENAI_BASE_URL": ctx.model_base_url,
            "OPENAI_API_KEY": ctx.api_key,
            "OPENAI_MODEL": ctx.model,
            "PROBEGATE_MODEL": ctx.model,
            "PROBEGATE_TOOLS_URL": ctx.tools_url,
            "PROBEGATE_MCP_URL": ctx.mcp_url,
            "PROBEGATE_TASK_PROMPT": ctx.prompt,
            "PROBEGATE_SYSTEM": ctx.system or "",
            "PROBEGATE_RUN": ctx.run_id,
            "PROBEGATE_TASK": ctx.task_id,
            "PROBEGATE_ATTEMPT": str(ctx.attempt),
            "PROBEGATE_MAX_STEPS": str(ctx.max_steps),
            "PROBEGATE_TEMPERATURE": str(ctx.temperature),
        }
    )
    return env


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.communicate()


class CmdHarness:
    """Run a user's command as the agent.

    Args:
        command: the command line (split with :func:`shlex.split`, no shell).

    Raises:
        ValueError: the command is empty or cannot be split.
    """

    def __init__(self, command: str) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError("empty command")
        self.name = f"cmd:{command}"

    def run(self, ctx: HarnessContext) -> HarnessResult:
        """Drive one attempt; see :class:`~probegate.harnesses.base.Harness`."""
        try:
            proc = subprocess.Popen(
                self.argv,
                env=agent_environment(ctx),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            return HarnessResult(None, "error", f"cannot start {self.argv[0]!r}: {exc}")
        deadline = Deadline(ctx)
        while True:
            try:
                out, err = proc.communicate(timeout=min(1.0, deadline.remaining()))
                break
            except subprocess.TimeoutExpired:
                if deadline.expired():
                    _kill_group(proc)
                    message = f"the command was stopped after {ctx.timeout:g} s or by the runner"
                    return HarnessResult(None, "timeout", message)
        answer = out.decode("utf-8", "replace").strip()[-OUTPUT_CHARS:]
        if proc.returncode != 0:
            tail = err.decode("utf-8", "replace").strip()[-ERROR_CHARS:]
            return HarnessResult(answer or None, "error", f"the command exited with status {proc.returncode}: {tail}")
        if not answer:
            return HarnessResult(None, "error", "the command printed no answer on stdout")
        return HarnessResult(answer, "answered")
