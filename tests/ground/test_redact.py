"""The redaction pass (pure, table-driven): every kind of stored text."""

from __future__ import annotations

import json

import pytest

from probegate.redact import MARK, SECRETS, make_redactor, secret_name
from probegate.store.models import Exchange, ProbeCall, Run, WorldState
from probegate.store.redaction import REBUILT_FLAG, redact_row

KEY = "sk-proj-abcdefghijklmnopqrstuvwx"
PII = make_redactor(pii=True)


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("authorization", True),
        ("Proxy-Authorization", True),
        ("x-goog-api-key", True),
        ("x-auth-token", True),
        ("openai-organization", True),
        ("openai-project", True),
        ("x-my-secret", True),
        ("cookie", True),
        ("api_key", True),
        ("access_token", True),
        ("key", True),
        ("x-ratelimit-remaining-tokens", False),
        ("content-type", False),
        ("user-agent", False),
        ("x-request-id", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert secret_name(name) is secret


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"key {KEY} end", f"key {MARK} end"),
        ('{"k": "sk\\u002dproj-abcdefghijklmnopqrstuvwx"}', f'{{"k": "{MARK}"}}'),
        ('{"k": "\\u0073k-proj-abcdefghijklmnopqrstuvwx"}', f'{{"k": "{MARK}"}}'),
        # a JSON document inside a JSON string (tool-call arguments), escaped twice
        (json.dumps({"arguments": '{"k": "sk\\u002dproj-abcdefghijklmnopqrstuvwx"}'}),
         json.dumps({"arguments": json.dumps({"k": MARK})})),
        ('"Bearer abcdefghij\\/klmnop"', f'"{MARK}"'),
        ("AIzaSyA1234567890abcdefghijklmnopqrstuv", MARK),
        ('{"text": "a \\"quoted\\" word\\n"}', '{"text": "a \\"quoted\\" word\\n"}'),
        ("nothing secret", "nothing secret"),
    ],
)
def test_text_catches_escaped_forms(text: str, expected: str) -> None:
    assert SECRETS.text(text) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (f"key={KEY}", "key=%5Bredacted%5D"),
        ("key=AIza-not-pattern-shaped", "key=%5Bredacted%5D"),
        ("api-version=2024-02-01&api_key=abc", "api-version=2024-02-01&api_key=%5Bredacted%5D"),
        (f"q={KEY}&n=1", "q=%5Bredacted%5D&n=1"),
        ("q=ann%40corp.example", "q=%5Bredacted%5D"),
        ("stream=true&n=2", "stream=true&n=2"),
        ("", ""),
    ],
)
def test_query(query: str, expected: str) -> None:
    assert PII.query(query) == expected


def test_headers_and_url() -> None:
    headers = {"authorization": f"Bearer {KEY}", "x-goog-api-key": "AIza0", "x-auth-token": "t0k",
               "openai-organization": "org-123", "x-ratelimit-remaining-tokens": "99",
               "x-note": f"mail ann@corp.example {KEY}", "content-type": "application/json"}
    assert PII.headers(headers) == {
        "authorization": f"Bearer {MARK}", "x-goog-api-key": MARK, "x-auth-token": MARK,
        "openai-organization": MARK, "x-ratelimit-remaining-tokens": "99",
        "x-note": f"mail {MARK} {MARK}", "content-type": "application/json",
    }
    assert SECRETS.url("http://user:hunter2@h:1/v1?key=abc&n=1") == f"http://user:{MARK}@h:1/v1?key=%5Bredacted%5D&n=1"


def _chat_events(*contents: str) -> list[dict[str, object]]:
    return [{"t": float(i), "data": json.dumps({"choices": [{"index": 0, "delta": {"content": c}}]})}
            for i, c in enumerate(contents)] + [{"t": 9.0, "data": "[DONE]"}]


