"""The public names of ``gateway.intercept``."""

from __future__ import annotations

import gateway.intercept


def test_exported_members() -> None:
    assert gateway.intercept.__all__ == [
        "ArgSpec", "Attribution", "HttpBackend", "InProcessBackend", "InterceptProxy", "Mapping", "MappingError",
        "ProbeBackend", "ProbegateIntercept", "Route", "RouteMatch", "call_body", "load_mapping", "match_route",
        "parse_mapping", "parse_proxy_authorization", "refusal", "should_stream",
    ]
    assert all(hasattr(gateway.intercept, name) for name in gateway.intercept.__all__)
