"""Fixtures for harness tests: a scripted model behind a real gateway with real probes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from probegate.runner.attempt import AttemptOutcome, AttemptSettings, run_attempt
from probegate.harnesses.base import Harness
from probegate.runner.local_gateway import LocalGateway
from probegate.store import Exchange, ProbeCall, open_store
from probegate.testing import RunningServer, ScriptedUpstream
from probegate.tasks.loader import TaskSet, load_task_set

TASKS_DIR = Path(__file__).parent / "tasks"
MODEL = "test-model"


@pytest.fixture(scope="session")
def task_set() -> TaskSet:
    """The small task set the harness tests drive."""
    return load_task_set(str(TASKS_DIR))


@pytest.fixture
def sqlite_engine(sqlite_url: str) -> Iterator[Engine]:
    """An SQLite store only (tests that need not run on both stores)."""
    engine = open_store(sqlite_url)
    yield engine
    engine.dispose()


@dataclass
class Rig:
    """A scripted model, a gateway with probes in front of it, and the store."""

    script: ScriptedUpstream
    gateway: LocalGateway
    engine: Engine

    def attempt(self, harness: Harness, task_set: TaskSet, task_id: str, *, run: str = "run1",
                attempt: int = 0, timeout: float = 60.0) -> AttemptOutcome:
        """Run one attempt end to end, then wait until every capture is committed."""
        settings = AttemptSettings(self.gateway.url, run, MODEL, timeout=timeout)
        outcome = run_attempt(harness, task_set.get(task_id), attempt, settings)
        self.gateway.writer.flush()
        return outcome

    def exchanges(self, run: str = "run1") -> list[Exchange]:
        with Session(self.engine) as session:
            return list(session.exec(select(Exchange).where(Exchange.run_id == run).order_by(Exchange.started_at)))

    def probe_calls(self, run: str = "run1") -> list[ProbeCall]:
        with Session(self.engine) as session:
            return list(session.exec(select(ProbeCall).where(ProbeCall.run_id == run).order_by(ProbeCall.seq)))

    def request_messages(self, index: int) -> list[dict]:
        """The messages of the ``index``-th request the model received."""
        return self.script.requests[index].json()["messages"]


def _rig(engine: Engine, upstream: tuple[ScriptedUpstream, RunningServer]) -> Iterator[Rig]:
    script, server = upstream
    with LocalGateway(server.url, engine, model=MODEL) as gateway:
        yield Rig(script, gateway, engine)


@pytest.fixture
def rig(sqlite_engine: Engine, upstream: tuple[ScriptedUpstream, RunningServer]) -> Iterator[Rig]:
    """The rig on SQLite."""
    yield from _rig(sqlite_engine, upstream)


@pytest.fixture
def rig_both(engine: Engine, upstream: tuple[ScriptedUpstream, RunningServer]) -> Iterator[Rig]:
    """The rig on SQLite and on PostgreSQL."""
    yield from _rig(engine, upstream)


