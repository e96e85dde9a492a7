"""``system-for-tools``: a chat request with ``tools`` and no system message gets an empty
one first. llama-cpp-python's chatml-function-calling writes the tool list into the system
message, so without one the tools never reach the model (LangChain's ``create_agent``
without a system prompt sends none)."""

from __future__ import annotations

from typing import Any

from probegate.gateway.compat.rule import Change, Rule


def rewrite(body: dict[str, Any], _: Any = None) -> list[Change]:
    found = body.get("messages")
    if not body.get("tools") or not isinstance(found, list):
        return []
    if any(isinstance(m, dict) and m.get("role") in ("system", "developer") for m in found):
        return []
    system = {"role": "system", "content": ""}
    found.insert(0, system)
    return [{"rule": "system-for-tools", "path": "messages[0]", "from": None, "to": dict(system)}]


RULE = Rule("system-for-tools", "tools without a system message -> an empty system message first", rewrite)
