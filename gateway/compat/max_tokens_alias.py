"""``max-tokens-alias``: ``max_completion_tokens`` is renamed ``max_tokens`` when the latter
is absent (servers that know only the older name)."""

from __future__ import annotations

from typing import Any

from probegate.gateway.compat.rule import Change, Rule


def rewrite(body: dict[str, Any], _: Any = None) -> list[Change]:
    if "max_completion_tokens" in body and "max_tokens" not in body:
        value = body.pop("max_completion_tokens")
        body["max_tokens"] = value
        return [{"rule": "max-tokens-alias", "path": "max_completion_tokens", "from": value, "to": "max_tokens"}]
    return []


RULE = Rule("max-tokens-alias", "max_completion_tokens -> max_tokens", rewrite)
