"""Black-box mode: a mitmproxy addon that answers mapped API hosts from the probes."""

from gateway.intercept.addon import ProbegateIntercept, refusal, should_stream
from gateway.intercept.backend import HttpBackend, InProcessBackend, ProbeBackend
from gateway.intercept.mapping import (
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
from gateway.intercept.proxyauth import Attribution, parse_proxy_authorization
from gateway.intercept.server import InterceptProxy

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
