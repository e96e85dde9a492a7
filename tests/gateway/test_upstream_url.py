"""Joining the upstream base URL and a request path (pure)."""

from __future__ import annotations

import pytest

from probegate.gateway.upstream import upstream_url


@pytest.mark.parametrize(("base", "path", "url"), [
    ("http://h:8080", "/v1/models", "http://h:8080/v1/models"),
    ("http://h:8080/v1", "/v1/chat/completions", "http://h:8080/v1/chat/completions"),
    ("http://h:8080/v1/", "/v1", "http://h:8080/v1"),
    # Ollama's native routes sit next to /v1: a base given with /v1 still reaches them
    ("http://h:11434", "/api/chat", "http://h:11434/api/chat"),
    ("http://h:11434/v1", "/api/chat", "http://h:11434/api/chat"),
    ("http://h:11434/v1/", "/api/generate", "http://h:11434/api/generate"),
    ("http://h/ollama/v1", "/api/chat", "http://h/ollama/api/chat"),
])
def test_upstream_url(base: str, path: str, url: str) -> None:
    assert upstream_url(base, path, "") == url


def test_the_query_and_odd_characters_travel() -> None:
    assert upstream_url("http://h", "/v1/a b", "x=1") == "http://h/v1/a%20b?x=1"
