"""The addon's pure helpers and its option handling."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import exceptions
from mitmproxy.http import Headers
from mitmproxy.test import taddons

from probegate.probes.intercept.addon import ProbegateIntercept, refusal, should_stream

EXAMPLE = Path(__file__).resolve().parents[2] / "probes" / "mappings" / "example.yaml"


@pytest.mark.parametrize(
    ("headers", "stream"),
    [
        ({"content-type": "text/event-stream", "content-length": "10"}, True),
        ({"content-type": "text/event-stream; charset=utf-8"}, True),
        ({"content-type": "application/x-ndjson"}, True),
        ({"content-type": "application/json"}, True),  # no length: chunked, pass on as it comes
        ({"content-type": "application/json", "content-length": "12"}, False),
    ],
)
def test_should_stream(headers: dict[str, str], stream: bool) -> None:
    assert should_stream(Headers(**{k.replace("-", "_"): v for k, v in headers.items()})) is stream


def test_refusal_messages() -> None:
    assert refusal("example.com", "GET", "/x?y=1", False)["message"] == (
        "probegate intercept: host example.com is not mapped to a probe; the request was not sent anywhere")
    assert "GET /v9/x on api.weather.example is not mapped" in refusal("api.weather.example", "GET", "/v9/x?q", True)["message"]


def test_configure_loads_the_mapping_and_options() -> None:
    addon = ProbegateIntercept()
    with taddons.context(addon) as tctx:
        tctx.configure(addon, probegate_map=str(EXAMPLE), probegate_allow=["gateway.local"],
                       probegate_probes="http://127.0.0.1:1")
        assert len(addon.mapping.routes) == 36
        assert addon.allow == frozenset({"gateway.local"})
        assert addon.backend is not None
        addon.done()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"probegate_map": "/nonexistent/map.yaml"}, "cannot read mapping file"),
        ({"probegate_probes": "ftp://x"}, "must be an http(s) URL"),
    ],
)
def test_configure_refuses_bad_options(options: dict[str, Any], message: str) -> None:
    addon = ProbegateIntercept()
    with taddons.context(addon) as tctx:
        with pytest.raises(exceptions.OptionsError, match=re.escape(message)):
            tctx.configure(addon, **options)
