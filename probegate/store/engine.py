"""Opening a capture store: SQLite by default (WAL), PostgreSQL by URL."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import event, inspect
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
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


SCHEMES = ("sqlite", "postgresql")


def _shown(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def _sqlite_path(url: str) -> Path | None:
    """The file of an SQLite store URL; ``None`` for an in-memory one."""
    database = make_url(url).database
    return None if not database or database == ":memory:" else Path(database)


def _check_url(url: str) -> None:
    try:
        backend = make_url(url).get_backend_name()
    except ArgumentError:
        raise StoreError(f"not a store URL: {url!r} (use sqlite:///FILE or postgresql://...)") from None
    if backend not in SCHEMES:
        raise StoreError(f"probegate stores are SQLite or PostgreSQL, not {backend}: {_shown(url)!r} "
                         "(use sqlite:///FILE or postgresql://...)")


def open_store(url: str | None = None, *, create: bool = True) -> Engine:
    """Open (and by default create or upgrade) the capture store at ``url``.

    Args:
        url: SQLAlchemy URL or a file path; ``None`` means :func:`default_store_url`.
        create: create the tables or run pending migrations.

    Returns:
        An SQLAlchemy engine. SQLite stores use WAL and ``synchronous=NORMAL``.

    Raises:
        StoreError: the URL is malformed or not SQLite/PostgreSQL, its driver is
            missing, the file is not an SQLite database, or the server refuses.
    """
    url = normalize_url(url or default_store_url())
    _check_url(url)
    engine = None
    try:
        if url.startswith("sqlite"):
            path = _sqlite_path(url)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
            event.listen(engine, "connect", _sqlite_pragmas)
        else:
            engine = create_engine(url, pool_pre_ping=True)
        if create:
            from probegate.store.migrate import upgrade

            upgrade(engine)
    except (ArgumentError, NoSuchModuleError, ImportError) as exc:
        _dispose(engine)
        raise StoreError(f"cannot open store {_shown(url)!r}: {exc}") from None
    except DBAPIError as exc:
        _dispose(engine)
        raise StoreError(f"cannot open store {_shown(url)!r}: {str(exc.orig).strip()}") from None
    except OSError as exc:
        _dispose(engine)
        raise StoreError(f"cannot open store {_shown(url)!r}: {exc.strerror or exc}") from None
    except StoreError:
        _dispose(engine)
        raise
    return engine


def check_store_url(url: str | None = None) -> str:
    """Check, without creating or opening anything, that ``url`` can be a store.

    For commands that record (and so may create the store): the scheme is SQLite or
    PostgreSQL, and an existing SQLite file is an SQLite database. Returns the
    normalised URL.

    Raises:
        StoreError: it cannot.
    """
    url = normalize_url(url or default_store_url())
    _check_url(url)
    path = _sqlite_path(url) if url.startswith("sqlite") else None
    if path is not None and path.exists():
        if path.is_dir():
            raise StoreError(f"cannot open store {url!r}: {path} is a directory")
        try:
            with path.open("rb") as fh:
                head = fh.read(16)
        except OSError as exc:
            raise StoreError(f"cannot open store {url!r}: {exc.strerror or exc}") from None
        if head and head != b"SQLite format 3\x00":
            raise StoreError(f"cannot open store {url!r}: {path} is not an SQLite database")
    return url


def open_existing_store(url: str | None = None) -> Engine:
    """Open a store that must already exist (commands that read): never creates one.

    An existing store of an older schema is upgraded, as :func:`open_store` does.

    Raises:
        StoreError: there is no store at ``url`` (no SQLite file; no probegate tables
            in the database), or it cannot be opened.
    """
    url = normalize_url(url or default_store_url())
    _check_url(url)
    if url.startswith("sqlite"):
        path = _sqlite_path(url)
        if path is not None and not path.is_file():
            raise StoreError(f"no capture store at {path}: pass --store or set PROBEGATE_STORE")
    engine = open_store(url, create=False)
    try:
        with engine.connect() as conn:
            found = inspect(conn).has_table("exchange")
    except DBAPIError as exc:
        engine.dispose()
        raise StoreError(f"cannot open store {_shown(url)!r}: {str(exc.orig).strip()}") from None
    if not found:
        engine.dispose()
        raise StoreError(f"no capture store at {_shown(url)!r} (it holds no probegate tables): "
                         "pass --store or set PROBEGATE_STORE")
    engine.dispose()
    return open_store(url)


def _dispose(engine: Engine | None) -> None:
    if engine is not None:
        engine.dispose()
