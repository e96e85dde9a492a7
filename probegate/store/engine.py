"""Opening a capture store: SQLite by default (WAL), PostgreSQL by URL."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlalchemy.exc import NoSuchModuleError
from sqlmodel import create_engine

from probegate.errors import StoreError
from probegate.store import models  # noqa: F401  (registers the tables)

DEFAULT_STORE = "sqlite:///probegate.db"


def default_store_url() -> str:
    """The store URL from ``PROBEGATE_STORE``, else ``sqlite:///probegate.db`` (cwd)."""
    return os.environ.get("PROBEGATE_STORE", DEFAULT_STORE)


def normalize_url(url: str) -> str:
    """Accept a bare file path as an SQLite store and map ``postgresql://`` to psycopg 3.

    Examples: ``runs/x.db`` -> ``sqlite:///runs/x.db``;
    ``postgresql://h/db`` -> ``postgresql+psycopg://h/db``.
    """
    if "://" not in url:
        return f"sqlite:///{url}"
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def _sqlite_pragmas(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def open_store(url: str | None = None, *, create: bool = True) -> Engine:
    """Open (and by default create or upgrade) the capture store at ``url``.

    Args:
        url: SQLAlchemy URL or a file path; ``None`` means :func:`default_store_url`.
        create: create the tables or run pending migrations.

    Returns:
        An SQLAlchemy engine. SQLite stores use WAL and ``synchronous=NORMAL``.

    Raises:
        StoreError: the URL is malformed, its driver is missing, or the server refuses.
    """
    url = normalize_url(url or default_store_url())
    engine = None
    try:
        if url.startswith("sqlite"):
            path = url.split("///", 1)[-1]
            if path and path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
            event.listen(engine, "connect", _sqlite_pragmas)
        else:
            engine = create_engine(url, pool_pre_ping=True)
        if create:
            from probegate.store.migrate import upgrade

            try:
                upgrade(engine)
            except StoreError:
                engine.dispose()
                raise
    except (ArgumentError, NoSuchModuleError) as exc:
        raise StoreError(f"cannot open store {url!r}: {exc}") from exc
    except OperationalError as exc:
        if engine is not None:
            engine.dispose()
        raise StoreError(f"cannot open store {url!r}: {str(exc.orig).strip()}") from None
    return engine


