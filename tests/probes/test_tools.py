"""Every tool: a valid call gives the documented result; unknown keys are tool errors.

Each case calls the tool through the service on the default world (Friday
2025-03-14 09:30 in Berlin) and compares the listed fields of the result.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from probegate.probes.catalog import tool_names

OK_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("get_weather", {"city": "Berlin"}, {"city": "Berlin", "temperature": 6.0, "condition": "cloudy", "humidity_pct": 72}),
    ("get_weather", {"city": "nyc", "units": "fahrenheit"}, {"city": "New York", "temperature": 30.2, "observed_at": "2025-03-14 04:30"}),
    ("get_forecast", {"city": "Hamburg", "date": "2025-03-15"},
     {"days": [{"date": "2025-03-15", "weekday": "Saturday", "condition": "rain", "high": 6.0, "low": 2.0,
                "precipitation_mm": 5.5, "precip_chance_pct": 80}]}),
    ("get_time", {"city": "Tokyo"}, {"date": "2025-03-14", "time": "17:30", "weekday": "Friday", "utc_offset": "+09:00"}),
    ("get_time", {"city": "Sydney"}, {"time": "19:30", "timezone": "Australia/Sydney"}),
    ("list_events", {"date": "2025-03-17"}, {"events": [
        {"id": "EVT-103", "title": "Supplier call: Papyrus AG", "date": "2025-03-17", "start": "09:00", "end": "10:00",
         "attendees": ["peter.klein@papyrus.example"], "location": "Phone"},
        {"id": "EVT-104", "title": "Budget planning Q2", "date": "2025-03-17", "start": "13:00", "end": "14:30",
         "attendees": ["karl.schmitt@brightline.example", "sofia.lang@brightline.example"], "location": "Room Havel"}]}),
    ("find_free_slots", {"date": "2025-03-17", "duration_minutes": 60},
     {"slots": [{"start": "10:00", "end": "13:00"}, {"start": "14:30", "end": "17:00"}]}),
    ("find_free_slots", {"date": "2025-03-14", "duration_minutes": 120},
     {"slots": [{"start": "10:30", "end": "14:00"}, {"start": "15:00", "end": "17:00"}]}),
    ("find_free_slots", {"date": "2025-03-13", "duration_minutes": 30}, {"slots": []}),
    ("create_event", {"title": "Globex delivery call", "date": "2025-03-17", "start": "10:00", "end": "10:30",
                      "attendees": ["Jonas.Becker@globex.example"]},
     {"event_id": "EVT-109", "status": "booked", "attendees": ["jonas.becker@globex.example"]}),
    ("create_reminder", {"title": "Pay Papyrus invoice INV-7781", "date": "2025-03-27", "time": "09:00"},
     {"reminder_id": "REM-2", "status": "scheduled", "date": "2025-03-27"}),
    ("list_reminders", {}, {"reminders": [{"id": "REM-1", "title": "Renew forklift certification for the Hamburg warehouse",
                                           "date": "2025-03-21", "time": "09:00", "note": ""}]}),
    ("find_contact", {"query": "warehouse lead"}, {"contacts": [
        {"id": "EMP-03", "name": "Marco Rossi", "email": "marco.rossi@brightline.example", "phone": "+49 40 5550 210",
         "role": "Warehouse Lead Hamburg", "company": "Brightline Office Supply GmbH"}]}),
    ("list_inbox", {"sender": "lea", "limit": 5}, {"messages": [{"id": "MSG-206", "from": "lea.hoffmann@umbrella.example",
        "from_name": "Lea Hoffmann", "date": "2025-03-14", "time": "08:40", "subject": "Damaged monitors - still waiting",
        "unread": True, "preview": "Dear Dana, ticket TCK-3003 about the five damaged ClearView 27 monitors from order "
                                   "ORD-5004 has been open for ten days w"}]}),
    ("read_email", {"message_id": "msg-201"}, {"id": "MSG-201", "from": "jonas.becker@globex.example",
                                               "subject": "Where is our order ORD-5002?"}),
    ("send_email", {"to": "jonas.becker@globex.example", "subject": "ORD-5002", "body": "ETA 2025-03-18",
                    "cc": ["mia.wagner@brightline.example"], "in_reply_to": "MSG-201"},
     {"message_id": "OUT-1", "status": "sent", "cc": ["mia.wagner@brightline.example"], "sent_at": "2025-03-14 09:30"}),
    ("get_order", {"order_id": "ORD-5002"}, {"customer_id": "CUST-1001", "customer": "Globex Corporation",
                                             "status": "shipped", "total": 1992.0, "tracking_number": "TRK-88002"}),
    ("list_orders", {"customer_id": "CUST-1003"}, {"orders": [
        {"order_id": "ORD-5008", "customer_id": "CUST-1003", "date": "2025-03-13", "status": "processing", "total": 1090.0, "currency": "EUR"},
        {"order_id": "ORD-5004", "customer_id": "CUST-1003", "date": "2025-02-27", "status": "delivered", "total": 2820.0, "currency": "EUR"}]}),
    ("track_shipment", {"tracking_number": "TRK-88002"}, {"order_id": "ORD-5002", "status": "delayed", "eta": "2025-03-18"}),
    ("place_order", {"sku": "SKU-1006", "quantity": 22, "warehouse": "Berlin"},
     {"po_id": "PO-9001", "supplier": "Papyrus AG", "supplier_id": "SUP-2", "total_cost": 1012.0,
      "expected_delivery": "2025-03-17", "status": "placed"}),
    ("cancel_order", {"order_id": "ORD-5005", "reason": "customer request"},
     {"order_id": "ORD-5005", "status": "cancelled", "previous_status": "on_hold"}),
    ("search_products", {"query": "chair"}, {"products": [
        {"sku": "SKU-1001", "name": "ErgoFlex Office Chair", "category": "furniture", "unit_price": 189.0, "currency": "EUR"},
        {"sku": "SKU-1011", "name": "BasicSeat Office Chair", "category": "furniture", "unit_price": 89.0, "currency": "EUR"}]}),
    ("check_stock", {"sku": "SKU-1009"}, {"in_stock": 9, "by_warehouse": {"Berlin": 6, "Hamburg": 3}, "reorder_point": 10,
                                          "on_order": 0, "supplier_id": "SUP-4"}),
    ("check_stock", {"sku": "SKU-1009", "warehouse": "Hamburg"}, {"warehouse": "Hamburg", "in_stock": 3}),
    ("get_price", {"sku": "SKU-1011", "quantity": 40}, {"unit_price": 79.0, "total": 3160.0, "tier": "40+", "currency": "EUR"}),
    ("get_price", {"sku": "SKU-1003", "currency": "JPY"}, {"unit_price": 40139.0, "total": 40139.0, "tier": "base"}),
    ("apply_discount", {"amount": 3160, "code": "spring10"}, {"code": "SPRING10", "percent": 10, "discount": 316.0, "total": 2844.0}),
    ("apply_discount", {"amount": 2000, "code": "VIP20", "customer_id": "CUST-1001"}, {"discount": 400.0, "total": 1600.0}),
    ("search_documents", {"query": "reorder procedure", "limit": 1}, {"results": [{"doc_id": "DOC-307", "title": "Warehouse reorder procedure"}]}),
    ("get_document", {"doc_id": "DOC-301"}, {"title": "Master Supply Agreement - Globex Corporation", "kind": "contract"}),
    ("get_customer", {"customer_id": "cust-1003"}, {"company": "Umbrella Retail AG", "tier": "gold",
                                                    "contact": {"name": "Lea Hoffmann", "email": "lea.hoffmann@umbrella.example",
                                                                "phone": "+49 30 5550 720", "role": "Store Operations"}}),
    ("search_customers", {"query": "Globex"}, {"customers": [{"customer_id": "CUST-1001"}, {"customer_id": "CUST-1007"}]}),
    ("list_tickets", {"customer_id": "CUST-1001", "status": "open"}, {"tickets": [
        {"ticket_id": "TCK-3001", "customer_id": "CUST-1001", "subject": "Late delivery of ORD-5002", "priority": "high",
         "status": "open", "created": "2025-03-12", "assignee": "felix.braun@brightline.example", "order_id": "ORD-5002"},
        {"ticket_id": "TCK-3006", "customer_id": "CUST-1001", "subject": "Broken armrest on ErgoFlex chair", "priority": "normal",
         "status": "open", "created": "2025-03-08", "assignee": "felix.braun@brightline.example", "order_id": "ORD-5001"}]}),
    ("get_ticket", {"ticket_id": "TCK-3003"}, {"priority": "normal", "status": "open", "order_id": "ORD-5004", "comments": []}),
    ("create_ticket", {"customer_id": "CUST-1003", "subject": "Replacement monitors", "description": "Ship 5 monitors",
                       "priority": "high", "order_id": "ORD-5004"},
     {"ticket_id": "TCK-3008", "status": "open", "priority": "high", "created": "2025-03-14", "order_id": "ORD-5004"}),
    ("set_ticket_priority", {"ticket_id": "TCK-3003", "priority": "high", "reason": "stores cannot open"},
     {"previous_priority": "normal", "priority": "high", "changed": True}),
    ("set_ticket_priority", {"ticket_id": "TCK-3001", "priority": "high"}, {"changed": False}),
    ("add_ticket_comment", {"ticket_id": "TCK-3001", "comment": "New ETA 2025-03-18"},
     {"comment_count": 2, "comment": {"author": "dana.weber@brightline.example", "date": "2025-03-14", "text": "New ETA 2025-03-18"}}),
    ("list_files", {"folder": "/notes"}, {"files": [{"path": "/notes/meeting-2025-03-10.md", "size": 551, "updated": "2025-03-10 11:30"}]}),
    ("read_file", {"path": "/reports/q4-2024-sales.csv"}, {"size": 162}),
    ("write_file", {"path": "/reports/weekly-2025-11.md", "content": "# Weekly report"}, {"created": True, "status": "written", "size": 15}),
    ("calculate", {"expression": "(429 * 4 + 69 * 4) * 0.1"}, {"result": 199.2}),
    ("convert_units", {"value": 5, "from_unit": "mi", "to_unit": "km"}, {"result": 8.04672, "dimension": "length"}),
    ("convert_currency", {"amount": 100, "from_currency": "USD", "to_currency": "GBP"}, {"converted": 77.42, "rates_date": "2025-03-14"}),
]

ERROR_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("get_weather", {"city": "Atlantis"}, "not_found"),
    ("get_forecast", {"city": "Berlin", "date": "2025-04-01"}, "out_of_range"),
    ("list_events", {"date": "2025-03-18", "end_date": "2025-03-17"}, "bad_range"),
    ("create_event", {"title": "x", "date": "2025-03-17", "start": "13:30", "end": "14:00"}, "conflict"),
    ("create_event", {"title": "x", "date": "2025-03-13", "start": "10:00", "end": "11:00"}, "in_past"),
    ("create_event", {"title": "x", "date": "2025-03-17", "start": "11:00", "end": "10:00"}, "bad_range"),
    ("create_reminder", {"title": "x", "date": "2025-03-14", "time": "09:00"}, "in_past"),
    ("read_email", {"message_id": "MSG-999"}, "not_found"),
    ("send_email", {"to": "a@b.example", "subject": "s", "body": "b", "in_reply_to": "MSG-999"}, "not_found"),
    ("get_order", {"order_id": "ORD-9999"}, "not_found"),
    ("list_orders", {"customer_id": "CUST-9999"}, "not_found"),
    ("track_shipment", {"tracking_number": "TRK-99999"}, "not_found"),
    ("place_order", {"sku": "SKU-9999", "quantity": 5}, "not_found"),
    ("place_order", {"sku": "SKU-1006", "quantity": 5}, "below_minimum"),
    ("place_order", {"sku": "SKU-1002", "quantity": 5, "deliver_by": "2025-03-20"}, "cannot_deliver_by"),
    ("cancel_order", {"order_id": "ORD-5002", "reason": "late"}, "not_cancellable"),
    ("check_stock", {"sku": "SKU-0000"}, "not_found"),
    ("get_price", {"sku": "SKU-0000"}, "not_found"),
    ("apply_discount", {"amount": 500, "code": "WINTER15"}, "expired"),
    ("apply_discount", {"amount": 50, "code": "SPRING10"}, "below_minimum"),
    ("apply_discount", {"amount": 5000, "code": "VIP20"}, "customer_required"),
    ("apply_discount", {"amount": 5000, "code": "VIP20", "customer_id": "CUST-1002"}, "not_eligible"),
    ("apply_discount", {"amount": 500, "code": "TRENDS30"}, "not_found"),
    ("get_document", {"doc_id": "DOC-999"}, "not_found"),
    ("get_customer", {"customer_id": "CUST-9999"}, "not_found"),
    ("get_ticket", {"ticket_id": "TCK-9999"}, "not_found"),
    ("create_ticket", {"customer_id": "CUST-1003", "subject": "s", "description": "d", "priority": "low",
                       "order_id": "ORD-5001"}, "mismatch"),
    ("set_ticket_priority", {"ticket_id": "TCK-3005", "priority": "high"}, "closed"),
    ("add_ticket_comment", {"ticket_id": "TCK-2998", "comment": "x"}, "closed"),
    ("read_file", {"path": "/reports/missing.csv"}, "not_found"),
    ("read_file", {"path": "/reports/../secret"}, "bad_path"),
    ("write_file", {"path": "/templates/weekly-report.md", "content": "x", "overwrite": True}, "read_only"),
    ("write_file", {"path": "/notes/meeting-2025-03-10.md", "content": "x"}, "exists"),
    ("calculate", {"expression": "1 / 0"}, "math_error"),
    ("calculate", {"expression": "__import__('os')"}, "bad_expression"),
    ("convert_units", {"value": 1, "from_unit": "kg", "to_unit": "m"}, "incompatible"),
    ("delegate", {"task": "look up the weather in Paris"}, "unavailable"),
]


def subset(expected: Any, actual: Any) -> bool:
    """Whether ``expected`` appears in ``actual`` (dict keys recursively, list items in order)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(map(subset, expected, actual))
    return bool(expected == actual and type(expected) is type(actual))


