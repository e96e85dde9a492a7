"""Redaction as a property of the store: every row is scrubbed before it is kept.

:func:`redact_row` applies one :class:`~probegate.redact.Redactor` to every stored text
of a row, whatever its table: headers by name, query strings and URLs by parameter,
stream events joined (a secret split across deltas) with the raw stream kept
consistent, and every other string, byte string and JSON value by pattern. Only the
identity columns (``id``, ``run_id``, ``task_id``) are left alone: they are checked ids
(:mod:`probegate.ids`), and scrubbing them would break attribution.

Who calls it: :class:`~probegate.store.writer.CaptureWriter` (plain rows and upserts as
they are submitted, before they are queued; rows built from a capture as they are
built), the runner's ``Run`` writes, bundle export and import. The secret patterns are
always on; ``--redact-pii`` and ``--redact`` widen the list.
"""

from __future__ import annotations

from typing import Any, TypeVar

from sqlmodel import SQLModel

from probegate.redact import SECRETS, Redactor

Row = TypeVar("Row", bound=SQLModel)

#: columns that hold checked ids, never scrubbed
IDENTITY = frozenset({"id", "run_id", "task_id"})
REBUILT_FLAG = "raw_rebuilt_for_redaction"


def redact_values(values: dict[str, Any], redactor: Redactor = SECRETS) -> dict[str, Any]:
    """Column values (``{"params": {...}, "status": "done"}``) with every text scrubbed.

    Args:
        values: column name -> value, as ``row.model_dump()`` gives them.
        redactor: the redaction list (default: secrets only).

    Returns:
        A new dict; values that needed no change are the same objects.
    """
    if not redactor:
        return dict(values)
    out: dict[str, Any] = {}
    stream = isinstance(values.get("sse_events"), list) and isinstance(values.get("response_raw"), bytes)
    for name, value in values.items():
        if name in IDENTITY or value is None or isinstance(value, (bool, int, float)):
            out[name] = value
        elif name == "response_raw" and stream:
            continue  # scrubbed with its events, below
        elif name in ("request_headers", "response_headers"):
            out[name] = redactor.headers(value)
        elif name == "query" and isinstance(value, str):
            out[name] = redactor.query(value)
        elif name == "upstream" and isinstance(value, str):
            out[name] = redactor.url(value)
        elif name == "sse_events" and isinstance(value, list):
            turn = [values.get("completion"), values.get("response_body")]
            out[name] = redactor.stream(value, turn if any(v is not None for v in turn) else None)
        else:
            out[name] = redactor.json(value)
    if stream:
        raw, rebuilt = _stream_raw(values, out["sse_events"], redactor)
        out["response_raw"] = raw
        if rebuilt:
            out["flags"] = sorted({*(out.get("flags") or []), REBUILT_FLAG})
    if isinstance(values.get("response_raw"), bytes) and isinstance(values.get("chunks"), list):
        out["chunks"] = _resized(values["chunks"], len(values["response_raw"]), len(out["response_raw"] or b""))
    return out


def _resized(chunks: list[Any], old_len: int, new_len: int) -> list[Any]:
    """Chunk sizes that add up to the scrubbed body again (a replay keeps its pacing):
    each piece boundary moves in proportion; arrival offsets stay."""
    try:
        sizes = [int(size) for _, size in chunks]
    except (TypeError, ValueError):
        return chunks
    if old_len == new_len or not sizes or sum(sizes) != old_len or old_len == 0:
        return chunks
    out, done, edge = [], 0, 0
    for (t, _), size in zip(chunks, sizes):
        done += size
        end = round(done * new_len / old_len)
        out.append([t, end - edge])
        edge = end
    return out


def redact_row(row: Row, redactor: Redactor = SECRETS) -> Row:
    """A copy of ``row`` with every stored text scrubbed (``row`` itself is not changed).

    Args:
        row: any store row (``Run``, ``Exchange``, ``ProbeCall``, ``WorldState``).
        redactor: the redaction list (default: secrets only).
    """
    if not redactor:
        return row
    # a new instance, not ``model_copy``: a copy would share the ORM state of ``row``
    return type(row)(**redact_values(row.model_dump(), redactor))


def _stream_raw(values: dict[str, Any], events: list[dict[str, Any]], redactor: Redactor) -> tuple[bytes, bool]:
    """The raw stream made consistent with the scrubbed events.

    Each event whose ``data`` changed is replaced where it stands in the raw bytes,
    then the whole is scrubbed as text. When an event cannot be found there (a
    compressed body, multi-line data), the raw body is rebuilt from the scrubbed events
    (second value ``True``), so no piece of a secret survives in it.
    """
    raw: bytes = values["response_raw"]
    old_events: list[Any] = values["sse_events"]
    text = raw.decode("utf-8", errors="surrogateescape")
    parts, cursor = [], 0
    for old, new in zip(old_events, events):
        before, after = (old or {}).get("data"), new.get("data")
        if before == after or not isinstance(before, str):
            continue
        at = text.find(before, cursor) if "\n" not in before else -1
        if at < 0:
            return _rebuild(events, values.get("stream_format")), True
        parts += [text[cursor:at], str(after)]
        cursor = at + len(before)
    if not parts:
        return redactor.raw(raw), False
    parts.append(text[cursor:])
    return redactor.raw("".join(parts).encode("utf-8", errors="surrogateescape")), False


def _rebuild(events: list[dict[str, Any]], fmt: str | None) -> bytes:
    if fmt == "ndjson":
        return "".join(f"{e.get('data', '')}\n" for e in events).encode()
    out = []
    for e in events:
        lines = [f"{field}: {e[field]}" for field in ("event", "id") if e.get(field) is not None]
        lines += [f"data: {line}" for line in str(e.get("data", "")).split("\n")]
        out.append("\n".join(lines) + "\n\n")
    return "".join(out).encode()
