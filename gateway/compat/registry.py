"""The compat rules in the order they apply, and ``--compat`` parsing (pure).

A new rule is one new module in this package that defines ``RULE``, plus its place in
:data:`ORDER` (the order rewrites apply in matters: ``bound-strings`` after
``cap-max-length``, ``default-max-tokens`` after ``max-tokens-alias``). ``responses-via-chat`` is
not a body rewrite (its :attr:`Rule.rewrite` does nothing): the forwarder translates the
route and the answer, then applies the other rules to the chat request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from probegate.errors import UsageError
from probegate.gateway.compat import (
    args_as_string,
    bound_strings,
    cap_max_length,
    default_max_tokens,
    drop_params,
    max_tokens_alias,
    null_content,
    responses_via_chat,
    system_for_tools,
    tool_choice_auto,
    tool_content_text,
    tool_results_as_user,
)
from probegate.gateway.compat.rule import Change, Rule

#: Every rule, in the order rewrites apply.
ORDER: tuple[Rule, ...] = (
    responses_via_chat.RULE,  # a route translation: the others then apply to the chat request it makes
    null_content.RULE,
    tool_content_text.RULE,
    args_as_string.RULE,
    tool_results_as_user.RULE,
    drop_params.RULE,
    max_tokens_alias.RULE,
    tool_choice_auto.RULE,
    cap_max_length.RULE,
    bound_strings.RULE,
    system_for_tools.RULE,
    default_max_tokens.RULE,
)
RULES: dict[str, Rule] = {rule.name: rule for rule in ORDER}


@dataclass(frozen=True)
class CompatRules:
    """The shims turned on for a gateway or run.

    Attributes:
        enabled: ``(rule, value)`` pairs in application order; ``value`` is ``None`` for a
            flag, the number for a ``number`` rule, a tuple of names for ``drop-params``.
        names: the canonical spec of what is on, e.g. ``("bound-strings=1000", "null-content")``
            (recorded on the run).
    """

    enabled: tuple[tuple[Rule, Any], ...] = ()
    names: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.enabled)

    def __contains__(self, name: object) -> bool:
        return any(rule.name == name for rule, _ in self.enabled)

    def value(self, name: str) -> Any:
        """The value a rule is on with (``None`` for a flag, or when it is off)."""
        return next((value for rule, value in self.enabled if rule.name == name), None)


def parse_rules(specs: list[str] | str | None) -> CompatRules:
    """Parse ``--compat`` values such as ``null-content,drop-params=a,b,args-as-string``.

    Names after ``drop-params=`` that are not rule names are more parameters to drop.

    Raises:
        UsageError: an unknown rule, or a number rule with a value that is not a positive integer.
    """
    if not specs:
        return CompatRules()
    tokens = [t.strip() for spec in ([specs] if isinstance(specs, str) else specs) for t in spec.split(",")]
    values: dict[str, Any] = {}
    collecting: str | None = None
    for token in filter(None, tokens):
        name, _, value = token.partition("=")
        rule = RULES.get(name)
        if rule is None:
            if collecting and "=" not in token:
                values[collecting] += (token,)
                continue
            raise UsageError(f"unknown --compat rule {token!r}; known: {', '.join(RULES)}")
        collecting = None
        if rule.param == "names":
            collecting = name
            values[name] = values.get(name, ()) + ((value,) if value else ())
        elif rule.param == "number":
            if value and not (value.isdigit() and int(value) > 0):
                raise UsageError(f"{name}={value!r}: give a positive number of {rule.unit}")
            values[name] = int(value) if value else rule.default
        else:
            values[name] = None
    enabled = tuple((rule, values[rule.name]) for rule in ORDER
                    if rule.name in values and (rule.param != "names" or values[rule.name]))
    flags = sorted(f"{rule.name}={value}" if rule.param == "number" else rule.name
                   for rule, value in enabled if rule.param != "names")
    lists = [f"{rule.name}=" + "+".join(value) for rule, value in enabled if rule.param == "names"]
    return CompatRules(enabled, tuple(flags + lists))


def apply_rules(rules: CompatRules, body: bytes) -> tuple[bytes, list[Change]]:
    """Rewrite a JSON request body; returns ``(new body, changes)``.

    The body comes back byte-identical when nothing changed (or it is not a JSON
    object). Each change is ``{"rule", "path", "from", "to"}``.
    """
    if not rules:
        return body, []
    try:
        obj = json.loads(body)
    except ValueError:
        return body, []
    if not isinstance(obj, dict):
        return body, []
    changes: list[Change] = []
    for rule, value in rules.enabled:
        changes += rule.rewrite(obj, value)
    if not changes:
        return body, []
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode(), changes
