"""Reading probe calls and world states back from the store (both stores)."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import Session

from probegate.store.models import ProbeCall, WorldState
from probegate.probes.store import read_probe_calls, read_world_state


def test_filters_and_order(engine: Engine) -> None:
    rows = [
        ProbeCall(run_id="r", task_id="b", attempt=0, seq=1, tool="x"),
        ProbeCall(run_id="r", task_id="a", attempt=1, seq=2, tool="y"),
        ProbeCall(run_id="r", task_id="a", attempt=1, seq=1, tool="z"),
        ProbeCall(run_id="r", task_id="a", attempt=0, seq=1, tool="w"),
        ProbeCall(run_id="other", task_id="a", attempt=0, seq=1, tool="v"),
    ]
    with Session(engine) as session:
        session.add_all(rows)
        session.commit()
    assert [r.tool for r in read_probe_calls(engine, "r")] == ["w", "z", "y", "x"]
    assert [r.tool for r in read_probe_calls(engine, "r", "a")] == ["w", "z", "y"]
    assert [r.tool for r in read_probe_calls(engine, "r", "a", 1)] == ["z", "y"]
    assert read_probe_calls(engine, "nobody") == []


def test_world_state_round_trip(engine: Engine) -> None:
    with Session(engine) as session:
        session.add(WorldState(run_id="r", task_id="a", attempt=3, world="default", state={"outbox": {"OUT-1": {}}}))
        session.commit()
    row = read_world_state(engine, "r", "a", 3)
    assert row is not None and row.state == {"outbox": {"OUT-1": {}}}
    assert read_world_state(engine, "r", "a", 4) is None
