"""``null-content``: assistant messages with ``"content": null`` get ``""``.

CrewAI's follow-up after a tool call sends ``content: null``; llama-cpp-python's server
validates ``content`` as a string and answers HTTP 500.
"""

from __future__ import annotations

from typing import Any

from probegate.gateway.compat.rule import Change, Rule, messages


def rewrite(body: dict[str, Any], _: Any = None) -> list[Change]:
    changes = []
    for i, message in enumerate(messages(body)):
        if isinstance(message, dict) and message.get("role") == "assistant" and "content" in message \
                and message["content"] is None:
            message["content"] = ""
            changes.append({"rule": "null-content", "path": f"messages[{i}].content", "from": None, "to": ""})
    return changes


RULE = Rule("null-content", "assistant content null -> \"\" (CrewAI vs llama-cpp-python)", rewrite)
