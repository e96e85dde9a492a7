"""Attempt claims in the store (both stores): a redelivered attempt supersedes the earlier
delivery's rows and counts once; a poisoned one becomes an error; a stale delivery
cannot record its outcome."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from probegate.runner.claims import claim, claims, finish, give_up, poisoned_outcome
from probegate.runner.runs import create_run, finish_run
from probegate.runner.worker import AttemptJob, job_for, outcome_from_json
from probegate.scorer.rebuild.load import load_attempts
from probegate.store import Exchange, ProbeCall, open_store

RUN = "run-claims"


@pytest.fixture
def store(store_url: str) -> Iterator[Engine]:
    engine = open_store(store_url)
    create_run(engine, RUN, task_set="t", harness="fc", model="m", upstream=None, params={"outcomes": {}})
    yield engine
    engine.dispose()


def _rows(engine: Engine, attempt: int, n: int) -> None:
    """``n`` exchanges and probe calls of task ``t1`` as one delivery writes them."""
    with Session(engine) as session:
        for seq in range(n):
            session.add(Exchange(run_id=RUN, task_id="t1", attempt=attempt, seq=seq, path="/v1/chat/completions"))
            session.add(ProbeCall(run_id=RUN, task_id="t1", attempt=attempt, seq=seq, tool="search_products"))
        session.commit()


def _superseded(engine: Engine) -> list[tuple[int, bool]]:
    with Session(engine) as session:
        return sorted((e.attempt, e.superseded) for e in session.exec(select(Exchange)))


def test_a_redelivered_attempt_supersedes_the_lost_delivery_and_counts_once(store: Engine) -> None:
    first = claim(store, RUN, "t1", 0, "w1")
    assert first is not None and first.generation == 1
    _rows(store, 0, 2)  # the first worker got this far, then was lost
    _rows(store, 1, 1)  # another attempt of the same task: untouched
    second = claim(store, RUN, "t1", 0, "w2")
    assert second is not None and second.generation == 2
    assert _superseded(store) == [(0, True), (0, True), (1, False)]
    _rows(store, 0, 3)  # the second delivery's own rows
    loaded = load_attempts(store, RUN)
    assert len(loaded[("t1", 0)].exchanges) == 3 and len(loaded[("t1", 0)].probe_calls) == 3
    assert len(loaded[("t1", 1)].exchanges) == 1
    # the lost delivery, were it alive after all, can no longer record its outcome
    assert not finish(store, first, {"stop": "answered"})
    assert finish(store, second, {"stop": "answered", "final_answer": "25"})
    assert claim(store, RUN, "t1", 0, "w3") is None  # ended: a late duplicate does not run it again
    (row,) = claims(store, RUN)
    assert (row.status, row.generation, row.worker, row.outcome["final_answer"]) == ("done", 2, "w2", "25")


def test_a_poisoned_attempt_is_recorded_as_an_error_not_run_again(store: Engine) -> None:
    assert [claim(store, RUN, "t1", 0, f"w{i}", max_tries=2) is not None for i in range(3)] == [True, True, False]
    (row,) = claims(store, RUN)
    assert (row.status, row.outcome) == ("error", poisoned_outcome(2))
    assert claim(store, RUN, "t1", 0, "w9", max_tries=2) is None


def test_no_attempt_starts_once_the_run_is_interrupted(store: Engine) -> None:
    finish_run(store, RUN, "interrupted")
    assert claim(store, RUN, "t1", 0, "w1") is None
    assert claims(store, RUN) == []


def test_a_job_that_failed_every_retry_is_an_error_even_unclaimed(store: Engine) -> None:
    give_up(store, RUN, "t1", 0, "TaskSetError: no task set 'x' on this machine")
    held = claim(store, RUN, "t2", 0, "w1")
    assert held is not None
    give_up(store, RUN, "t2", 0, "StoreError: down")
    assert finish(store, held, {"stop": "answered"}) is False
    got = {(r.task_id, r.status, r.outcome["error"]) for r in claims(store, RUN)}
    assert got == {("t1", "error", "TaskSetError: no task set 'x' on this machine"), ("t2", "error", "StoreError: down")}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"final_answer": "25", "stop": "answered", "error": None, "steps": 3, "seconds": 1.5, "passed": None},
         ("25", "answered", None, 3, 1.5, None)),
        (poisoned_outcome(3), (None, "error", poisoned_outcome(3)["error"], 0, 0.0, None)),
        ({}, (None, "error", None, 0, 0.0, None)),
    ],
)
def test_outcome_from_json(data: dict[str, Any], expected: tuple[Any, ...]) -> None:
    o = outcome_from_json("t1", 2, data)
    assert (o.key, (o.result.final_answer, o.result.stop, o.result.error, o.result.steps, o.seconds, o.passed)) == (
        "t1/2", expected)


def test_a_job_round_trips_and_names_its_task_set_absolutely(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "set").mkdir()
    monkeypatch.chdir(tmp_path)
    job = job_for("set", run_id="r", task_id="t", attempt=1, harness="fc", model="m", compat=("x",))
    assert job.task_set == str(tmp_path / "set")
    assert AttemptJob.from_json(job.to_json()) == job
    assert job_for("default", run_id="r", task_id="t", attempt=0, harness="fc", model="m").task_set == "default"
