"""Fuzzing the gateway's request handling: never a 500 from our own code."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SEGMENT = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="/?#", exclude_categories=("Cs",)),
                  max_size=12)
PATHS = st.one_of(
    st.lists(SEGMENT, max_size=6).map(lambda s: "/" + "/".join(s)),
    st.tuples(SEGMENT, SEGMENT, st.sampled_from(["", "/0", "/x", "/99999999999"]),
              st.sampled_from(["/v1/chat/completions", "/v1/models", "/api/chat", "/tools", "/tools/x", "/v2", ""]))
    .map(lambda t: f"/r/{t[0]}/{t[1]}{t[2]}{t[3]}"),
    st.sampled_from(["/v1", "/v1/", "/api/", "/r/", "/r//x/v1/models", "/probegate/health", "/v1/../probegate/health"]),
)
HEADER_NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=15)
HEADER_VALUE = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), max_size=40)


@pytest.fixture
def store_url(sqlite_url: str) -> str:
    """Request handling does not depend on the store: SQLite only."""
    return sqlite_url


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]),
    path=PATHS,
    body=st.one_of(st.binary(max_size=300), st.just(b'{"model": "m", "messages": []}'),
                   st.just(b'{"stream": true}'), st.just(b"[]")),
    headers=st.dictionaries(HEADER_NAME, HEADER_VALUE, max_size=4),
)
def test_no_500_from_the_gateway(gateway, method: str, path: str, body: bytes, headers: dict[str, str]) -> None:
    headers = {k: v for k, v in headers.items() if k not in ("content-length", "host", "transfer-encoding")}
    with httpx.Client(base_url=gateway.url, timeout=10) as client:
        request = client.build_request(method, "http://placeholder", content=body, headers=headers)
        raw_path = quote(path, safe="/%:@!$&'()*+,;=").encode()
        request.url = httpx.URL(gateway.url).copy_with(raw_path=raw_path)
        response = client.send(request)
    assert response.status_code < 500, (method, path, response.status_code, response.text[:300])
    assert httpx.get(f"{gateway.url}/probegate/health").status_code == 200
