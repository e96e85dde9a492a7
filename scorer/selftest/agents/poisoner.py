"""Audit agent that cherry-picks interop faults: does the task's first expected action,
then ends every attempt on a request it malformed on purpose (an assistant message with
``content: null`` and no tool calls), so the server rejects it and prints no answer.
Under the old rules every such attempt left the figures; now the run is an invalid
environment.

Usage: ``python poisoner.py --task-set FOLDER``.
"""

from __future__ import annotations

import sys

from _kit import call, chat, env, task, task_set_arg


def main() -> None:
    current = task(task_set_arg())
    first = (current.get("expected_actions") or [{}])[0]
    if first.get("tool"):
        call(first["tool"], dict(first.get("args") or {}))
    status, _ = chat([{"role": "user", "content": env("PROBEGATE_TASK_PROMPT")}, {"role": "assistant", "content": None}])
    sys.exit(f"the model server answered HTTP {status}")


main()
