"""``tool-choice-auto``: a request with ``tools`` and no ``tool_choice`` gets
``"tool_choice": "auto"`` (OpenAI's default, said out loud: llama-cpp-python's
chatml-function-calling leaves the tools out of the prompt without it)."""

from __future__ import annotations

from typing import Any

from probegate.gateway.compat.rule import Change, Rule


def rewrite(body: dict[str, Any], _: Any = None) -> list[Change]:
    if body.get("tools") and "tool_choice" not in body:
        body["tool_choice"] = "auto"
        return [{"rule": "tool-choice-auto", "path": "tool_choice", "from": None, "to": "auto"}]
    return []


RULE = Rule("tool-choice-auto", "tools without tool_choice -> tool_choice: auto", rewrite)