@pytest.mark.parametrize(("tool", "args", "expected"), OK_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(OK_CASES)])
def test_valid_call_gives_documented_result(call: Any, tool: str, args: dict[str, Any], expected: dict[str, Any]) -> None:
    outcome = call(tool, args)
    assert outcome.status_code == 200, outcome.body
    assert subset(expected, outcome.body), outcome.body
    assert outcome.probe_call_row.status == "ok"


@pytest.mark.parametrize(("tool", "args", "code"), ERROR_CASES, ids=[f"{c[0]}-{c[2]}" for c in ERROR_CASES])
def test_refusals_are_tool_errors(call: Any, tool: str, args: dict[str, Any], code: str) -> None:
    before = call.state() if call.service.state(call.run, call.task, call.attempt) else None
    outcome = call(tool, args)
    assert (outcome.status_code, outcome.body["error"]) == (400, code), outcome.body
    assert outcome.body["message"]
    assert outcome.probe_call_row.status == "error"
    if before is not None:
        assert call.state() == before, "a refused call changes nothing"


def test_every_tool_has_a_documented_case() -> None:
    assert {c[0] for c in OK_CASES} | {"delegate"} == set(tool_names())


def test_same_input_same_output() -> None:
    """Two fresh services given the same calls answer identically (no clock, no randomness)."""
    from probegate.probes.service import ProbeService

    def replay() -> list[Any]:
        service = ProbeService()
        bodies = []
        for tool, args, _ in OK_CASES:
            outcome = service.call("run1", "t1", 0, tool, json.dumps(args).encode())
            bodies.append((outcome.status_code, outcome.body))
        return bodies

    assert replay() == replay()
