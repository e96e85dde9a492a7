"""``default-max-tokens[=N]``: a chat or completion request that sets neither ``max_tokens``
nor ``max_completion_tokens`` gets ``"max_tokens": N`` (default 1024 tokens; applied after
``max-tokens-alias``).

A budget, not a fault fix: llama-cpp-python generates until the context window is full
when no limit is given, so one degenerate turn of a framework that sends none (CrewAI) can
take minutes on a CPU.
"""

from __future__ import annotations

from typing import Any

from probegate.gateway.compat.rule import Change, Rule

DEFAULT_MAX_TOKENS = 1024


def rewrite(body: dict[str, Any], limit: int) -> list[Change]:
    if "messages" not in body and "prompt" not in body:
        return []
    if body.get("max_tokens") is not None or body.get("max_completion_tokens") is not None:
        return []
    before = body.get("max_tokens")
    body["max_tokens"] = limit
    return [{"rule": "default-max-tokens", "path": "max_tokens", "from": before, "to": limit}]


RULE = Rule("default-max-tokens", "no output limit -> max_tokens N (a budget)", rewrite,
            param="number", default=DEFAULT_MAX_TOKENS, unit="tokens")
