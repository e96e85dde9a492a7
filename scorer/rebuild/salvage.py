"""Reading rows whose stored values cannot be decoded.

SQLite keeps any text in a JSON or a date column, so a store written by hand, by an
older tool or by a crashed process can hold ``{not json`` where an object belongs;
the ORM then fails on the whole query. These readers fetch such columns as text and
decode each value on its own: a value that does not decode becomes ``None`` and a
warning (``"exchange 3: response_headers holds invalid JSON"``). They are the slow
path of :mod:`probegate.scorer.rebuild.load`, used only after the normal read failed.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, LargeBinary, Text, TypeDecorator, cast, select
from sqlmodel import Session

_LABELS = {"exchange": "exchange", "probecall": "probe call", "worldstate": "world state", "run": "run"}


def _kind(column: Any) -> Any:
    """The column's storage type (``UTCDateTime`` is a ``DateTime``)."""
    return column.type.impl if isinstance(column.type, TypeDecorator) else column.type


def _decode(column: Any, text: str | None) -> tuple[Any, str | None]:
    """A column's value from its text; ``(None, problem)`` when it does not decode."""
    if text is None:
        return None, None
    if isinstance(_kind(column), JSON):
        try:
            return json.loads(text), None
        except ValueError:
            return None, f"{column.name} holds invalid JSON ({text[:40]!r})"
    try:
        return datetime.fromisoformat(text), None
    except ValueError:
        return None, f"{column.name} holds {text[:40]!r}, not a time"


def salvage(session: Session, model: Any, where: Any) -> tuple[list[Any], list[tuple[Any, str]]]:
    """Rows of ``model`` matching ``where``, each undecodable value replaced by ``None``.

    Binary columns are left out (the scorer never reads them).

    Returns:
        ``(rows, problems)``: rows as new (unsaved) ``model`` objects, and
        ``(row, "<label> <seq>: <problem>")`` for every value that did not decode.
    """
    columns = [c for c in model.__table__.columns if not isinstance(_kind(c), LargeBinary)]
    textual = {c.name for c in columns if isinstance(_kind(c), (JSON, DateTime))}
    query = select(*(cast(c, Text).label(c.name) if c.name in textual else c for c in columns)).where(where)
    rows: list[Any] = []
    problems: list[tuple[Any, str]] = []
    label = _LABELS.get(model.__table__.name, model.__table__.name)
    for record in session.execute(query):
        values, found = {}, []
        for column in columns:
            value = record._mapping[column.name]
            if column.name in textual:
                value, problem = _decode(column, value)
                if problem:
                    found.append(problem)
            values[column.name] = value
        row = model(**values)
        rows.append(row)
        key = values.get("seq", values.get("id"))
        name = label if key is None else f"{label} {key}"
        problems.extend((row, f"{name}: {problem}") for problem in found)
    return rows, problems
