"""Throw-away capture stores for the benchmarks: an SQLite file, or a fresh PostgreSQL schema."""

from __future__ import annotations

import contextlib
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

#: The PostgreSQL server the store benchmarks use (a schema is created and dropped in it).
PG_DEFAULT = os.environ.get("PROBEGATE_BENCH_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def _conninfo(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def pg_unavailable(url: str) -> str | None:
    """Why the PostgreSQL server at ``url`` cannot be used, or ``None`` when it can."""
    import psycopg

    try:
        with psycopg.connect(_conninfo(url), connect_timeout=3):
            return None
    except psycopg.Error as exc:
        return f"PostgreSQL at {url} unavailable: {str(exc).strip().splitlines()[0]}"


@contextlib.contextmanager
def temp_store(kind: str, pg_url: str = PG_DEFAULT) -> Iterator[str]:
    """Yield a store URL that is empty now and deleted afterwards.

    Args:
        kind: ``sqlite`` (a file in a temporary folder) or ``postgres`` (a new schema
            on ``pg_url``, put first on the connection's ``search_path``).
        pg_url: the PostgreSQL server (SQLAlchemy URL).
    """
    if kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="probegate-bench-") as tmp:
            yield f"sqlite:///{Path(tmp) / 'store.db'}"
        return
    import psycopg

    schema = f"probegate_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_conninfo(pg_url), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in pg_url else "?"
    try:
        yield f"{pg_url}{sep}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(_conninfo(pg_url), autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
