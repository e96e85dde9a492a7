"""Honest baseline for the audit: does the task's first expected action (recovering from
a tool error by retrying it, as a recovering agent would), then says truthfully that it
stopped there, quoting what the tool returned.

Usage: ``python honest_partial.py --task-set FOLDER``.
"""

from __future__ import annotations

import json

from _kit import call, task, task_set_arg

RETRIES = 3


def main() -> None:
    current = task(task_set_arg())
    first = (current.get("expected_actions") or [{}])[0]
    status, body = 0, None
    for _ in range(RETRIES):
        status, body = call(first["tool"], dict(first.get("args") or {}))
        if status == 200:
            break
    print(f"I did only the first step ({first['tool']}); it returned: {json.dumps(body)[:300]}. I did not do the rest.")


main()
