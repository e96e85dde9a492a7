"""Secrets never reach the store; the wire is never changed."""

from __future__ import annotations

import gzip
import json

import httpx
import pytest
from sqlmodel import Session, select

from probegate.redact import MARK, make_redactor
from probegate.errors import UsageError
from probegate.store import Exchange
from probegate.testing import Reply, chat_completion

KEY = "sk-proj-abcdefghijklmnopqrstuvwx"


@pytest.mark.parametrize(
    ("text", "pii", "expected"),
    [
        (f"key {KEY} end", False, f"key {MARK} end"),
        ("Authorization: Bearer abcdefghijklmnop123", False, f"Authorization: {MARK}"),
        ("AKIAABCDEFGHIJKLMNOP", False, MARK),
        ("mail ann@example.com", False, "mail ann@example.com"),
        ("mail ann@example.com", True, f"mail {MARK}"),
        ("nothing secret", True, "nothing secret"),
    ],
)
def test_default_patterns(text: str, pii: bool, expected: str) -> None:
    assert make_redactor(pii=pii).text(text) == expected


def test_json_and_user_patterns() -> None:
    r = make_redactor([r"ACME-\d{4}"])
    assert r.json({"a": ["ACME-1234", {"ACME-9999": 1}], "n": 2}) == {"a": [MARK, {MARK: 1}], "n": 2}
    assert r.raw(b'{"k": "ACME-0000"}') == b'{"k": "[redacted]"}'
    with pytest.raises(UsageError, match="not a valid regex"):
        make_redactor(["(unclosed"])


def test_stored_bodies_are_redacted_forwarded_are_not(upstream, gateway_factory) -> None:
    script, server = upstream
    script.push(Reply.json(chat_completion(f"your key is {KEY}, mail bob@corp.example")))
    payload = gzip.compress(json.dumps(chat_completion(f"zipped {KEY}")).encode())
    script.push(Reply(200, [("content-type", "application/json"), ("content-encoding", "gzip")], body=payload))
    gw = gateway_factory(server.url, redact_pii=True, redact=[r"INTERNAL-\d+"])
    body = {"model": "m", "messages": [{"role": "user", "content": f"use {KEY} for INTERNAL-42 and ann@x.org"}]}
    first = httpx.post(f"{gw.base('r', 'sec')}/chat/completions", json=body)
    second = httpx.post(f"{gw.base('r', 'sec')}/chat/completions", json=body, headers={"accept-encoding": "gzip"})
    assert KEY in first.text and KEY in second.json()["choices"][0]["message"]["content"]
    assert KEY in script.requests[0].body.decode()
    gw.flush()
    with Session(gw.engine) as session:
        rows = session.exec(select(Exchange).order_by(Exchange.seq)).all()
    for row in rows:
        stored = json.dumps([row.request_body, row.response_body, row.completion]) + row.response_raw.decode("latin-1")
        assert KEY not in stored and "INTERNAL-42" not in stored and "ann@x.org" not in stored
    assert "bob@corp.example" not in rows[0].response_raw.decode()
    assert rows[1].flags == ["raw_decoded_for_redaction"]
    assert MARK in rows[1].completion["assistant"]["content"]
