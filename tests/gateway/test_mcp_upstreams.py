"""``--mcp-upstream NAME=URL`` parsing (pure)."""

from __future__ import annotations

import pytest

from probegate.errors import UsageError
from probegate.gateway.mcp_upstreams import parse_mcp_upstreams


def test_names_to_urls() -> None:
    assert parse_mcp_upstreams(["shop=http://127.0.0.1:9000/mcp", " docs = https://h/x?k=1 "]) == {
        "shop": "http://127.0.0.1:9000/mcp", "docs": "https://h/x?k=1"}
    assert parse_mcp_upstreams([]) == {}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (["shop"], "wants NAME=URL"),
        (["=http://h/mcp"], "wants NAME=URL"),
        (["shop="], "wants NAME=URL"),
        (["a/b=http://h/mcp"], "not usable in a URL"),
        (["shop=ftp://h/mcp"], "must be http"),
        (["shop=http:///mcp"], "must be http"),
        (["shop=http://a/mcp", "shop=http://b/mcp"], "given twice"),
    ],
)
def test_bad_values_are_usage_errors(values: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_mcp_upstreams(values)
