"""The parameter schemas of the outcome checks in :mod:`probegate.probes.verify` (data only)."""

from __future__ import annotations

from typing import Any

KINDS = ["email", "reminder", "event", "ticket", "ticket_priority", "ticket_comment", "order", "order_cancel", "file"]
_TEXT = {"type": "string", "minLength": 1}
_TEXTS = {"anyOf": [_TEXT, {"type": "array", "items": _TEXT, "minItems": 1}]}
_DATE = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"}
_TIME = {"type": "string", "pattern": r"^\d{2}:\d{2}$"}
_COUNT = {"type": "integer", "minimum": 0}
_PRIORITY = {"enum": ["low", "normal", "high", "urgent"]}


def _params(required: list[str] | None = None, **props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required or [], "additionalProperties": False}


CHECK_PARAMS: dict[str, dict[str, Any]] = {
    "email_sent": _params(["to"], to=_TEXT, subject_contains=_TEXTS, body_contains=_TEXTS, cc=_TEXTS, count=_COUNT),
    "no_email_sent": _params(to=_TEXT),
    "reminder_exists": _params(["title_contains"], title_contains=_TEXT, date=_DATE, time=_TIME),
    "event_exists": _params(["title_contains"], title_contains=_TEXT, date=_DATE, start=_TIME, end=_TIME,
                            attendee=_TEXTS),
    "ticket_created": _params(customer=_TEXT, subject_contains=_TEXTS, description_contains=_TEXTS,
                              priority=_PRIORITY, order=_TEXT),
    "no_ticket_created": _params(customer=_TEXT),
    "ticket_priority": _params(["ticket", "priority"], ticket=_TEXT, priority=_PRIORITY),
    "ticket_comment": _params(["ticket"], ticket=_TEXT, contains=_TEXTS),
    "order_placed": _params(["sku"], sku=_TEXT, quantity=_COUNT, min_quantity=_COUNT, max_quantity=_COUNT,
                            warehouse={"enum": ["Berlin", "Hamburg"]}, supplier=_TEXT),
    "no_order_placed": _params(sku=_TEXT),
    "order_cancelled": _params(["order"], order=_TEXT),
    "order_status": _params(["order", "status"], order=_TEXT,
                            status={"enum": ["processing", "on_hold", "shipped", "delivered", "cancelled"]}),
    "file_exists": _params(["path"], path=_TEXT),
    "file_contains": _params(["path", "contains"], path=_TEXT, contains=_TEXTS, not_contains=_TEXTS),
    "no_file_written": _params(path=_TEXT),
    "side_effect_count": _params(kind={"enum": KINDS}, equals=_COUNT, min=_COUNT, max=_COUNT),
    "no_side_effects": _params(),
}