def test_stream_joins_deltas_before_scanning() -> None:
    events = _chat_events("your key: sk-pr", "oj-abcdefghij", "klmnopqrstuvwx, mail ann@", "corp.example.", " bye")
    clean = PII.stream(events)
    assert clean is not None
    joined = "".join(json.loads(e["data"])["choices"][0]["delta"]["content"] for e in clean[:-1])
    assert joined == f"your key: {MARK}, mail {MARK}. bye"
    assert clean[-1] == {"t": 9.0, "data": "[DONE]"}
    stored = json.dumps(clean)
    for piece in ("oj-abcdefghij", "klmnopqrstuvwx", "corp.example"):
        assert piece not in stored


def test_stream_tool_call_arguments_split() -> None:
    def ev(args: str) -> dict[str, object]:
        call = {"index": 0, "function": {"arguments": args}}
        return {"t": 1.0, "data": json.dumps({"choices": [{"delta": {"tool_calls": [call]}}]})}

    clean = SECRETS.stream([ev('{"token": "sk-'), ev('proj-abcdefgh'), ev('ijklmnopqrstu"}')])
    args = "".join(json.loads(e["data"])["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] for e in clean or [])
    assert args == f'{{"token": "{MARK}"}}'


def test_exchange_row_raw_stream_kept_consistent() -> None:
    events = _chat_events("k=sk-pr", "oj-abcdefghijklmnopqrstuvwx.")
    raw = "".join(f"data: {e['data']}\n\n" for e in events).encode()
    row = Exchange(run_id="r", task_id="t", stream=True, stream_format="sse", sse_events=events, response_raw=raw,
                   query=f"key={KEY}", request_headers={"x-goog-api-key": "AIza0"},
                   request_body={"messages": [{"content": KEY}]}, request_raw=KEY.encode())
    clean = redact_row(row)
    assert clean.response_raw == "".join(f"data: {e['data']}\n\n" for e in clean.sse_events or []).encode()
    assert b"oj-abcdefghijklmnopqrstuvwx" not in (clean.response_raw or b"")
    assert REBUILT_FLAG not in (clean.flags or [])
    assert clean.query == "key=%5Bredacted%5D" and clean.request_headers == {"x-goog-api-key": MARK}
    assert clean.request_body == {"messages": [{"content": MARK}]} and clean.request_raw == MARK.encode()
    assert row.query == f"key={KEY}"  # the row given is not changed


def test_raw_stream_that_cannot_be_matched_is_rebuilt() -> None:
    events = _chat_events("k=sk-pr", "oj-abcdefghijklmnopqrstuvwx.")
    row = Exchange(run_id="r", task_id="t", stream=True, stream_format="sse", sse_events=events,
                   response_raw=b"\x1f\x8b compressed bytes")
    clean = redact_row(row)
    assert REBUILT_FLAG in (clean.flags or [])
    assert clean.response_raw is not None and clean.response_raw.startswith(b"data: ")


@pytest.mark.parametrize(
    "row",
    [
        Run(id="run1", upstream=f"http://h/v1?key={KEY}", params={"outcomes": {"t/0": {"answer": f"it is {KEY}"}}}),
        ProbeCall(run_id="run1", task_id="t", tool="send_email", raw_args=f'{{"body": "{KEY}"}}',
                  args={"body": KEY}, result={"echo": KEY}),
        WorldState(run_id="run1", task_id="t", state={"outbox": [{"body": KEY, KEY: 1}]}),
    ],
)
def test_every_table(row: Run | ProbeCall | WorldState) -> None:
    clean = redact_row(row)
    assert KEY not in json.dumps(clean.model_dump(mode="json"))
    assert clean.model_dump(include={"id", "run_id", "task_id"}) == row.model_dump(include={"id", "run_id", "task_id"})


def test_chunk_sizes_follow_the_scrubbed_body() -> None:
    raw = f"data: {KEY}\n\n".encode() * 3
    chunks = [[1.0, 10], [2.0, len(raw) - 20], [3.0, 10]]
    clean = redact_row(Exchange(run_id="r", task_id="t", response_raw=raw, chunks=chunks))
    assert clean.response_raw == f"data: {MARK}\n\n".encode() * 3
    assert [t for t, _ in clean.chunks or []] == [1.0, 2.0, 3.0]
    assert sum(size for _, size in clean.chunks or []) == len(clean.response_raw)
