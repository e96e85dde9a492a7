"""The probegate mitmproxy addon: mapped API hosts are answered by probes, nothing else leaves.

- A request to a host in the mapping file is answered by the probe tool its route
  names (arguments extracted per the mapping) and logged as a probe call ``via=mitm``.
- A request to a pass-through host (loopback by default: the gateway, a local model
  server) is forwarded unchanged; streamed response bodies (SSE, NDJSON, chunked)
  are passed on unbuffered.
- Every other request gets a 403 saying the host is not mapped, so no real side
  effect ever leaves the machine.

Run and task come from the proxy credentials (``http://RUN:TASK@host:port``); HTTPS
tunnels carry them on the CONNECT, which is remembered per client connection.
Usable standalone: ``mitmdump -s probes/intercept/addon.py --set
probegate_map=FILE --set probegate_probes=http://127.0.0.1:8700``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import Sequence
from typing import Any

from mitmproxy import connection, ctx, exceptions, http

from probegate.probes.intercept.backend import HttpBackend, ProbeBackend
from probegate.probes.intercept.mapping import Mapping, MappingError, call_body, load_mapping, match_route
from probegate.probes.intercept.proxyauth import ADHOC, USAGE, Attribution, parse_proxy_authorization
from probegate.probes.catalog import tool_names

log = logging.getLogger("probegate.intercept")

LOOPBACK = ("127.0.0.1", "localhost", "::1")
STREAM_TYPES = ("text/event-stream", "application/x-ndjson", "application/jsonl")
_META = "probegate"


def should_stream(headers: Any) -> bool:
    """Whether a response body must be passed on as it arrives (SSE, NDJSON, or no length)."""
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    return kind in STREAM_TYPES or "content-length" not in headers


def json_response(status: int, body: dict[str, Any] | bytes) -> http.Response:
    """A JSON response made by the proxy itself."""
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return http.Response.make(status, content, {"content-type": "application/json", "x-probegate": "intercept"})


def refusal(host: str, method: str, path: str, mapped_host: bool) -> dict[str, Any]:
    """The 403 body for a request that is not mapped."""
    what = f"{method} {path.split('?', 1)[0]} on {host}" if mapped_host else f"host {host}"
    return {
        "error": "not_mapped",
        "message": f"probegate intercept: {what} is not mapped to a probe; the request was not sent anywhere",
    }


class ProbegateIntercept:
    """The addon. ``backend`` is the probe service; ``None`` builds an HTTP backend from
    the ``probegate_probes`` option."""

    def __init__(self, backend: ProbeBackend | None = None) -> None:
        self.backend = backend
        self.mapping = Mapping(())
        self.allow: frozenset[str] = frozenset(LOOPBACK)
        self._tunnels: weakref.WeakKeyDictionary[connection.Client, Attribution] = weakref.WeakKeyDictionary()
        self.answered = 0
        self.refused = 0

    def load(self, loader: Any) -> None:
        """Declare the options: the mapping file, the probe server URL, pass-through hosts."""
        loader.add_option("probegate_map", str, "", "Mapping file: which host + path is answered by which probe tool.")
        loader.add_option("probegate_probes", str, "", "Probe server URL, when the probes are not in this process.")
        loader.add_option(
            "probegate_allow", Sequence[str], list(LOOPBACK), "Hosts passed through unchanged (default: loopback)."
        )

    def configure(self, updated: set[str]) -> None:
        """Validate and apply options.

        Raises:
            OptionsError: the mapping file is unreadable or invalid, or the probe URL is not http(s).
        """
        if "probegate_map" in updated and ctx.options.probegate_map:
            try:
                self.mapping = load_mapping(ctx.options.probegate_map, tool_names())
            except MappingError as exc:
                raise exceptions.OptionsError(str(exc)) from exc
        if "probegate_probes" in updated and ctx.options.probegate_probes:
            url = ctx.options.probegate_probes
            if not url.startswith(("http://", "https://")):
                raise exceptions.OptionsError(f"probegate_probes must be an http(s) URL, got {url!r}")
            self.backend = HttpBackend(url)
        if "probegate_allow" in updated:
            self.allow = frozenset(h.lower() for h in ctx.options.probegate_allow)

    def running(self) -> None:
        """Warn when no backend can answer mapped requests."""
        if self.backend is None:
            log.warning("probegate intercept has no probe backend: set probegate_probes")

    # -- attribution -----------------------------------------------------------------------
    def _attribution(self, flow: http.HTTPFlow) -> Attribution | None:
        """Credentials on this request, else those of its tunnel; ``None`` when malformed."""
        value = flow.request.headers.get("proxy-authorization")
        try:
            found = parse_proxy_authorization(value)
        except ValueError:
            return None
        return found or self._tunnels.get(flow.client_conn, ADHOC)

    def http_connect(self, flow: http.HTTPFlow) -> None:
        """Remember the tunnel's credentials (HTTPS requests inside it carry none); 407 when malformed."""
        try:
            found = parse_proxy_authorization(flow.request.headers.get("proxy-authorization"))
        except ValueError as exc:
            flow.response = json_response(407, {"error": "bad_proxy_credentials", "message": str(exc)})
            return
        if found is not None:
            self._tunnels[flow.client_conn] = found

    # -- requests ----------------------------------------------------------------------------
    def requestheaders(self, flow: http.HTTPFlow) -> None:
        """Decide: pass through, answer from a probe (in ``request``), or refuse with a 403."""
        if flow.response is not None:
            return
        host, method, path = flow.request.pretty_host.lower(), flow.request.method, flow.request.path
        who = self._attribution(flow)
        flow.request.headers.pop("proxy-authorization", None)
        if who is None:
            flow.response = json_response(407, {"error": "bad_proxy_credentials", "message": USAGE})
            return
        if host in self.allow:
            return
        match = match_route(self.mapping, host, method, path)
        if match is None:
            self.refused += 1
            log.info("refused %s %s%s", method, host, path)
            flow.response = json_response(403, refusal(host, method, path, self.mapping.maps_host(host)))
            return
        flow.metadata[_META] = (who, match)

    async def request(self, flow: http.HTTPFlow) -> None:
        """Answer a mapped request from its probe tool (in a worker thread)."""
        if flow.response is not None or _META not in flow.metadata:
            return
        who, match = flow.metadata.pop(_META)
        if self.backend is None:
            flow.response = json_response(503, {"error": "no_probes", "message": "the intercept has no probe backend"})
            return
        query = list(flow.request.query.items(multi=True))
        headers = {k.lower(): v for k, v in flow.request.headers.items()}
        body = call_body(match, query, headers, flow.request.get_content(strict=False) or b"")
        status, content = await asyncio.to_thread(
            self.backend.call, who.run, who.task, who.attempt, match.route.tool, body
        )
        self.answered += 1
        flow.response = json_response(status, content)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        """Stream pass-through bodies that arrive piece by piece (later would be too late)."""
        if flow.response is not None and flow.response.headers.get("x-probegate") != "intercept":
            if should_stream(flow.response.headers):
                flow.response.stream = True

    def done(self) -> None:
        """Release the backend."""
        if self.backend is not None:
            self.backend.close()


addons = [ProbegateIntercept()]
