"""``cap-max-length[=N]``: ``maxLength`` above N (default 1000) is dropped from the offered
tool schemas. llama.cpp turns it into a grammar repetition and crashes (SIGSEGV) on
values like 2000. The probes still enforce the real limits."""

from __future__ import annotations

from typing import Any

from probegate.gateway.compat.rule import Change, Rule, walk

DEFAULT_MAX_LENGTH = 1000


def rewrite(body: dict[str, Any], cap: int) -> list[Change]:
    changes: list[Change] = []
    for key in ("tools", "functions"):
        if not isinstance(body.get(key), list):
            continue
        for node, where in walk(body[key], key):
            limit = node.get("maxLength")
            if isinstance(limit, int) and limit > cap:
                del node["maxLength"]
                changes.append({"rule": "cap-max-length", "path": f"{where}.maxLength", "from": limit, "to": None})
    return changes


RULE = Rule("cap-max-length", "drop tool-schema maxLength above N (llama.cpp grammar crash)", rewrite,
            param="number", default=DEFAULT_MAX_LENGTH, unit="characters")
