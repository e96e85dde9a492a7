"""Outcome checks over world state: the arguments of the side effect, normalised."""

from __future__ import annotations

import json
from typing import Any

import pytest

from probegate.probes.verify import known_checks, run_check, validate_check
from probegate.probes.worlds import load_world

SETUP = [
    ("send_email", {"to": "Jonas.Becker@Globex.example", "subject": "Update on ORD-5002",
                    "body": "New ETA:  2025-03-18.\nSorry for the delay.", "cc": ["mia.wagner@brightline.example"]}),
    ("create_reminder", {"title": "Call Jonas about the desks", "date": "2025-03-17", "time": "09:15"}),
    ("create_event", {"title": "Globex delivery review", "date": "2025-03-18", "start": "09:00", "end": "09:30",
                      "attendees": ["jonas.becker@globex.example"]}),
    ("create_ticket", {"customer_id": "CUST-1003", "subject": "Replacement monitors for ORD-5004",
                       "description": "Ship five ClearView 27 monitors", "priority": "high", "order_id": "ORD-5004"}),
    ("set_ticket_priority", {"ticket_id": "TCK-3003", "priority": "high", "reason": "stores cannot open"}),
    ("add_ticket_comment", {"ticket_id": "TCK-3003", "comment": "Replacements ship Monday via TCK-3008"}),
    ("place_order", {"sku": "SKU-1009", "quantity": 11, "warehouse": "Hamburg"}),
    ("cancel_order", {"order_id": "ORD-5005", "reason": "payment failed"}),
    ("write_file", {"path": "/reports/weekly-2025-11.md", "content": "# Week 11\nOrders: 10\nReorders: SKU-1009"}),
]

CASES: list[tuple[dict[str, Any], bool]] = [
    ({"check": "email_sent", "to": "jonas.becker@globex.example"}, True),
    ({"check": "email_sent", "to": " JONAS.BECKER@globex.example", "subject_contains": "ord-5002"}, True),
    ({"check": "email_sent", "to": "jonas.becker@globex.example", "body_contains": ["new eta: 2025-03-18", "sorry"]}, True),
    ({"check": "email_sent", "to": "jonas.becker@globex.example", "cc": "Mia.Wagner@brightline.example"}, True),
    ({"check": "email_sent", "to": "jonas.becker@globex.example", "count": 1}, True),
    ({"check": "email_sent", "to": "jonas.becker@globex.example", "count": 2}, False),
    ({"check": "email_sent", "to": "jonas.becker@globex.example", "subject_contains": "invoice"}, False),
    ({"check": "email_sent", "to": "jonas.becker@globex.example", "cc": "karl.schmitt@brightline.example"}, False),
    ({"check": "email_sent", "to": "julia.becker@globex-logistics.example"}, False),
    ({"check": "no_email_sent", "to": "julia.becker@globex-logistics.example"}, True),
    ({"check": "no_email_sent"}, False),
    ({"check": "reminder_exists", "title_contains": "call jonas", "date": "2025-03-17", "time": "09:15"}, True),
    ({"check": "reminder_exists", "title_contains": "call jonas", "time": "09:00"}, False),
    ({"check": "reminder_exists", "title_contains": "forklift"}, False),  # in the fixture, not made by this attempt
    ({"check": "event_exists", "title_contains": "delivery review", "date": "2025-03-18", "start": "09:00",
      "attendee": "jonas.becker@globex.example"}, True),
    ({"check": "event_exists", "title_contains": "delivery review", "attendee": "mia.wagner@brightline.example"}, False),
    ({"check": "event_exists", "title_contains": "stand-up"}, False),
    ({"check": "ticket_created", "customer": "cust-1003", "priority": "high", "order": "ORD-5004",
      "subject_contains": "replacement", "description_contains": "five"}, True),
    ({"check": "ticket_created", "customer": "CUST-1003", "priority": "urgent"}, False),
    ({"check": "ticket_created", "customer": "CUST-1001"}, False),
    ({"check": "no_ticket_created", "customer": "CUST-1001"}, True),
    ({"check": "no_ticket_created"}, False),
    ({"check": "ticket_priority", "ticket": "tck-3003", "priority": "high"}, True),
    ({"check": "ticket_priority", "ticket": "TCK-3003", "priority": "normal"}, False),
    ({"check": "ticket_priority", "ticket": "TCK-3001", "priority": "high"}, True),
    ({"check": "ticket_priority", "ticket": "TCK-9999", "priority": "high"}, False),
    ({"check": "ticket_comment", "ticket": "TCK-3003", "contains": "replacements ship"}, True),
    ({"check": "ticket_comment", "ticket": "TCK-3001"}, False),
    ({"check": "order_placed", "sku": "sku-1009", "quantity": 11, "warehouse": "Hamburg", "supplier": "SUP-4"}, True),
    ({"check": "order_placed", "sku": "SKU-1009", "min_quantity": 10, "max_quantity": 20}, True),
    ({"check": "order_placed", "sku": "SKU-1009", "quantity": 10}, False),
    ({"check": "order_placed", "sku": "SKU-1009", "warehouse": "Berlin"}, False),
    ({"check": "order_placed", "sku": "SKU-1004"}, False),
    ({"check": "no_order_placed", "sku": "SKU-1004"}, True),
    ({"check": "no_order_placed"}, False),
    ({"check": "order_cancelled", "order": "ord-5005"}, True),
    ({"check": "order_cancelled", "order": "ORD-5010"}, False),  # cancelled in the fixture, not by this attempt
    ({"check": "order_status", "order": "ORD-5010", "status": "cancelled"}, True),
    ({"check": "order_status", "order": "ORD-5002", "status": "delivered"}, False),
    ({"check": "file_exists", "path": "reports/weekly-2025-11.md"}, True),
    ({"check": "file_exists", "path": "/reports/nothing.md"}, False),
    ({"check": "file_contains", "path": "/reports/weekly-2025-11.md", "contains": ["week 11", "sku-1009"]}, True),
    ({"check": "file_contains", "path": "/reports/weekly-2025-11.md", "contains": "x", "not_contains": "Orders"}, False),
    ({"check": "file_contains", "path": "/reports/weekly-2025-11.md", "contains": "SKU-1004"}, False),
    ({"check": "file_contains", "path": "/reports/nothing.md", "contains": "x"}, False),
    ({"check": "no_file_written", "path": "/notes/x.md"}, True),
    ({"check": "no_file_written"}, False),
    ({"check": "side_effect_count", "equals": 9}, True),
    ({"check": "side_effect_count", "kind": "email", "equals": 1}, True),
    ({"check": "side_effect_count", "kind": "order", "max": 0}, False),
    ({"check": "side_effect_count", "min": 10}, False),
    ({"check": "no_side_effects"}, False),
]


