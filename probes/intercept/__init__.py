"""Black-box mode: a mitmproxy addon that answers mapped API hosts from the probes."""

from probegate.probes.intercept.addon import ProbegateIntercept, refusal, should_stream
from probegate.probes.intercept.backend import HttpBackend, InProcessBackend, ProbeBackend
from probegate.probes.intercept.mapping import (
    ArgSpec,
    Mapping,
    MappingError,
    Route,
    RouteMatch,
    call_body,
    load_mapping,
    match_route,
    parse_mapping,
)
from probegate.probes.intercept.proxyauth import Attribution, parse_proxy_authorization
from probegate.probes.intercept.server import InterceptProxy

__all__ = [
    "ArgSpec",
    "Attribution",
    "HttpBackend",
    "InProcessBackend",
    "InterceptProxy",
    "Mapping",
    "MappingError",
    "ProbeBackend",
    "ProbegateIntercept",
    "Route",
    "RouteMatch",
    "call_body",
    "load_mapping",
    "match_route",
    "parse_mapping",
    "parse_proxy_authorization",
    "refusal",
    "should_stream",
]
