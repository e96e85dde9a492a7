"""Undoing ``Content-Encoding`` for recording; forwarding always keeps the raw bytes."""

from __future__ import annotations

import gzip
import zlib


def decode_body(data: bytes, content_encoding: str | None) -> tuple[bytes, str | None]:
    """Decode ``data`` as its ``Content-Encoding`` says.

    Args:
        data: the body bytes as sent.
        content_encoding: the header value (``gzip``, ``deflate``, ``br``, ``zstd``,
            a comma list, or ``None``/``identity``).

    Returns:
        ``(decoded bytes, error)``; on a decoding failure the raw bytes come back with
        an error string such as ``"content-encoding gzip: ..."``.
    """
    if not content_encoding:
        return data, None
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
    try:
        for coding in reversed(codings):
            data = _decode_one(data, coding)
    except Exception as exc:  # a corrupt body must still be recorded raw
        return data, f"content-encoding {content_encoding}: {exc}"
    return data, None


def _decode_one(data: bytes, coding: str) -> bytes:
    if coding in ("identity", ""):
        return data
    if coding in ("gzip", "x-gzip"):
        return gzip.decompress(data)
    if coding == "deflate":
        try:
            return zlib.decompress(data)
        except zlib.error:
            return zlib.decompress(data, -zlib.MAX_WBITS)
    if coding == "br":
        import brotli  # shipped with mitmproxy

        return brotli.decompress(data)
    if coding == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    raise ValueError(f"unknown coding {coding!r}")
