"""Opening stores: URLs, WAL, schema version guard, clear errors."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlmodel import Session

from alembic import command
from sqlalchemy import create_engine

from probegate.errors import StoreError
from probegate.store import Run, check_store_url, normalize_url, open_existing_store, open_store
from probegate.store.migrate import _config, current_revision, head_revision


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


def test_new_store_is_at_head(engine) -> None:
    assert current_revision(engine) == head_revision()


def test_newer_store_is_refused(engine, store_url: str) -> None:
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(StoreError, match="written by a newer probegate"):
        open_store(store_url)


def _store_at_0001(url: str, *, drop_version_table: bool = False) -> None:
    raw = create_engine(normalize_url(url))
    with raw.begin() as conn:
        command.upgrade(_config(conn), "0001")
        conn.execute(text("INSERT INTO run (id, created_at, status) VALUES ('old-run', '2025-01-01 00:00:00', 'done')"))
        if drop_version_table:
            conn.execute(text("DROP TABLE alembic_version"))
    raw.dispose()


@pytest.mark.parametrize("drop_version_table", [False, True], ids=["migrated", "pre-migration"])
def test_older_store_opens_and_upgrades(store_url: str, drop_version_table: bool) -> None:
    _store_at_0001(store_url, drop_version_table=drop_version_table)
    engine = open_store(store_url)
    assert current_revision(engine) == head_revision()
    with Session(engine) as session:
        run = session.get(Run, "old-run")
        assert run is not None and run.status == "done" and run.finished_at is None
        run.probegate_version = "0.1.0"
        session.add(run)
        session.commit()
    engine.dispose()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("nosuchdriver://x/y", "stores are SQLite or PostgreSQL, not nosuchdriver"),
        ("mysql://u@127.0.0.1/db", "stores are SQLite or PostgreSQL, not mysql"),
        ("postgresql+psycopg://nobody@127.0.0.1:1/none", "cannot open store"),
    ],
)
def test_bad_urls_give_store_errors(url: str, message: str, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match=message):
        open_store(url)


def test_a_file_that_is_not_sqlite_is_a_store_error(tmp_path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n")
    with pytest.raises(StoreError, match="file is not a database"):
        open_store(str(notes))
    with pytest.raises(StoreError, match="is not an SQLite database"):
        check_store_url(str(notes))


def test_reading_never_creates_a_store(tmp_path) -> None:
    with pytest.raises(StoreError, match="no capture store at"):
        open_existing_store(f"sqlite:///{tmp_path / 'typo.db'}")
    assert not list(tmp_path.iterdir())


def test_probe_calls_of_an_older_store_get_their_door(store_url: str) -> None:
    raw = create_engine(normalize_url(store_url))
    with raw.begin() as conn:
        command.upgrade(_config(conn), "0002")
        for id_, via in (("a", "direct"), ("b", "mitm")):
            conn.execute(text(
                "INSERT INTO probecall (id, run_id, task_id, attempt, seq, at, tool, status, feedback, via) "
                f"VALUES ('{id_}', 'old', 't', 0, 1, '2025-01-01 00:00:00', 'get_time', 'ok', 'plain', '{via}')"))
    raw.dispose()
    engine = open_store(store_url)
    from probegate.probes.store import read_probe_calls

    assert sorted((r.id, r.via, r.door) for r in read_probe_calls(engine, "old")) == [
        ("a", "direct", "rest"), ("b", "mitm", "mitm")]
    engine.dispose()
