"""Invariants every world state keeps, before and after any tool call (pure).

The service checks a patched world when it loads it; the fuzz tests check the
state after every call, so a tool that corrupts its world fails loudly.
"""

from __future__ import annotations

import json
import re
from typing import Any

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME = re.compile(r"^\d{2}:\d{2}$")
_PRIORITIES = {"low", "normal", "high", "urgent"}
_TICKET_STATUS = {"open", "pending", "resolved", "closed"}
_ORDER_STATUS = {"processing", "on_hold", "shipped", "delivered", "cancelled"}
_REQUIRED = ("now", "counters", "side_effects")
_SIDE_EFFECT_HOME = {
    "email": "outbox",
    "reminder": "reminders",
    "event": "events",
    "ticket": "tickets",
    "ticket_priority": "tickets",
    "ticket_comment": "tickets",
    "order": "purchase_orders",
    "order_cancel": "orders",
    "file": "files",
}


def _now_problems(world: dict[str, Any]) -> list[str]:
    now = world.get("now", {})
    if not isinstance(now, dict) or not _DATE.match(str(now.get("date"))) or not _TIME.match(str(now.get("time"))):
        return ["now must hold date (YYYY-MM-DD) and time (HH:MM)"]
    if not re.match(r"^[+-]\d{2}:\d{2}$", str(now.get("utc_offset", ""))):
        return ["now.utc_offset must look like +01:00"]
    return []


def _entity_problems(world: dict[str, Any]) -> list[str]:
    problems = []
    for sku, product in world.get("products", {}).items():
        stock = product.get("stock", {})
        if not all(isinstance(n, int) and n >= 0 for n in stock.values()):
            problems.append(f"products.{sku}.stock must hold non-negative integers")
        if product.get("supplier") not in world.get("suppliers", {}):
            problems.append(f"products.{sku}.supplier is not a known supplier")
    for ticket_id, ticket in world.get("tickets", {}).items():
        if ticket.get("priority") not in _PRIORITIES or ticket.get("status") not in _TICKET_STATUS:
            problems.append(f"tickets.{ticket_id} has an unknown priority or status")
    for order_id, order in world.get("orders", {}).items():
        if order.get("status") not in _ORDER_STATUS or order.get("customer_id") not in world.get("customers", {}):
            problems.append(f"orders.{order_id} has an unknown status or customer")
    if any(not str(path).startswith("/") for path in world.get("files", {})):
        problems.append("every file path must start with /")
    return problems


def _side_effect_problems(world: dict[str, Any]) -> list[str]:
    problems = []
    for entry in world.get("side_effects", []):
        home = _SIDE_EFFECT_HOME.get(entry.get("kind"))
        if home is None or entry.get("ref") not in world.get(home, {}):
            problems.append(f"side effect {entry.get('kind')} {entry.get('ref')} points at nothing")
    return problems


def _fault_problems(world: dict[str, Any]) -> list[str]:
    problems = []
    faults = world.get("faults", [])
    if not isinstance(faults, list):
        return ["faults must be a list"]
    for i, fault in enumerate(faults):
        if not isinstance(fault, dict) or not isinstance(fault.get("tool"), str):
            problems.append(f"faults[{i}] needs a tool name")
            continue
        times = fault.get("times", 1)
        if times != "always" and not (isinstance(times, int) and not isinstance(times, bool) and times >= 1):
            problems.append(f"faults[{i}].times must be a positive integer or 'always'")
        if not isinstance(fault.get("when", {}), dict):
            problems.append(f"faults[{i}].when must map argument names to values")
        if not isinstance(fault.get("error", ""), str) or not isinstance(fault.get("code", ""), str):
            problems.append(f"faults[{i}].error and .code must be strings")
    return problems


def world_problems(world: Any) -> list[str]:
    """Every broken invariant of ``world``, as short sentences (empty when it is sound)."""
    if not isinstance(world, dict):
        return ["a world must be a mapping"]
    missing = [k for k in _REQUIRED if k not in world]
    if missing:
        return [f"missing {', '.join(missing)}"]
    try:
        json.dumps(world, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return [f"not JSON-serialisable: {exc}"]
    return _now_problems(world) + _entity_problems(world) + _side_effect_problems(world) + _fault_problems(world)
