"""Opening stores: URLs, WAL, schema version guard, clear errors."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlmodel import Session

from probegate.errors import StoreError
from probegate.store import SCHEMA_VERSION, StoreMeta, normalize_url, open_store
from probegate.store.migrate import schema_version


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("runs/x.db", "sqlite:///runs/x.db"),
        ("postgresql://h/db", "postgresql+psycopg://h/db"),
        ("postgres://h/db", "postgresql+psycopg://h/db"),
        ("sqlite:///a.db", "sqlite:///a.db"),
    ],
)
def test_normalize_url(given: str, expected: str) -> None:
    assert normalize_url(given) == expected


def test_sqlite_uses_wal(sqlite_url: str) -> None:
    engine = open_store(sqlite_url)
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"


def test_schema_version_recorded(engine) -> None:
    assert schema_version(engine) == SCHEMA_VERSION


def test_newer_store_is_refused(engine, store_url: str) -> None:
    with Session(engine) as session:
        session.merge(StoreMeta(key="schema_version", value=str(SCHEMA_VERSION + 1)))
        session.commit()
    with pytest.raises(StoreError, match="newer than this probegate"):
        open_store(store_url)


@pytest.mark.parametrize("url", ["nosuchdriver://x/y", "postgresql+psycopg://nobody@127.0.0.1:1/none"])
def test_bad_urls_give_store_errors(url: str) -> None:
    with pytest.raises(StoreError, match="cannot open store"):
        open_store(url)
