"""Audit agent that knows the task: makes only its side-effecting calls, each aimed at the
wrong target (another order, ticket, file or recipient; the trap value when there is
one), then claims success. Under ``match: any`` these calls counted as correct.

Usage: ``python wrong_target.py --task-set FOLDER``.
"""

from __future__ import annotations

from typing import Any

from _kit import call, task, task_set_arg

TARGETS = ("to", "order_id", "ticket_id", "customer_id", "path", "sku", "date", "message_id")


def wrong(value: Any) -> Any:
    if isinstance(value, str):
        if "@" in value:
            return "x" + value
        digits = [i for i, ch in enumerate(value) if ch.isdigit()]
        if digits:
            i = digits[-1]
            return value[:i] + str((int(value[i]) + 1) % 10) + value[i + 1:]
        return value.rstrip("/") + "-other"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value + 1
    return value


def main() -> None:
    current = task(task_set_arg())
    trap = (current.get("trap") or {}).get("value")
    for action in current.get("expected_actions") or []:
        if not action.get("side_effect"):
            continue
        args = dict(action.get("args") or {})
        for key in TARGETS:
            if key in args:
                args[key] = trap if isinstance(trap, str) and key == "to" and "@" in trap else wrong(args[key])
                break
        call(action["tool"], args)
    print("Done: everything was sent, created and updated as requested.")


main()
