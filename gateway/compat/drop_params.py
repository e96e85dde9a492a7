"""``drop-params=NAME[,NAME...]``: remove top-level request parameters the server rejects
(``parallel_tool_calls``, ``max_completion_tokens``, ...)."""

from __future__ import annotations

from typing import Any

from probegate.gateway.compat.rule import Change, Rule


def rewrite(body: dict[str, Any], names: tuple[str, ...]) -> list[Change]:
    changes = []
    for name in names:
        if name in body:
            changes.append({"rule": "drop-params", "path": name, "from": body.pop(name), "to": None})
    return changes


RULE = Rule("drop-params", "remove the named top-level request parameters", rewrite, param="names")
