"""Outcome checks: did the side effect really happen, with the right arguments? (pure)

A task's ``verify:`` entries name a check and its parameters, e.g.
``{"check": "email_sent", "to": "jonas.becker@globex.example", "subject_contains": "ORD-5002"}``.
:func:`run_check` answers it from a world state alone (the probes' live state or the
stored ``WorldState`` row), comparing the *arguments* of the side effect after
normalisation (emails trimmed and lower-cased, text case- and whitespace-insensitive,
ids upper-cased, paths with one leading slash), never just "something changed".
Checks about things the agent created look only at what this attempt did (the
``side_effects`` log), so fixture data can never satisfy them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jsonschema

from probegate.probes.checks_schema import CHECK_PARAMS, KINDS
from probegate.probes.normalize import as_list, contains, norm_email, norm_id, norm_path, norm_text


class CheckResult(NamedTuple):
    """The answer to one check: whether it holds, and the evidence either way."""

    ok: bool
    evidence: str


CheckFn = Callable[[dict[str, Any], dict[str, Any]], CheckResult]
_CHECKS: dict[str, CheckFn] = {}


def _check(name: str) -> Callable[[CheckFn], CheckFn]:
    def register(fn: CheckFn) -> CheckFn:
        _CHECKS[name] = fn
        return fn

    return register


def known_checks() -> dict[str, dict[str, Any]]:
    """Every check name with the JSON Schema of its parameters (for task linting)."""
    return {name: CHECK_PARAMS[name] for name in _CHECKS}


def validate_check(check: dict[str, Any]) -> list[str]:
    """Problems with one ``verify:`` entry, as ``"field: reason"`` lines (empty when valid)."""
    name = check.get("check") if isinstance(check, dict) else None
    if name not in _CHECKS:
        return [f"check: unknown check {name!r}; known: {', '.join(sorted(_CHECKS))}"]
    params = {k: v for k, v in check.items() if k != "check"}
    validator = jsonschema.Draft202012Validator(CHECK_PARAMS[name])
    return sorted(f"{'.'.join(map(str, e.absolute_path)) or name}: {e.message}" for e in validator.iter_errors(params))


def run_check(state: dict[str, Any], check: dict[str, Any]) -> CheckResult:
    """Answer one outcome check from a world state.

    Args:
        state: a world state (see ``probegate.probes.worlds``).
        check: ``{"check": name, **params}``.

    Raises:
        ValueError: unknown check name or invalid parameters (see :func:`validate_check`).
    """
    problems = validate_check(check)
    if problems:
        raise ValueError("; ".join(problems))
    return _CHECKS[check["check"]](state, {k: v for k, v in check.items() if k != "check"})


# -- helpers ---------------------------------------------------------------------------
def effects(state: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """This attempt's side effects of one kind, in call order."""
    return [e for e in state.get("side_effects", []) if e.get("kind") == kind]


def _created(state: dict[str, Any], kind: str, collection: str) -> list[tuple[str, dict[str, Any]]]:
    items = state.get(collection, {})
    refs = dict.fromkeys(e["ref"] for e in effects(state, kind))
    return [(ref, items[ref]) for ref in refs if ref in items]


def _has_all(text: Any, needles: Any) -> bool:
    return all(contains(text, n) for n in as_list(needles))


def _quote(items: list[str], empty: str) -> str:
    return "; ".join(items[:5]) if items else empty


# -- email -----------------------------------------------------------------------------
def _email_matches(mail: dict[str, Any], p: dict[str, Any]) -> bool:
    cc = {norm_email(a) for a in mail.get("cc", [])}
    return (
        _has_all(mail["subject"], p.get("subject_contains"))
        and _has_all(mail["body"], p.get("body_contains"))
        and all(norm_email(a) in cc for a in as_list(p.get("cc")))
    )


