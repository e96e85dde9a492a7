"""The intercept mapping file: parsing, route matching, argument extraction (pure)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from probegate.probes.intercept.mapping import (
    ArgSpec,
    Mapping,
    MappingError,
    Route,
    RouteMatch,
    call_body,
    convert,
    host_matches,
    load_mapping,
    match_route,
    parse_mapping,
)
from probegate.probes.catalog import tool_names

EXAMPLE = Path(__file__).resolve().parents[2] / "probes" / "mappings" / "example.yaml"


def test_example_mapping_covers_every_tool_but_delegate() -> None:
    mapping = load_mapping(EXAMPLE, tool_names())
    assert {r.tool for r in mapping.routes} == set(tool_names()) - {"delegate"}


def test_parse_short_and_long_argument_forms() -> None:
    mapping = parse_mapping({"version": 1, "routes": [
        {"host": "API.Weather.example", "method": "get", "path": "/v1/forecast/{city}", "tool": "get_forecast",
         "args": {"city": "path.city", "days": {"from": "query.days", "type": "integer"}, "units": {"value": "celsius"}}},
        {"host": "api.mail.example", "path": "/v1/messages", "tool": "send_email", "args": "body"},
    ]})
    weather, mail = mapping.routes
    assert weather == Route("api.weather.example", "GET", "/v1/forecast/{city}", "get_forecast", {
        "city": ArgSpec("path", "city"), "days": ArgSpec("query", "days", "integer"),
        "units": ArgSpec("value", "", "auto", "celsius")})
    assert mail.method == "*" and mail.args is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "needs a 'routes' list"),
        ({"routes": "x"}, "needs a 'routes' list"),
        ({"version": 2, "routes": []}, "version 2 is not supported"),
        ({"routes": ["x"]}, "routes[0]: must be a mapping"),
        ({"routes": [{"host": "h", "path": "/p"}]}, "routes[0]: missing tool"),
        ({"routes": [{"host": "h", "path": "p", "tool": "get_time"}]}, "routes[0].path: must start with /"),
        ({"routes": [{"host": "h", "path": "/p", "tool": "fly"}]}, "routes[0]: unknown tool 'fly'"),
        ({"routes": [{"host": "h", "path": "/p", "tool": "get_time", "args": ["city"]}]}, "routes[0].args: must be"),
        ({"routes": [{"host": "h", "path": "/p", "tool": "get_time", "args": {"city": "cookie.city"}}]},
         "routes[0].args.city: 'cookie.city' must look like"),
        ({"routes": [{"host": "h", "path": "/p", "tool": "get_time", "args": {"city": "query"}}]}, "must look like"),
        ({"routes": [{"host": "h", "path": "/p", "tool": "get_time", "args": {"city": {"from": "query.c", "type": "date"}}}]},
         "type must be one of"),
        ({"routes": [{"host": "h", "path": "/p", "tool": "get_time", "args": {"city": {"form": "query.c"}}}]},
         "routes[0].args.city: use"),
        ({"routes": [{"host": "h", "path": "/p", "tool": "get_time", "args": {"city": "path.city"}}]},
         "path has no {city} segment"),
    ],
)
def test_parse_errors_name_the_route_and_field(data: Any, message: str) -> None:
    with pytest.raises(MappingError) as info:
        parse_mapping(data, tool_names())
    assert message in str(info.value)


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(MappingError, match="cannot read mapping file"):
        load_mapping(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("routes: [{host: h, path: /p, tool: fly}]\n")
    with pytest.raises(MappingError, match=f"{bad}: routes\\[0\\]: unknown tool 'fly'"):
        load_mapping(bad, tool_names())


@pytest.mark.parametrize(
    ("pattern", "host", "ok"),
    [
        ("api.x.example", "API.X.example", True),
        ("api.x.example", "api.x.example.", True),
        ("api.x.example", "x.example", False),
        ("*.x.example", "eu.api.x.example", True),
        ("*.x.example", "x.example", False),
        ("*.x.example", "evilx.example", False),
    ],
)
def test_host_matches(pattern: str, host: str, ok: bool) -> None:
    assert host_matches(pattern, host) is ok


@pytest.mark.parametrize(
    ("host", "method", "path", "tool", "params"),
    [
        ("api.weather.example", "GET", "/v1/current?city=Berlin", "get_weather", {}),
        ("api.shop.example", "GET", "/v1/orders/ORD-5002", "get_order", {"order_id": "ORD-5002"}),
        ("api.shop.example", "GET", "/v1/orders/ORD-5002/", "get_order", {"order_id": "ORD-5002"}),
        ("api.shop.example", "GET", "/v1/orders?customer=CUST-1001", "list_orders", {}),
        ("api.shop.example", "POST", "/v1/orders/ORD-5003/cancel", "cancel_order", {"order_id": "ORD-5003"}),
        ("api.crm.example", "PATCH", "/v1/tickets/TCK-3003", "set_ticket_priority", {"ticket_id": "TCK-3003"}),
        ("api.crm.example", "GET", "/v1/tickets/TCK-3003", "get_ticket", {"ticket_id": "TCK-3003"}),
        ("api.shop.example", "DELETE", "/v1/orders/ORD-5002", None, None),
        ("api.shop.example", "GET", "/v1/orders/ORD-5002/items", None, None),
        ("api.elsewhere.example", "GET", "/v1/current", None, None),
    ],
)
def test_match_route(host: str, method: str, path: str, tool: str | None, params: dict[str, str] | None) -> None:
    found = match_route(load_mapping(EXAMPLE), host, method, path)
    assert (found.route.tool if found else None) == tool
    assert (found.path_params if found else None) == params


def test_maps_host() -> None:
    mapping = load_mapping(EXAMPLE)
    assert mapping.maps_host("api.weather.example") and not mapping.maps_host("example.com")
    assert not Mapping(()).maps_host("api.weather.example")


def _match(args: dict[str, ArgSpec] | None, params: dict[str, str] | None = None) -> RouteMatch:
    return RouteMatch(Route("h", "*", "/p", "get_time", args), params or {})


@pytest.mark.parametrize(
    ("args", "query", "headers", "body", "expected"),
    [
        ({"city": ArgSpec("query", "city")}, [("city", "Berlin"), ("city", "Paris")], {}, b"", {"city": "Berlin"}),
        ({"city": ArgSpec("query", "city")}, [], {}, b"", {}),
        ({"days": ArgSpec("query", "days", "integer")}, [("days", "3")], {}, b"", {"days": 3}),
        ({"days": ArgSpec("query", "days", "integer")}, [("days", "three")], {}, b"", {"days": "three"}),
        ({"v": ArgSpec("query", "v", "number")}, [("v", "2.5")], {}, b"", {"v": 2.5}),
        ({"u": ArgSpec("query", "u", "boolean")}, [("u", "yes")], {}, b"", {"u": True}),
        ({"u": ArgSpec("query", "u", "json")}, [("u", "[1, 2]")], {}, b"", {"u": [1, 2]}),
        ({"k": ArgSpec("header", "X-Key")}, [], {"x-key": "abc"}, b"", {"k": "abc"}),
        ({"r": ArgSpec("body", "reason")}, [], {}, b'{"reason": "late"}', {"r": "late"}),
        ({"r": ArgSpec("body", "meta.reason")}, [], {}, b'{"meta": {"reason": "x"}}', {"r": "x"}),
        ({"r": ArgSpec("body", "reason")}, [], {}, b"not json", {}),
        ({"u": ArgSpec("value", "", "auto", "celsius")}, [], {}, b"", {"u": "celsius"}),
    ],
)
def test_call_body(args: dict[str, ArgSpec], query: list[tuple[str, str]], headers: dict[str, str], body: bytes,
                   expected: dict[str, Any]) -> None:
    assert json.loads(call_body(_match(args), query, headers, body)) == expected


def test_call_body_from_path_and_whole_body() -> None:
    assert json.loads(call_body(_match({"id": ArgSpec("path", "id")}, {"id": "ORD-1"}), [], {}, b"")) == {"id": "ORD-1"}
    raw = b'{"to": "bob", "extra": true}'
    assert call_body(_match(None), [], {}, raw) == raw, "the body goes to the probe exactly as sent"


@pytest.mark.parametrize(
    ("value", "conversion", "expected"),
    [("5", "integer", 5), ("5", "string", "5"), ("no", "boolean", False), ("maybe", "boolean", "maybe"),
     ("{", "json", "{"), (7, "integer", 7), ("1e3", "number", 1000.0)],
)
def test_convert(value: Any, conversion: Any, expected: Any) -> None:
    assert convert(value, conversion) == expected
