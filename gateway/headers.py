"""Header rules for the pass-through (pure): hop-by-hop removal and the stored form.

Which stored headers are credentials is :func:`probegate.redact.secret_name`'s rule,
applied with every other redaction by :func:`probegate.store.redaction.redact_row`.
"""

from __future__ import annotations

from collections.abc import Iterable

#: RFC 9110 §7.6.1 connection-specific fields, plus ``host`` (set for the upstream)
#: and ``content-length`` (recomputed from the body we forward).
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)

RawHeaders = list[tuple[bytes, bytes]]


def _connection_tokens(headers: Iterable[tuple[bytes, bytes]]) -> set[str]:
    tokens: set[str] = set()
    for name, value in headers:
        if name.lower() == b"connection":
            tokens.update(t.strip().lower() for t in value.decode("latin-1").split(",") if t.strip())
    return tokens


def request_headers_for_upstream(headers: RawHeaders) -> RawHeaders:
    """The client's headers minus hop-by-hop ones, ``host``, ``content-length`` and
    probegate's own ``x-probegate-*`` attribution headers."""
    drop = HOP_BY_HOP | _connection_tokens(headers) | {"host", "content-length"}
    return [
        (name, value)
        for name, value in headers
        if name.lower().decode("latin-1") not in drop and not name.lower().startswith(b"x-probegate-")
    ]


def response_headers_for_client(headers: RawHeaders) -> RawHeaders:
    """The upstream's response headers minus hop-by-hop ones (the body bytes are
    forwarded raw, so ``content-length`` and ``content-encoding`` stay true)."""
    drop = HOP_BY_HOP | _connection_tokens(headers)
    return [(n, v) for n, v in headers if n.lower().decode("latin-1") not in drop]


def to_stored(headers: RawHeaders) -> dict[str, str]:
    """Headers as stored, before redaction: lower-case names, repeats joined by ``, ``."""
    out: dict[str, str] = {}
    for raw_name, raw_value in headers:
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


def header(headers: RawHeaders, name: bytes) -> str | None:
    """First value of header ``name`` (lower-case bytes), decoded, or ``None``."""
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None