@pytest.fixture(scope="module")
def state() -> dict[str, Any]:
    from probegate.probes.service import ProbeService

    service = ProbeService()
    for tool, args in SETUP:
        outcome = service.call("run1", "t1", 0, tool, json.dumps(args).encode())
        assert outcome.status_code == 200, outcome.body
    found = service.state("run1", "t1", 0)
    assert found is not None
    return found[1]


@pytest.mark.parametrize(("check", "ok"), CASES, ids=[f"{c['check']}-{i}" for i, (c, _) in enumerate(CASES)])
def test_check(state: dict[str, Any], check: dict[str, Any], ok: bool) -> None:
    result = run_check(state, check)
    assert result.ok is ok, result.evidence
    assert result.evidence


def test_every_check_has_a_positive_and_a_negative_case() -> None:
    names = {c["check"] for c, _ in CASES}
    assert names == set(known_checks())
    clean = load_world()
    positive_on_clean = {"no_email_sent", "no_ticket_created", "no_order_placed", "no_file_written", "no_side_effects"}
    for name in positive_on_clean:
        assert run_check(clean, {"check": name}).ok


@pytest.mark.parametrize(
    ("check", "problem"),
    [
        ({"check": "email_sent"}, "email_sent: 'to' is a required property"),
        ({"check": "email_sent", "to": "a@b.example", "subjekt": "x"}, "email_sent: Additional properties"),
        ({"check": "ticket_priority", "ticket": "TCK-1", "priority": "critical"}, "priority: 'critical' is not one of"),
        ({"check": "reminder_exists", "title_contains": "x", "time": "9am"}, "time: '9am' does not match"),
        ({"check": "teleported"}, "check: unknown check 'teleported'"),
        ({"nothing": 1}, "check: unknown check None"),
    ],
)
def test_validate_check(check: dict[str, Any], problem: str) -> None:
    problems = validate_check(check)
    assert problems and problems[0].startswith(problem)
    with pytest.raises(ValueError, match=problem.split(":")[0]):
        run_check(load_world(), check)


def test_valid_checks_have_no_problems() -> None:
    assert all(validate_check(c) == [] for c, _ in CASES)


def test_check_schemas_are_valid_json_schema() -> None:
    import jsonschema

    for schema in known_checks().values():
        jsonschema.Draft202012Validator.check_schema(schema)
