"""``tool-results-as-user``: every tool-result message becomes a user message that says
which call it answers.

llama-cpp-python's ``chatml-function-calling`` renders a ``role: "tool"`` message as an
empty ``<|im_start|>tool`` header (its template has no branch for the role), so the model
never sees an observation; ``probegate doctor`` finds it (check ``tool-results``) and the
scorer labels such attempts ``interop.tool_results_dropped``. The rewritten message is

    {"role": "user", "content": "Result of get_weather (call call_1):\\n{...the tool's content...}"}

which every ChatML template renders. The name comes from the message's ``name`` or from
the assistant tool call with that id. A server that checks that every tool call is
answered by a tool message (OpenAI's own API) rejects the rewritten history: use the
rule only against a server the doctor flags.
"""

from __future__ import annotations

from typing import Any

from probegate.gateway.compat.rule import Change, Rule, messages


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _call_names(found: list[Any]) -> dict[str, str]:
    names = {}
    for message in found:
        for call in (message.get("tool_calls") or []) if isinstance(message, dict) else []:
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                names[str(call.get("id"))] = str(call["function"].get("name") or "")
    return names


def header(name: str, call_id: str) -> str:
    """``Result of NAME (call ID):`` with whichever of the two is known."""
    about = " ".join(p for p in (name, f"(call {call_id})" if call_id else "") if p)
    return f"Result of {about}:" if about else "Tool result:"


def rewrite(body: dict[str, Any], _: Any = None) -> list[Change]:
    found = messages(body)
    names = _call_names(found)
    changes = []
    for i, message in enumerate(found):
        if not isinstance(message, dict) or message.get("role") not in ("tool", "function"):
            continue
        call_id = str(message.get("tool_call_id") or "")
        top = header(str(message.get("name") or names.get(call_id) or ""), call_id)
        found[i] = {"role": "user", "content": f"{top}\n{_text(message.get('content'))}"}
        changes.append({"rule": "tool-results-as-user", "path": f"messages[{i}]",
                        "from": {"role": message.get("role"), "tool_call_id": message.get("tool_call_id")},
                        "to": {"role": "user", "header": top}})
    return changes


RULE = Rule("tool-results-as-user", "tool-result messages -> user messages naming the call (servers that drop tool "
            "results: llama-cpp-python's chatml-function-calling)", rewrite)
