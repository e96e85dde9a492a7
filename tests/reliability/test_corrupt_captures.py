"""Corrupt and partial captures are scored with a warning and the affected steps marked, never a crash.

Each test writes a clean attempt (weather-berlin: one get_weather call, then the
answer), then damages the stored rows with raw SQL, the way a crashed writer, an
older tool or a hand edit would (the ORM would refuse most of these values), and
scores the run through ``scorer.score_run`` and ``probegate score``. Values that
only SQLite can hold (text that is not JSON in a JSON column, a date that is not a
date, text in an integer column) run on SQLite alone.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from probegate.cli import app
from probegate.store.models import Run
from probegate.scorer.pipeline import score_run
from probegate.scorer.report.outputs import dump_json
from probegate.scorer.report.summary import RunScore
from tests.scorer.rowkit import TASKS_DIR, AttemptBuilder, write

TASK = "weather-berlin"
RUN = "broken"
#: The answer turn as a stream that stopped mid-event: what the gateway keeps when reassembly never happened.
TRUNCATED_SSE = b'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"It is clo'


@pytest.fixture
def run_store(engine: Engine) -> Engine:
    """A store holding run ``broken``: a clean, passing attempt before any damage."""
    return _fill(engine)


def damage(engine: Engine, table: str, column: str, value: Any, where: str = "1 = 1", *, as_json: bool = True) -> None:
    """``UPDATE table SET column = value`` in raw SQL (JSON text goes in as JSON on PostgreSQL)."""
    postgres = engine.dialect.name == "postgresql"
    placeholder = "CAST(:v AS jsonb)" if as_json and postgres else ":v"
    with engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE {table} SET {column} = {placeholder} WHERE {where}"), {"v": value})


def score(engine: Engine) -> RunScore:
    result = score_run(engine, RUN)
    again = score_run(engine, RUN)
    assert dump_json(result.summary()) == dump_json(again.summary())  # warnings included: deterministic
    return result


def test_a_clean_capture_has_no_warnings(run_store: Engine) -> None:
    result = score(run_store)
    assert result.summary()["warnings"] == [] and result.results[0].trajectory.warnings == []
    assert result.results[0].score.passed


def test_a_truncated_stream_is_a_marked_step(run_store: Engine) -> None:
    damage(run_store, "exchange", "completion", None, "seq = 1", as_json=False)
    damage(run_store, "exchange", "response_raw", TRUNCATED_SSE, "seq = 1", as_json=False)
    damage(run_store, "exchange", "sse_events", None, "seq = 1", as_json=False)
    damage(run_store, "exchange", "stream", True, "seq = 1", as_json=False)
    result = score(run_store)
    attempt = result.results[0]
    assert result.summary()["warnings"] == [
        f"{TASK}/0: exchange 1: no reassembled turn although the server answered (a truncated or unreadable stream)"]
    step = attempt.trajectory.steps[-1]
    assert (step.exchange_seq, step.parse, step.parse_notes, step.tool_name) == (1, "failed", ["corrupt_capture"], None)
    assert attempt.trajectory.final_answer is None and not attempt.score.passed
    # the broken capture is not blamed on the model's format
    assert "format_mismatch" not in attempt.score.labels


def test_a_stream_without_its_events_still_scores(run_store: Engine) -> None:
    damage(run_store, "exchange", "stream", True, as_json=False)
    damage(run_store, "exchange", "sse_events", None, as_json=False)
    result = score(run_store)
    assert result.summary()["warnings"] == [] and result.results[0].score.passed


@pytest.mark.parametrize(
    ("column", "value", "where", "warning"),
    [
        ("request_body", '"just text"', "seq = 0", "exchange 0: request_body is a string, not an object"),
        ("request_body", "[1, 2]", "seq = 0", "exchange 0: request_body is an array, not an object"),
        ("completion", '"It is cloudy."', "seq = 1", "exchange 1: completion is a string, not an object"),
        ("completion", '{"assistant": [1]}', "seq = 1", "exchange 1: completion.assistant is an array, not an object"),
        ("completion", '{"assistant": {"content": 5}}', "seq = 1",
         "exchange 1: completion.assistant.content is a number, not a string"),
        ("completion", '{"assistant": {"tool_calls": {"name": "get_weather"}}}', "seq = 0",
         "exchange 0: completion.assistant.tool_calls is an object, not an array"),
        ("flags", '{"a": 1}', "seq = 1", "exchange 1: flags is an object, not an array of strings"),
        ("response_headers", '"server: x"', "seq = 1", "exchange 1: response_headers is a string, not an object of strings"),
        ("request_headers", '{"user-agent": ["x"]}', "seq = 1",
         "exchange 1: request_headers is an object, not an object of strings"),
    ],
)
def test_an_exchange_with_garbage_in_a_json_column(run_store: Engine, column: str, value: str, where: str,
                                                   warning: str) -> None:
    damage(run_store, "exchange", column, value, where)
    result = score(run_store)
    assert result.summary()["warnings"] == [f"{TASK}/0: {warning}"]
    if column == "completion":  # the turn cannot be read: its one step is failed and marked
        seq = int(where.split("=")[1])
        steps = [s for s in result.results[0].trajectory.steps if s.exchange_seq == seq]
        assert [(s.parse, s.parse_notes) for s in steps] == [("failed", ["corrupt_capture"])]


@pytest.mark.parametrize(
    ("column", "value", "warning"),
    [
        ("args", "[1, 2]", "probe call 1: args is an array, not an object"),
        ("args", '"Berlin"', "probe call 1: args is a string, not an object"),
        ("missing", '"city"', "probe call 1: missing is a string, not an array of strings"),
        ("invalid", "[1]", "probe call 1: invalid is an array, not an object"),
    ],
)
def test_a_probe_call_with_garbage_marks_its_step(run_store: Engine, column: str, value: str, warning: str) -> None:
    damage(run_store, "probecall", column, value)
    result = score(run_store)
    trajectory = result.results[0].trajectory
    assert result.summary()["warnings"] == [f"{TASK}/0: {warning}"]
    step = trajectory.step(trajectory.probe_calls[0].step_id)  # type: ignore[arg-type]
    assert step.tool_name == "get_weather" and "corrupt_capture" in step.parse_notes


def test_a_world_state_that_is_a_list(run_store: Engine) -> None:
    damage(run_store, "worldstate", "state", "[1, 2, 3]")
    result = score(run_store)
    assert result.summary()["warnings"] == [f"{TASK}/0: world state: state is an array, not an object"]
    assert result.results[0].trajectory.world_state is None


def test_everything_broken_at_once_still_scores(run_store: Engine) -> None:
    for table, column, value in [("exchange", "request_body", "[]"), ("exchange", "completion", "7"),
                                 ("exchange", "flags", '"x"'), ("exchange", "response_body", '"<html>"'),
                                 ("probecall", "args", "[]"), ("probecall", "result", '"?"'),
                                 ("worldstate", "state", '"s"'), ("run", "params", "[1]")]:
        damage(run_store, table, column, value)
    result = score(run_store)
    warnings = result.summary()["warnings"]
    assert warnings[0] == f"run {RUN}: params is not an object"
    assert len(warnings) == 1 + 2 * 3 + 1 + 1  # run; 2 exchanges x (request_body, completion, flags); probe; world
    assert all(s.parse == "failed" and s.parse_notes == ["corrupt_capture"] for s in result.results[0].trajectory.steps)


# --- values only SQLite can hold -----------------------------------------------------------------

@pytest.fixture
def sqlite_run(sqlite_url: str) -> Engine:
    from probegate.store import open_store

    return open_store(sqlite_url)


@pytest.mark.parametrize(
    ("table", "column", "value", "warning"),
    [
        ("exchange", "response_headers", "{not json", "exchange 1: response_headers holds invalid JSON ('{not json')"),
        ("exchange", "completion", '{"assistant": {"content": "It is clo', "exchange 1: completion holds invalid JSON"),
        ("exchange", "started_at", "yesterday", "exchange 1: started_at holds 'yesterday', not a time"),
        ("probecall", "args", "{city: Berlin}", "probe call 1: args holds invalid JSON ('{city: Berlin}')"),
        ("probecall", "at", "soon", "probe call 1: at holds 'soon', not a time"),
        ("worldstate", "state", "{", "world state: state holds invalid JSON ('{')"),
    ],
)
def test_values_that_do_not_decode(sqlite_run: Engine, table: str, column: str, value: str, warning: str) -> None:
    run_store = _fill(sqlite_run)
    where = "seq = 1" if table == "exchange" else "1 = 1"
    damage(run_store, table, column, value, where, as_json=False)
    warnings = score(run_store).summary()["warnings"]
    assert any(w.startswith(f"{TASK}/0: {warning}") for w in warnings), warnings


def test_text_in_an_integer_column(sqlite_run: Engine) -> None:
    run_store = _fill(sqlite_run)
    damage(run_store, "exchange", "seq", "one", "seq = 1", as_json=False)
    damage(run_store, "exchange", "status_code", "OK", "seq = 0", as_json=False)
    warnings = score(run_store).summary()["warnings"]
    assert f"{TASK}/0: exchange 0: status_code is a string, not an integer" in warnings
    assert f"{TASK}/0: exchange 1: seq is a string, not an integer" in warnings


def test_run_params_that_do_not_decode(sqlite_run: Engine) -> None:
    run_store = _fill(sqlite_run)
    damage(run_store, "run", "params", "{oops", as_json=False)
    result = score(run_store)
    assert result.summary()["warnings"] == [f"run {RUN}: params holds invalid JSON ('{{oops')"]
    assert result.results[0].score.passed


def _fill(engine: Engine) -> Engine:
    """Write run ``broken`` (weather-berlin: one get_weather call, then the answer) into ``engine``."""
    b = AttemptBuilder(run=RUN, task=TASK)
    b.fc_chain("Weather in Berlin?", [("get_weather", {"city": "Berlin"}, {"condition": "cloudy"})], "It is cloudy.")
    b.world({"weather_lookups": 1})
    write(engine, *b.rows, run=Run(id=RUN, task_set=str(TASKS_DIR), harness="fc", model="m", params={"outcomes": {}}))
    return engine


# --- the command line -----------------------------------------------------------------------------

def test_probegate_score_prints_and_records_the_warnings(sqlite_run: Engine, sqlite_url: str, tmp_path: Path) -> None:
    run_store = _fill(sqlite_run)
    damage(run_store, "exchange", "completion", "{broken", "seq = 1", as_json=False)
    damage(run_store, "probecall", "args", "[1]", as_json=False)
    result = CliRunner().invoke(app, ["score", RUN, "--store", sqlite_url, "--out", str(tmp_path / "runs")])
    assert result.exit_code == 0, result.output
    assert "capture warnings: 2" in result.output
    assert "exchange 1: completion holds invalid JSON" in result.output
    summary = json.loads((tmp_path / "runs" / RUN / "summary.json").read_text())
    assert summary["warnings"] == [f"{TASK}/0: exchange 1: completion holds invalid JSON ('{{broken')",
                                   f"{TASK}/0: probe call 1: args is an array, not an object"]
    trace = json.loads((tmp_path / "runs" / RUN / "traces" / f"{TASK}-0.json").read_text())
    assert trace["trajectory"]["warnings"] == [w.split(": ", 1)[1] for w in summary["warnings"]]
    traced = CliRunner().invoke(app, ["trace", RUN, TASK, "--store", sqlite_url])
    assert traced.exit_code == 0 and "capture warnings: 2" in traced.output


# --- any JSON anywhere ------------------------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
        ["assistant", "content", "tool_calls", "name", "arguments", "arguments_raw", "id", "messages", "role",
         "tools", "city", "x"]), inner, max_size=3),
    max_leaves=8,
)
_EXCHANGE_JSON = ("request_body", "response_body", "completion", "flags", "request_headers", "response_headers")
_PROBE_JSON = ("args", "missing", "invalid", "result")


@functools.cache
def _task() -> Any:
    from probegate.tasks.loader import load_task_set

    return load_task_set(str(TASKS_DIR)).get(TASK)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(_EXCHANGE_JSON + _PROBE_JSON + ("state",)), st.integers(0, 1), _JSON),
                min_size=1, max_size=4))
@example([("request_body", 0, {"tools": 1})])  # found by CI: a number where the tool list should be
@example([("request_body", 1, {"messages": [{"role": "assistant", "tool_calls": [{"function": 1}]}]})])
def test_any_json_in_any_column_scores(damages: list[tuple[str, int, Any]]) -> None:
    # the rebuild, the score and the file outputs, in memory: rows as the store would hand them over
    from probegate.store.models import Exchange, ProbeCall
    from probegate.scorer.report.metrics import AttemptResult
    from probegate.scorer.report.outputs import scores_csv, trace_document
    from probegate.scorer.rebuild.build import build_trajectory
    from probegate.scorer.rebuild.rows import AttemptRows, RunInfo
    from probegate.scorer.judge.task_score import task_scorer

    task = _task()
    b = AttemptBuilder(run=RUN, task=TASK)
    b.fc_chain("Weather in Berlin?", [("get_weather", {"city": "Berlin"}, {"condition": "cloudy"})], "It is cloudy.")
    exchanges = [r for r in b.rows if isinstance(r, Exchange)]
    probes = [r for r in b.rows if isinstance(r, ProbeCall)]
    state: Any = {"weather_lookups": 1}
    for column, index, value in damages:
        if column == "state":
            state = value
        elif column in _PROBE_JSON:
            setattr(probes[0], column, value)
        else:
            setattr(exchanges[index], column, value)
    rows = AttemptRows(RUN, TASK, 0, tuple(exchanges), tuple(probes), state)
    trajectory = build_trajectory(rows, RunInfo(RUN, "t", "fc", "m"), tools=task.tools, max_steps=task.max_steps)
    result = AttemptResult(task, trajectory, task_scorer()(trajectory, task))
    run_score = RunScore(RunInfo(RUN, "t", "fc", "m"), "t", (result,))
    dump_json(run_score.summary())
    dump_json(trace_document(result))
    scores_csv(run_score)  # report.html with broken rows: test_probegate_score_prints_and_records_the_warnings
    assert all(isinstance(w, str) and ": " in w for w in trajectory.warnings)
