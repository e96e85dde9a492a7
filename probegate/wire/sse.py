"""Incremental Server-Sent Events and NDJSON framing (WHATWG rules), sans I/O.

Feed raw bytes as they arrive, in any split; get whole events back. Handles LF,
CRLF and lone-CR line ends, comment lines (``: keep-alive``), multi-line ``data``,
``event``/``id`` fields, a UTF-8 BOM, and a final event without its blank line.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass


_EOL = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class StreamEvent:
    """One decoded stream event.

    Attributes:
        data: the event's data lines joined with ``\\n`` (an NDJSON line for NDJSON).
        event: the ``event:`` field, if any.
        id: the ``id:`` field, if any.
        t_ms: arrival offset of the bytes that completed the event (ms since request).
    """

    data: str
    event: str | None = None
    id: str | None = None
    t_ms: float | None = None

    def to_json(self) -> dict[str, object]:
        """The stored form: ``{"t": ms, "data": str}`` plus ``event``/``id`` when set."""
        out: dict[str, object] = {"t": self.t_ms, "data": self.data}
        if self.event is not None:
            out["event"] = self.event
        if self.id is not None:
            out["id"] = self.id
        return out


class _Lines:
    """Split decoded text into lines on LF, CRLF or CR, across feeds."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buf = ""
        self._first = True

    def feed(self, data: bytes, final: bool = False) -> list[str]:
        text = self._decoder.decode(data, final=final)
        if self._first and text:
            self._first = False
            if text.startswith("\ufeff"):
                text = text[1:]
        buf = self._buf + text
        hold = ""
        if buf.endswith("\r") and not final:
            buf, hold = buf[:-1], "\r"  # a CR at the end may be half of a CRLF
        parts = _EOL.split(buf)
        self._buf = parts.pop() + hold
        if final and self._buf:
            parts.append(self._buf)
            self._buf = ""
        return parts


class SSEParser:
    """Turns SSE bytes into :class:`StreamEvent` objects."""

    def __init__(self) -> None:
        self._lines = _Lines()
        self._data: list[str] = []
        self._event: str | None = None
        self._id: str | None = None
        self._has_field = False
        self.comments = 0

    def feed(self, chunk: bytes, t_ms: float | None = None) -> list[StreamEvent]:
        """Parse one piece of the body; returns the events it completed."""
        return self._consume(self._lines.feed(chunk), t_ms)

    def close(self, t_ms: float | None = None) -> list[StreamEvent]:
        """Flush the end of the stream (an event without its trailing blank line)."""
        events = self._consume(self._lines.feed(b"", final=True), t_ms)
        if self._has_field:
            events.append(self._dispatch(t_ms))
        return events

    def _consume(self, lines: list[str], t_ms: float | None) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for line in lines:
            if line == "":
                if self._has_field:
                    events.append(self._dispatch(t_ms))
                continue
            if line.startswith(":"):
                self.comments += 1
                continue
            name, sep, value = line.partition(":")
            if sep and value.startswith(" "):
                value = value[1:]
            self._has_field = True
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._event = value
            elif name == "id":
                self._id = value
        return events

    def _dispatch(self, t_ms: float | None) -> StreamEvent:
        event = StreamEvent("\n".join(self._data), self._event, self._id, t_ms)
        self._data, self._event, self._id, self._has_field = [], None, None, False
        return event


class NDJSONParser:
    """Turns newline-delimited JSON bytes into one :class:`StreamEvent` per line."""

    def __init__(self) -> None:
        self._lines = _Lines()

    def feed(self, chunk: bytes, t_ms: float | None = None) -> list[StreamEvent]:
        """Parse one piece of the body; returns the complete non-empty lines."""
        return [StreamEvent(line, t_ms=t_ms) for line in self._lines.feed(chunk) if line.strip()]

    def close(self, t_ms: float | None = None) -> list[StreamEvent]:
        """Flush a last line that had no newline."""
        return [StreamEvent(l, t_ms=t_ms) for l in self._lines.feed(b"", final=True) if l.strip()]


def parse_stream(
    pieces: list[tuple[float | None, bytes]], fmt: str
) -> tuple[list[StreamEvent], int]:
    """Parse a whole recorded stream.

    Args:
        pieces: ``(arrival offset ms, bytes)`` in arrival order.
        fmt: ``"sse"`` or ``"ndjson"``.

    Returns:
        The events and the number of SSE comment lines seen.
    """
    parser: SSEParser | NDJSONParser = SSEParser() if fmt == "sse" else NDJSONParser()
    events: list[StreamEvent] = []
    last = None
    for t_ms, data in pieces:
        events.extend(parser.feed(data, t_ms))
        last = t_ms
    events.extend(parser.close(last))
    return events, getattr(parser, "comments", 0)
