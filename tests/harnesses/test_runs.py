"""The Run row the runner writes (both stores)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from probegate.runner.runs import (
    check_run_id,
    create_run,
    finish_run,
    harness_slug,
    new_run_id,
    update_run,
)
from probegate import __version__
from probegate.errors import UsageError
from probegate.store import Run


@pytest.mark.parametrize(
    ("harness", "slug"),
    [("fc", "fc"), ("langchain", "langchain"), ('cmd:"python my_agent.py"', "cmd"), ("cmd:", "cmd"), ("!!", "harness")],
)
def test_harness_slug(harness: str, slug: str) -> None:
    assert harness_slug(harness) == slug


def test_new_run_id_shape() -> None:
    when = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert new_run_id('cmd:"x"', when, "beef") == "20250102-030405-cmd-beef"
    assert check_run_id(new_run_id("react")).split("-")[2] == "react"


@pytest.mark.parametrize("bad", ["", "has space", "a/b", "-lead", "x" * 200])
def test_check_run_id_refuses_ids_that_cannot_travel_in_a_url(bad: str) -> None:
    with pytest.raises(UsageError, match="--run-id"):
        check_run_id(bad)


def test_create_update_finish(engine: Engine) -> None:
    create_run(engine, "r1", task_set="s", harness="fc", model="m", upstream="http://u", params={"repeats": 2})
    with Session(engine) as session:
        row = session.get(Run, "r1")
        assert row is not None
        assert (row.status, row.probegate_version, row.finished_at) == ("running", __version__, None)
    update_run(engine, "r1", params={"repeats": 2, "outcomes": {"t/0": {"stop": "answered"}}})
    finish_run(engine, "r1", "done")
    with Session(engine) as session:
        row = session.get(Run, "r1")
        assert row is not None
        assert (row.status, row.harness, row.finished_at is not None) == ("done", "fc", True)
        assert row.params == {"repeats": 2, "outcomes": {"t/0": {"stop": "answered"}}}


def test_duplicate_run_id_is_a_usage_error(engine: Engine) -> None:
    create_run(engine, "r1", task_set="s", harness="fc", model="m", upstream=None, params={})
    with pytest.raises(UsageError, match="already exists"):
        create_run(engine, "r1", task_set="s", harness="fc", model="m", upstream=None, params={})
