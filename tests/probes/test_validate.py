"""Argument validation: missing / unknown / invalid, formats, and the two feedback styles."""

from __future__ import annotations

import json
from typing import Any

import pytest

from probegate.probes.catalog import get_tool
from probegate.probes.validate import BODY_KEY, blocked_body, describe, hint, is_date, is_email, is_time, parse_body, validate_args


def check(tool: str, args: Any) -> Any:
    raw = args if isinstance(args, bytes) else json.dumps(args).encode()
    return validate_args(get_tool(tool).parameters, raw)


@pytest.mark.parametrize(
    ("tool", "args", "missing", "unknown", "invalid"),
    [
        ("send_email", {"to": "a@b.example", "subject": "s", "body": "b"}, [], [], {}),
        ("send_email", {"to": "a@b.example"}, ["subject", "body"], [], {}),
        ("send_email", {"to": "bob", "subject": "s", "body": "b"}, [], [], {"to": "not an email address"}),
        ("send_email", {"to": "a@b.example", "subject": "", "body": "b"}, [], [], {"subject": "must not be empty"}),
        ("send_email", {"to": "a@b.example", "subject": "s", "body": "b", "cc": ["x"]}, [], [],
         {"cc": "item 0: not an email address"}),
        ("send_email", {"to": "a@b.example", "subject": "s", "body": "b", "priority": "high"}, [], ["priority"], {}),
        ("create_reminder", {"title": "t", "date": "2025-02-30", "time": "9:00"}, [], [],
         {"date": "not a date in the form YYYY-MM-DD", "time": "not a 24-hour time in the form HH:MM"}),
        ("create_reminder", {"title": "t", "date": "2025-03-20", "time": "24:00"}, [], [],
         {"time": "not a 24-hour time in the form HH:MM"}),
        ("set_ticket_priority", {"ticket_id": "TCK-3003", "priority": "critical"}, [], [],
         {"priority": "not one of: low, normal, high, urgent"}),
        ("place_order", {"sku": "SKU-1006", "quantity": "5"}, [], [], {"quantity": "expected integer, got string"}),
        ("place_order", {"sku": "SKU-1006", "quantity": 0}, [], [], {"quantity": "must be at least 1"}),
        ("place_order", {"sku": "SKU-1006", "quantity": True}, [], [], {"quantity": "expected integer, got boolean"}),
        ("place_order", {"sku": "1006", "quantity": 5}, [], [], {"sku": "not in the expected form"}),
        ("get_weather", {"city": None}, [], [], {"city": "expected string, got null"}),
        ("list_inbox", {}, [], [], {}),
        ("list_inbox", b"", [], [], {}),
    ],
)
def test_classification(tool: str, args: Any, missing: list[str], unknown: list[str], invalid: dict[str, str]) -> None:
    verdict = check(tool, args)
    assert (verdict.missing, verdict.unknown, verdict.invalid) == (missing, unknown, invalid)
    assert verdict.ok is (not missing and not unknown and not invalid)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"{", "not valid JSON"),
        (b"[1, 2]", "expected a JSON object, got array"),
        (b'"{\\"city\\": \\"Berlin\\"}"', "expected a JSON object, got string"),
        (b"\xff\xfe", "not UTF-8 text"),
        (b"[" * 100_000, "not valid JSON"),
        (b'{"city": NaN}', "not valid JSON (NaN is not JSON)"),
        (b'{"city": 1e999}', "not valid JSON (1e999 is out of range)"),
    ],
)
def test_unusable_body_is_invalid_as_a_whole(raw: bytes, reason: str) -> None:
    verdict = check("get_weather", raw)
    assert verdict.args is None and not verdict.ok
    assert verdict.invalid[BODY_KEY].startswith(reason)


def test_whole_floats_become_integers() -> None:
    verdict = check("place_order", {"sku": "SKU-1006", "quantity": 12.0})
    assert verdict.ok and verdict.args == {"sku": "SKU-1006", "quantity": 12}
    assert type(verdict.args["quantity"]) is int


@pytest.mark.parametrize(
    ("fn", "value", "ok"),
    [
        (is_email, "name@example.com", True),
        (is_email, "a.b+c@sub.domain.example", True),
        (is_email, "name@localhost", False),
        (is_email, "name example.com", False),
        (is_email, " name@example.com", False),
        (is_date, "2024-02-29", True),
        (is_date, "2025-02-29", False),
        (is_date, "2025-3-1", False),
        (is_time, "00:00", True),
        (is_time, "23:59", True),
        (is_time, "7:30", False),
        (is_time, "12:60", False),
        (is_time, "12:30:00", False),
        (is_email, 5, True),  # non-strings are left to the type check
    ],
)
def test_formats(fn: Any, value: Any, ok: bool) -> None:
    assert fn(value) is ok


def test_parse_body_empty_means_no_arguments() -> None:
    assert parse_body(b"  \n") == ({}, None)


def test_plain_hint_is_bare() -> None:
    schema = get_tool("send_email").parameters
    verdict = check("send_email", {"to": "bob"})
    assert hint("send_email", schema, verdict, "plain") == "invalid parameters for send_email"


def test_actionable_hint_says_how_to_fix_each_problem() -> None:
    schema = get_tool("send_email").parameters
    verdict = check("send_email", {"to": "bob", "subject": "Hi", "urgent": True})
    text = hint("send_email", schema, verdict, "actionable")
    assert "`to` must be an email address such as name@example.com (got \"bob\")" in text
    assert "Add `body`: a non-empty string" in text
    assert "Remove `urgent`: send_email accepts only to, subject, body, cc, in_reply_to" in text


def test_actionable_hint_for_a_non_object_body() -> None:
    schema = get_tool("get_weather").parameters
    text = hint("get_weather", schema, check("get_weather", [1]), "actionable")
    assert text.startswith('Send the arguments of get_weather as one JSON object such as {"city": ...}')


@pytest.mark.parametrize(
    ("prop", "words"),
    [
        ({"type": "string", "format": "date"}, "a date in the form YYYY-MM-DD such as 2025-01-31"),
        ({"type": "string", "format": "time"}, "a 24-hour time in the form HH:MM such as 14:30"),
        ({"type": "string", "enum": ["a", "b"]}, "one of: a, b"),
        ({"type": "integer", "minimum": 1, "maximum": 5}, "a whole number from 1 to 5"),
        ({"type": "integer", "minimum": 1}, "a whole number of at least 1"),
        ({"type": "number"}, "a number"),
        ({"type": "boolean"}, "true or false"),
        ({"type": "string", "description": "Subject line.", "minLength": 1}, "a non-empty string (Subject line)"),
        ({"type": "array", "items": {"type": "string", "format": "email"}, "maxItems": 3},
         "a JSON list (at most 3 items), each an email address such as name@example.com"),
    ],
)
def test_describe(prop: dict[str, Any], words: str) -> None:
    assert describe(prop) == words


def test_blocked_body_shape() -> None:
    schema = get_tool("send_email").parameters
    body = blocked_body("send_email", schema, check("send_email", {"to": "bob", "x": 1}), "plain")
    assert body == {
        "error": "invalid_params",
        "missing": ["subject", "body"],
        "invalid": {"to": "not an email address"},
        "unknown": ["x"],
        "hint": "invalid parameters for send_email",
    }
