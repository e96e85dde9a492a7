"""The public names of ``probegate.probes.intercept``."""

from __future__ import annotations

import probegate.probes.intercept


def test_exported_members() -> None:
    assert probegate.probes.intercept.__all__ == [
        "ArgSpec", "Attribution", "HttpBackend", "InProcessBackend", "InterceptProxy", "Mapping", "MappingError",
        "ProbeBackend", "ProbegateIntercept", "Route", "RouteMatch", "call_body", "load_mapping", "match_route",
        "parse_mapping", "parse_proxy_authorization", "refusal", "should_stream",
    ]
    assert all(hasattr(probegate.probes.intercept, name) for name in probegate.probes.intercept.__all__)
