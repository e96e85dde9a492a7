"""The intercept mapping file: which HTTP API calls are answered by which probe tool (pure).

A mapping file (YAML or JSON) lists routes::

    version: 1
    routes:
      - host: api.weather.example          # exact host, or *.example for any subdomain
        method: GET                        # default: any method
        path: /v1/current                  # {name} matches one path segment
        tool: get_weather
        args:                              # tool argument <- where its value comes from
          city: query.city                 # query.NAME, path.NAME, header.NAME, body.KEY[.KEY]
          days: {from: query.days, type: integer}   # convert: string|integer|number|boolean|json
          units: {value: celsius}          # a constant
      - host: api.mail.example
        method: POST
        path: /v1/messages
        tool: send_email
        args: body                         # the JSON request body is the arguments object

Everything here is a pure function over the parsed file and the request's parts,
so it is tested without a proxy; the mitmproxy addon only calls it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, NamedTuple

import yaml

from probegate.yamlfile import load_yaml

Source = Literal["query", "path", "header", "body", "value"]
Conversion = Literal["auto", "string", "integer", "number", "boolean", "json"]
WHOLE_BODY = "body"
_SOURCES = ("query", "path", "header", "body")
_CONVERSIONS = ("auto", "string", "integer", "number", "boolean", "json")
_SEGMENT = re.compile(r"^\{([A-Za-z_][A-Za-z0-9_]*)\}$")


class MappingError(ValueError):
    """A mapping file is unreadable or invalid; the message names the route and field."""


class ArgSpec(NamedTuple):
    """Where one tool argument comes from."""

    source: Source
    key: str
    conversion: Conversion = "auto"
    value: Any = None


class Route(NamedTuple):
    """One mapped API endpoint.

    Attributes:
        host: lower-case host, or ``*.suffix``.
        method: upper-case method, ``*`` for any.
        path: the path template (``/v1/orders/{order_id}``).
        tool: the probe tool that answers it.
        args: argument name -> :class:`ArgSpec`; ``None`` means the whole JSON body.
    """

    host: str
    method: str
    path: str
    tool: str
    args: dict[str, ArgSpec] | None


class Mapping(NamedTuple):
    """A parsed mapping file."""

    routes: tuple[Route, ...]

    def maps_host(self, host: str) -> bool:
        """Whether any route is for ``host``."""
        return any(host_matches(r.host, host) for r in self.routes)


class RouteMatch(NamedTuple):
    """A route that matched a request, with the values of its ``{name}`` path segments."""

    route: Route
    path_params: dict[str, str]


def host_matches(pattern: str, host: str) -> bool:
    """``api.x.example`` matches itself; ``*.x.example`` matches any subdomain of x.example."""
    host = host.lower().rstrip(".")
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


def _path_params(template: str, path: str) -> dict[str, str] | None:
    want = [s for s in template.split("/") if s]
    got = [s for s in path.split("?", 1)[0].split("/") if s]
    if len(want) != len(got):
        return None
    params: dict[str, str] = {}
    for pattern, segment in zip(want, got):
        named = _SEGMENT.match(pattern)
        if named:
            params[named.group(1)] = segment
        elif pattern != segment:
            return None
    return params


def match_route(mapping: Mapping, host: str, method: str, path: str) -> RouteMatch | None:
    """The first route for this request, or ``None``."""
    for route in mapping.routes:
        if not host_matches(route.host, host) or route.method not in ("*", method.upper()):
            continue
        params = _path_params(route.path, path)
        if params is not None:
            return RouteMatch(route, params)
    return None


# -- parsing -------------------------------------------------------------------------
def _arg_spec(where: str, raw: Any) -> ArgSpec:
    if isinstance(raw, dict) and set(raw) == {"value"}:
        return ArgSpec("value", "", "auto", raw["value"])
    conversion = "auto"
    if isinstance(raw, dict):
        unknown = set(raw) - {"from", "type"}
        if unknown or "from" not in raw:
            raise MappingError(f"{where}: use 'SOURCE.NAME', {{from: SOURCE.NAME, type: T}} or {{value: V}}")
        raw, conversion = raw["from"], raw.get("type", "auto")
    if conversion not in _CONVERSIONS:
        raise MappingError(f"{where}: type must be one of {', '.join(_CONVERSIONS)}, got {conversion!r}")
    source, _, key = str(raw).partition(".")
    if source not in _SOURCES or not key:
        raise MappingError(f"{where}: {raw!r} must look like query.NAME, path.NAME, header.NAME or body.KEY")
    return ArgSpec(source, key, conversion)  # type: ignore[arg-type]


def _route(i: int, raw: Any, known_tools: Iterable[str] | None) -> Route:
    where = f"routes[{i}]"
    if not isinstance(raw, dict):
        raise MappingError(f"{where}: must be a mapping with host, path, tool")
    missing = [k for k in ("host", "path", "tool") if not raw.get(k)]
    if missing:
        raise MappingError(f"{where}: missing {', '.join(missing)}")
    tools = set(known_tools) if known_tools is not None else None
    if tools is not None and raw["tool"] not in tools:
        raise MappingError(f"{where}: unknown tool {raw['tool']!r}")
    if not str(raw["path"]).startswith("/"):
        raise MappingError(f"{where}.path: must start with /")
    spec = raw.get("args", {})
    if spec == WHOLE_BODY:
        args = None
    elif isinstance(spec, dict):
        args = {str(name): _arg_spec(f"{where}.args.{name}", v) for name, v in spec.items()}
    else:
        raise MappingError(f"{where}.args: must be 'body' or a mapping of argument name to source")
    template_names = {m.group(1) for s in str(raw["path"]).split("/") if (m := _SEGMENT.match(s))}
    for name, arg in (args or {}).items():
        if arg.source == "path" and arg.key not in template_names:
            raise MappingError(f"{where}.args.{name}: path has no {{{arg.key}}} segment")
    method = str(raw.get("method", "*")).upper()
    return Route(str(raw["host"]).lower(), method, str(raw["path"]), str(raw["tool"]), args)


def parse_mapping(data: Any, known_tools: Iterable[str] | None = None) -> Mapping:
    """Validate a parsed mapping file.

    Args:
        data: the file's content (``{"version": 1, "routes": [...]}``).
        known_tools: tool names routes may use (``None``: do not check).

    Raises:
        MappingError: the first problem, with the route index and field.
    """
    if not isinstance(data, dict) or not isinstance(data.get("routes"), list):
        raise MappingError("a mapping file needs a 'routes' list")
    if data.get("version", 1) != 1:
        raise MappingError(f"mapping version {data.get('version')!r} is not supported (use 1)")
    known = list(known_tools) if known_tools is not None else None
    return Mapping(tuple(_route(i, r, known) for i, r in enumerate(data["routes"])))


def load_mapping(path: str | Path, known_tools: Iterable[str] | None = None) -> Mapping:
    """Read and validate a mapping file (YAML or JSON).

    Raises:
        MappingError: the file cannot be read or is invalid.
    """
    try:
        data = load_yaml(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise MappingError(f"cannot read mapping file {path}: {exc}") from exc
    try:
        return parse_mapping(data, known_tools)
    except MappingError as exc:
        raise MappingError(f"{path}: {exc}") from exc


# -- argument extraction ---------------------------------------------------------------
def convert(value: Any, conversion: Conversion) -> Any:
    """Convert a text value; a value that does not convert is passed on unchanged,
    so the probe's validation reports it as the agent's mistake."""
    if not isinstance(value, str) or conversion in ("auto", "string"):
        return value
    try:
        if conversion == "integer":
            return int(value)
        if conversion == "number":
            return float(value)
        if conversion == "json":
            return json.loads(value)
    except ValueError:
        return value
    lowered = value.strip().lower()
    return {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}.get(lowered, value)


def _dig(body: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(body, dict) or part not in body:
            return None
        body = body[part]
    return body


def call_body(
    match: RouteMatch, query: list[tuple[str, str]], headers: dict[str, str], body: bytes
) -> bytes:
    """The probe call's body (JSON arguments) for a matched request.

    Args:
        match: the matched route.
        query: the query parameters in order (the first value of a repeated name wins).
        headers: request headers with lower-case names.
        body: the request body.

    Returns:
        The request body unchanged for ``args: body``; else a JSON object of the
        arguments that were present (absent ones are left out, so validation reports
        them as missing).
    """
    if match.route.args is None:
        return body
    parsed: Any = None
    if any(a.source == "body" for a in match.route.args.values()):
        try:
            parsed = json.loads(body or b"null")
        except ValueError:
            parsed = None
    found: dict[str, Any] = {}
    first_query = dict(reversed(query))
    for name, arg in match.route.args.items():
        value = {
            "value": lambda: arg.value,
            "query": lambda: first_query.get(arg.key),
            "path": lambda: match.path_params.get(arg.key),
            "header": lambda: headers.get(arg.key.lower()),
            "body": lambda: _dig(parsed, arg.key),
        }[arg.source]()
        if value is not None:
            found[name] = convert(value, arg.conversion)
    return json.dumps(found).encode()
