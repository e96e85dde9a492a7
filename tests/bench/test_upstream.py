"""The bench upstream's stream length (pure)."""

from __future__ import annotations

import pytest

from bench.upstream import CHUNKS, stream_chunks


@pytest.mark.parametrize(
    ("body", "expected"),
    [(b'{"stream": true}', 201), (b'{"stream": true, "max_tokens": 3}', 4), (b'{"max_tokens":0}', 1),
     (b'{"max_tokens": 5000}', 201)],
)
def test_stream_chunks(body: bytes, expected: int) -> None:
    chunks = stream_chunks(body)
    assert len(chunks) == expected
    assert chunks[-1] == CHUNKS[-1] == b"data: [DONE]\n\n"
