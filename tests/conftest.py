"""Shared fixtures: real stores (SQLite files, PostgreSQL schemas) and real servers.

PostgreSQL tests use the server at ``$PROBEGATE_TEST_PG`` (default
``postgresql+psycopg://postgres@127.0.0.1:5432/test``); each test gets its own
schema, dropped afterwards, so tests never see each other's rows.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import Engine

from probegate.gateway.app import GatewayApp, GatewayConfig
from probegate.runner.compose import build_app
from probegate.store import CaptureWriter, open_store
from probegate.testing import RunningServer, ScriptedUpstream, serve_in_thread

PG_URL = os.environ.get("PROBEGATE_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def _pg_conninfo(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A PostgreSQL store URL whose ``search_path`` is a fresh schema."""
    schema = f"probegate_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_pg_conninfo(PG_URL), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in PG_URL else "?"
    yield f"{PG_URL}{sep}options=-csearch_path%3D{schema}"
    with psycopg.connect(_pg_conninfo(PG_URL), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """An SQLite store URL in the test's temporary folder."""
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Both stores: every test using this runs on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
    else:
        yield request.getfixturevalue("pg_url")


@pytest.fixture
def engine(store_url: str) -> Iterator[Engine]:
    """An open store (both kinds)."""
    eng = open_store(store_url)
    yield eng
    eng.dispose()


@pytest.fixture
def upstream() -> Iterator[tuple[ScriptedUpstream, RunningServer]]:
    """A scripted model server on loopback."""
    script = ScriptedUpstream()
    server = serve_in_thread(script)
    yield script, server
    server.stop()


class Gateway:
    """A running gateway with its store and writer, for tests."""

    def __init__(self, server: RunningServer, engine: Engine, writer: CaptureWriter, app: GatewayApp) -> None:
        self.server = server
        self.engine = engine
        self.writer = writer
        self.app = app

    @property
    def url(self) -> str:
        return self.server.url

    def base(self, run: str = "run1", task: str = "t1", attempt: int | None = 0) -> str:
        """The ``base_url`` an agent uses for this run/task/attempt."""
        tail = f"/{attempt}" if attempt is not None else ""
        return f"{self.url}/r/{run}/{task}{tail}/v1"

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until every exchange in flight is handed over and committed."""
        deadline = time.monotonic() + timeout
        while self.app.forwarder.inflight and time.monotonic() < deadline:
            time.sleep(0.005)
        self.writer.flush()


@pytest.fixture
def gateway_factory(engine: Engine) -> Iterator:
    """Start gateways in front of an upstream URL; all are stopped at the end."""
    started: list[tuple[RunningServer, CaptureWriter]] = []

    def start(upstream_url: str, **config: object) -> Gateway:
        writer = CaptureWriter(engine).start()
        app = build_app(GatewayConfig(upstream=upstream_url, **config), engine=engine, writer=writer)  # type: ignore[arg-type]
        server = serve_in_thread(app)
        started.append((server, writer))
        return Gateway(server, engine, writer, app)

    yield start
    for server, writer in started:
        server.stop()
        writer.close()


@pytest.fixture
def gateway(upstream: tuple[ScriptedUpstream, RunningServer], gateway_factory) -> Gateway:
    """A gateway in front of the scripted upstream (both stores)."""
    return gateway_factory(upstream[1].url)
