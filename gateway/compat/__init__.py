"""Opt-in request shims for known framework x server interop faults (pure).

The gateway is transparent by default. A user who wants to evaluate a model behind a
server that rejects what their framework sends can turn on named rules; every rewrite
is recorded on the exchange (which rule, what changed) next to the original request.

One rule per module (as mitmproxy keeps one addon per file), each defining ``RULE``
(:class:`Rule`); :mod:`.registry` lists them in the order they apply and parses
``--compat``. The rules and the fault each one works around: see each module's
docstring, or ``probegate serve --help``.
"""

from probegate.gateway.compat.registry import ORDER, RULES, CompatRules, apply_rules, parse_rules
from probegate.gateway.compat.rule import Change, Rule

__all__ = ["ORDER", "RULES", "Change", "CompatRules", "Rule", "apply_rules", "parse_rules"]
