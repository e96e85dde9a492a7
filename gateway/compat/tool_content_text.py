"""``tool-content-text``: a tool message whose ``content`` is a list of text parts gets
their texts joined into one string.

``langchain-mcp-adapters`` and the OpenAI Agents SDK pass an MCP tool result on as
content parts; llama-cpp-python accepts only a string there and answers HTTP 500.
"""

from __future__ import annotations

from typing import Any

from probegate.gateway.compat.rule import Change, Rule, messages


def rewrite(body: dict[str, Any], _: Any = None) -> list[Change]:
    changes = []
    for i, message in enumerate(messages(body)):
        if not isinstance(message, dict) or message.get("role") != "tool":
            continue
        parts = message.get("content")
        if not isinstance(parts, list) or not parts:
            continue
        if all(isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in parts):
            message["content"] = "\n".join(p["text"] for p in parts)
            changes.append({"rule": "tool-content-text", "path": f"messages[{i}].content", "from": parts,
                            "to": message["content"]})
    return changes


RULE = Rule("tool-content-text", "tool content as text parts -> one string (MCP adapters vs llama-cpp-python)", rewrite)
