"""SSE / NDJSON framing: any split, any line ending."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from probegate.wire.sse import NDJSONParser, SSEParser, parse_stream

BODY = 'data: {"a":1}\n\n: keep-alive\n\nevent: delta\nid: 7\ndata: line1\ndata: line2\n\ndata: [DONE]\n\n'


def _feed_all(body: bytes, sizes: list[int]) -> list:
    parser = SSEParser()
    events, i = [], 0
    for size in sizes:
        events += parser.feed(body[i : i + size])
        i += size
    events += parser.feed(body[i:])
    return events + parser.close()


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_line_endings(eol: str) -> None:
    body = BODY.replace("\n", eol).encode()
    events = _feed_all(body, [])
    assert [e.data for e in events] == ['{"a":1}', "line1\nline2", "[DONE]"]
    assert events[1].event == "delta" and events[1].id == "7"


@given(st.lists(st.integers(min_value=1, max_value=9), max_size=40), st.sampled_from(["\n", "\r\n", "\r"]))
def test_any_split_gives_same_events(sizes: list[int], eol: str) -> None:
    body = BODY.replace("\n", eol).encode()
    assert [e.data for e in _feed_all(body, sizes)] == ['{"a":1}', "line1\nline2", "[DONE]"]


def test_bom_comment_and_final_event_without_blank_line() -> None:
    parser = SSEParser()
    events = parser.feed("\ufeff: hi\ndata: x".encode())
    events += parser.close()
    assert [e.data for e in events] == ["x"] and parser.comments == 1


def test_split_utf8_character() -> None:
    raw = 'data: {"t":"天气"}\n\n'.encode()
    events = _feed_all(raw, [len(raw) - 6, 1])
    assert events[0].data == '{"t":"天气"}'


def test_ndjson_and_offsets() -> None:
    events, comments = parse_stream([(1.0, b'{"a":1}\n{"b"'), (2.5, b":2}\n\n{\"c\":3}")], "ndjson")
    assert [(e.data, e.t_ms) for e in events] == [('{"a":1}', 1.0), ('{"b":2}', 2.5), ('{"c":3}', 2.5)]
    assert comments == 0


def test_ndjson_parser_skips_blank_lines() -> None:
    parser = NDJSONParser()
    assert [e.data for e in parser.feed(b"\n\n{}\n")] == ["{}"]
