"""``args-as-string``: tool-call ``arguments`` given as an object in the history are sent
as a JSON string (the OpenAI wire type)."""

from __future__ import annotations

import json
from typing import Any

from probegate.gateway.compat.rule import Change, Rule, messages
from probegate.wire.json_shapes import items


def rewrite(body: dict[str, Any], _: Any = None) -> list[Change]:
    changes = []
    for i, message in enumerate(messages(body)):
        if not isinstance(message, dict):
            continue
        for j, call in enumerate(items(message.get("tool_calls"))):
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict) and "arguments" in fn and not isinstance(fn["arguments"], str):
                before = fn["arguments"]
                fn["arguments"] = json.dumps(before, ensure_ascii=False)
                changes.append({"rule": "args-as-string", "path": f"messages[{i}].tool_calls[{j}].function.arguments",
                                "from": before, "to": fn["arguments"]})
    return changes


RULE = Rule("args-as-string", "tool-call arguments object -> JSON string", rewrite)
