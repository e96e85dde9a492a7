"""Run, task and attempt from proxy credentials (pure)."""

from __future__ import annotations

import base64

import pytest

from probegate.probes.intercept.proxyauth import USAGE, Attribution, parse_proxy_authorization


def basic(text: str) -> str:
    return "Basic " + base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("", None),
        (basic("run1:t01"), Attribution("run1", "t01", 0)),
        (basic("run1:t01/3"), Attribution("run1", "t01", 3)),
        (basic("run1:t01%2F2"), Attribution("run1", "t01", 2)),
        ("basic  " + base64.b64encode(b"r:t").decode(), Attribution("r", "t", 0)),
    ],
)
def test_parse(header: str | None, expected: Attribution | None) -> None:
    assert parse_proxy_authorization(header) == expected


@pytest.mark.parametrize(
    "header",
    ["Bearer abc", "Basic !!!", basic("run1"), basic("run 1:t01"), basic("run1:t01/x"), basic(":t01"), basic("r:t/1/2")],
)
def test_malformed_credentials(header: str) -> None:
    with pytest.raises(ValueError, match="RUN:TASK"):
        parse_proxy_authorization(header)
    assert "http://run1:t01@127.0.0.1:8080" in USAGE