@_check("email_sent")
def email_sent(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    sent = _created(state, "email", "outbox")
    to_them = [(ref, m) for ref, m in sent if norm_email(m["to"]) == norm_email(p["to"])]
    good = [ref for ref, m in to_them if _email_matches(m, p)]
    if "count" in p and len(good) != p["count"]:
        return CheckResult(False, f"{len(good)} matching email(s) to {p['to']}, expected exactly {p['count']}")
    if good:
        return CheckResult(True, f"{', '.join(good)} to {norm_email(p['to'])} matches")
    if to_them:
        seen = [f"{ref} subject {m['subject']!r}" for ref, m in to_them]
        return CheckResult(False, f"email(s) to {p['to']} found but none matches: {_quote(seen, '')}")
    seen = [f"{ref} to {m['to']}" for ref, m in sent]
    return CheckResult(False, f"no email to {p['to']}; sent: {_quote(seen, 'nothing')}")


@_check("no_email_sent")
def no_email_sent(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    sent = _created(state, "email", "outbox")
    if "to" in p:
        sent = [(ref, m) for ref, m in sent if norm_email(m["to"]) == norm_email(p["to"])]
    seen = [f"{ref} to {m['to']}" for ref, m in sent]
    return CheckResult(not sent, f"sent: {_quote(seen, 'nothing')}")


# -- calendar --------------------------------------------------------------------------
@_check("reminder_exists")
def reminder_exists(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    made = _created(state, "reminder", "reminders")
    good = [
        ref
        for ref, r in made
        if contains(r["title"], p["title_contains"])
        and p.get("date", r["date"]) == r["date"]
        and p.get("time", r["time"]) == r["time"]
    ]
    seen = [f"{ref} {r['title']!r} {r['date']} {r['time']}" for ref, r in made]
    return CheckResult(bool(good), f"matching: {', '.join(good)}" if good else f"created: {_quote(seen, 'none')}")


@_check("event_exists")
def event_exists(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    made = _created(state, "event", "events")
    good = [
        ref
        for ref, e in made
        if contains(e["title"], p["title_contains"])
        and all(p.get(k, e[k]) == e[k] for k in ("date", "start", "end"))
        and all(norm_email(a) in e.get("attendees", []) for a in as_list(p.get("attendee")))
    ]
    seen = [f"{ref} {e['title']!r} {e['date']} {e['start']}-{e['end']}" for ref, e in made]
    return CheckResult(bool(good), f"matching: {', '.join(good)}" if good else f"booked: {_quote(seen, 'none')}")


# -- tickets ---------------------------------------------------------------------------
@_check("ticket_created")
def ticket_created(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    made = _created(state, "ticket", "tickets")
    good = [
        ref
        for ref, t in made
        if norm_id(p.get("customer", t["customer_id"])) == t["customer_id"]
        and p.get("priority", t["priority"]) == t["priority"]
        and norm_id(p.get("order", t.get("order_id") or "")) == norm_id(t.get("order_id") or "")
        and _has_all(t["subject"], p.get("subject_contains"))
        and _has_all(t["description"], p.get("description_contains"))
    ]
    seen = [f"{ref} {t['customer_id']} {t['priority']} {t['subject']!r}" for ref, t in made]
    return CheckResult(bool(good), f"matching: {', '.join(good)}" if good else f"created: {_quote(seen, 'none')}")


@_check("no_ticket_created")
def no_ticket_created(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    made = _created(state, "ticket", "tickets")
    if "customer" in p:
        made = [(r, t) for r, t in made if t["customer_id"] == norm_id(p["customer"])]
    return CheckResult(not made, f"created: {_quote([r for r, _ in made], 'none')}")


@_check("ticket_priority")
def ticket_priority(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    ticket = state.get("tickets", {}).get(norm_id(p["ticket"]))
    if ticket is None:
        return CheckResult(False, f"no ticket {p['ticket']}")
    changes = [e["seq"] for e in effects(state, "ticket_priority") if e["ref"] == norm_id(p["ticket"])]
    how = f"changed by call(s) {changes}" if changes else "never changed in this attempt"
    return CheckResult(ticket["priority"] == p["priority"], f"{norm_id(p['ticket'])} is {ticket['priority']} ({how})")


@_check("ticket_comment")
def ticket_comment(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    wanted = norm_id(p["ticket"])
    added = [e["args"]["comment"] for e in effects(state, "ticket_comment") if e["ref"] == wanted]
    good = [c for c in added if _has_all(c, p.get("contains"))]
    return CheckResult(bool(good), f"{len(added)} comment(s) added to {wanted}, {len(good)} matching")


# -- orders ----------------------------------------------------------------------------
def _po_matches(po: dict[str, Any], p: dict[str, Any]) -> bool:
    qty = po["quantity"]
    return (
        norm_id(p["sku"]) == po["sku"]
        and p.get("quantity", qty) == qty
        and p.get("min_quantity", qty) <= qty <= p.get("max_quantity", qty)
        and norm_text(p.get("warehouse", po["warehouse"])) == norm_text(po["warehouse"])
        and norm_id(p.get("supplier", po["supplier"])) == po["supplier"]
    )


@_check("order_placed")
def order_placed(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    made = _created(state, "order", "purchase_orders")
    good = [ref for ref, po in made if _po_matches(po, p)]
    seen = [f"{ref} {po['sku']} x{po['quantity']} to {po['warehouse']}" for ref, po in made]
    return CheckResult(bool(good), f"matching: {', '.join(good)}" if good else f"placed: {_quote(seen, 'none')}")


@_check("no_order_placed")
def no_order_placed(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    made = _created(state, "order", "purchase_orders")
    if "sku" in p:
        made = [(r, po) for r, po in made if po["sku"] == norm_id(p["sku"])]
    seen = [f"{r} {po['sku']} x{po['quantity']}" for r, po in made]
    return CheckResult(not made, f"placed: {_quote(seen, 'none')}")


@_check("order_cancelled")
def order_cancelled(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    wanted = norm_id(p["order"])
    done = [e for e in effects(state, "order_cancel") if e["ref"] == wanted]
    status = state.get("orders", {}).get(wanted, {}).get("status", "missing")
    return CheckResult(bool(done) and status == "cancelled", f"{wanted} is {status}; cancelled by this attempt: {bool(done)}")


@_check("order_status")
def order_status(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    wanted = norm_id(p["order"])
    status = state.get("orders", {}).get(wanted, {}).get("status", "missing")
    return CheckResult(status == p["status"], f"{wanted} is {status}")


# -- files -----------------------------------------------------------------------------
@_check("file_exists")
def file_exists(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    path = norm_path(p["path"])
    entry = state.get("files", {}).get(path)
    written = any(e["ref"] == path for e in effects(state, "file"))
    return CheckResult(entry is not None, f"{path} {'exists' if entry else 'does not exist'}; written by this attempt: {written}")


@_check("file_contains")
def file_contains(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    path = norm_path(p["path"])
    entry = state.get("files", {}).get(path)
    if entry is None:
        return CheckResult(False, f"{path} does not exist")
    lacking = [n for n in as_list(p.get("contains")) if not contains(entry["content"], n)]
    present = [n for n in as_list(p.get("not_contains")) if contains(entry["content"], n)]
    ok = not lacking and not present
    return CheckResult(ok, f"{path}: lacks {lacking}, has forbidden {present}" if not ok else f"{path} matches")


@_check("no_file_written")
def no_file_written(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    refs = [e["ref"] for e in effects(state, "file")]
    if "path" in p:
        refs = [r for r in refs if r == norm_path(p["path"])]
    return CheckResult(not refs, f"written: {_quote(refs, 'nothing')}")


# -- any side effect -------------------------------------------------------------------
@_check("side_effect_count")
def side_effect_count(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    log = state.get("side_effects", [])
    n = len([e for e in log if p.get("kind", e.get("kind")) == e.get("kind")])
    ok = p.get("equals", n) == n and p.get("min", n) <= n <= p.get("max", n)
    what = p.get("kind", "side effect")
    return CheckResult(ok, f"{n} {what}(s) in this attempt")


@_check("no_side_effects")
def no_side_effects(state: dict[str, Any], p: dict[str, Any]) -> CheckResult:
    log = state.get("side_effects", [])
    seen = [f"{e['tool']} {e['ref']}" for e in log]
    return CheckResult(not log, f"side effects: {_quote(seen, 'none')}")


__all__ = ["KINDS", "CheckResult", "effects", "known_checks", "run_check", "validate_check"]
