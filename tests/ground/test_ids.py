"""The one id rule and the paths built from ids (pure, table-driven)."""

from __future__ import annotations

from pathlib import Path

import pytest

from probegate.errors import UsageError
from probegate.ids import check_id, child_path, valid_id, valid_task_id
from probegate.urls import normalise_model_path, parse_path


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("run1", True),
        ("20250101-120000-fc-3f9a", True),
        ("a.b:c@d+e_f-g", True),
        ("x" * 128, True),
        ("x" * 129, False),
        ("", False),
        (".", False),
        ("..", False),
        ("../../../elsewhere/x", False),
        ("a/b", False),
        ("a\\b", False),
        ("-", False),
        ("-x", False),
        ("run1\n", False),  # `$` would have let this through
        ("a\x00b", False),
        ("a b", False),
        ("é", False),
        (None, False),
        (7, False),
    ],
)
def test_valid_id(value: object, ok: bool) -> None:
    assert valid_id(value) is ok


def test_task_id_may_be_the_adhoc_dash_only() -> None:
    assert valid_task_id("-") and valid_task_id("t01") and not valid_task_id("--") and not valid_task_id("../t")
    assert check_id("-", "task") == "-"
    with pytest.raises(UsageError, match=r"--run-id '-' is not usable as a run id"):
        check_id("-", "run", "--run-id")


@pytest.mark.parametrize("part", ["..", ".", "", "a/b", "../x", "a\\b", "a\x00b"])
def test_child_path_refuses_to_leave_its_folder(tmp_path: Path, part: str) -> None:
    with pytest.raises(UsageError):
        child_path(tmp_path, part)


def test_child_path_follows_symlinks(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "out" / "link").symlink_to(tmp_path / "elsewhere")
    assert child_path(tmp_path / "out", "run1") == tmp_path / "out" / "run1"
    with pytest.raises(UsageError, match="not inside"):
        child_path(tmp_path / "out", "link")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/v1/chat/completions", "/v1/chat/completions"),
        ("/v1/chat/./completions", "/v1/chat/completions"),
        ("/v1/x/../models", "/v1/models"),
        ("/v1/models/", "/v1/models/"),
        ("/v1//chat", "/v1//chat"),
        ("/api/show", "/api/show"),
        ("/v1/a/.", "/v1/a/"),
    ],
)
def test_model_path_normalised(path: str, expected: str) -> None:
    assert normalise_model_path(path) == expected


@pytest.mark.parametrize(
    "path",
    [
        "/v1/../../secret",
        "/v1/..",
        "/api/../v1/models",
        "/v1/x\x00y",
        "/v1/x\ty",
        "/v1/x\ny",
        "/v1/x\ry",
        "/v1/x\x7fy",
        "/v1/models?x=1",
        "/v1/models#frag",
        "/v1/a\\..\\..\\secret",
    ],
)
def test_model_path_refused(path: str) -> None:
    with pytest.raises(ValueError):
        normalise_model_path(path)
    target = parse_path(path)
    assert target is not None and target.kind == "model" and target.problem is not None
    assert target.problem.startswith("bad_path: ")


@pytest.mark.parametrize(
    ("run", "task", "problem"),
    [
        ("run1", "t1", None),
        ("run1", "-", None),
        ("../../../elsewhere/x", "t1", "x-probegate-run"),
        ("run1", "../t", "x-probegate-task"),
        ("run1\n", "t1", "x-probegate-run"),
    ],
)
def test_attribution_headers_follow_the_rule(run: str, task: str, problem: str | None) -> None:
    target = parse_path("/v1/chat/completions", run=run, task=task)
    assert target is not None
    if problem is None:
        assert target.problem is None and (target.run, target.task) == (run, task)
    else:
        assert target.problem is not None and problem in target.problem
        assert (target.run, target.task) == ("adhoc", "-")  # never an unchecked id


@pytest.mark.parametrize(
    "path", ["/r/../t1/0/v1/models", "/r/run1/t1\n/0/v1/models", "/r/-/t1/v1/models", "/r/a\x00/t/tools/get_weather"]
)
def test_ids_in_the_url_follow_the_rule(path: str) -> None:
    assert parse_path("/r/run1/t1/0/v1/models") == ("run1", "t1", 0, "model", "/v1/models", "/r/run1/t1/0", None)
    target = parse_path(path)
    assert target is not None and target.problem is not None and target.problem.startswith("bad_attribution")
    assert (target.run, target.task, target.attempt) == ("adhoc", "-", 0)
    assert parse_path("/r/../t1/0/nothing") is None
