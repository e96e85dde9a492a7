"""Reach dimensions and path depth per attempt (docs/metrics.md §7)."""

from __future__ import annotations

import pytest

from probegate.scorer.judge.task_score import task_scorer
from probegate.tasks.loader import Task
from tests.scorer.rowkit import play

score = task_scorer()
FIND = ("find_contact", {"query": "Jonas Becker"})
SEND = ("send_email", {"to": "jonas.becker@globex.example", "subject": "ORD-5002 shipped", "body": "Order ORD-5002 has shipped."})
WRONG_TO = ("send_email", {**SEND[1], "to": "someone@else.example"})

CASES = [
    # rule, calls, answer, dims (tool, param, info, path, result), depth
    ("reference", [FIND, SEND], "ok", (True, True, True, True, True), 4),
    ("nothing", [], "ok", (False, False, True, False, False), 0),
    ("intent only: the tool with wrong arguments", [WRONG_TO], "ok", (False, False, True, False, False), 1),
    ("one action done", [FIND], "ok", (False, False, True, False, False), 2),
    ("wrong order: param holds, path does not", [SEND, FIND], "ok", (True, True, True, False, True), 2),
    ("all done, no answer", [FIND, SEND], "", (True, True, False, True, True), 2),
]


@pytest.mark.parametrize(("rule", "calls", "answer", "dims", "depth"), CASES, ids=[c[0] for c in CASES])
def test_dimensions_and_depth(task_by_id: dict[str, Task], rule: str, calls: list, answer: str, dims: tuple, depth: int) -> None:
    task = task_by_id["email-jonas"]
    s = score(play(task, calls, answer), task)
    assert tuple(s.dimensions[d] for d in ("tool", "param", "info", "path", "result")) == dims, rule
    assert s.depth == depth, rule


def test_result_without_verify_checks_uses_side_effects_or_path(task_by_id: dict[str, Task]) -> None:
    task = task_by_id["orders-unordered"]
    s = score(play(task, [("get_order", {"order_id": "ORD-5002"}), ("get_order", {"order_id": "ORD-5001"})], "delivered and shipped"), task)
    assert s.passed and s.dimensions["result"] and s.dimensions["path"]
    half = score(play(task, [("get_order", {"order_id": "ORD-5002"})], "shipped"), task)
    assert not half.dimensions["result"] and half.dimensions["tool"]


def test_subset_tool_dimension_needs_only_the_required_tools(task_by_id: dict[str, Task]) -> None:
    task = task_by_id["reminder-subset"]
    create = ("create_reminder", {"title": "Call Globex", "date": "2025-03-17", "time": "10:00"})
    s = score(play(task, [create], "Reminder created."), task)
    assert s.passed and s.dimensions["tool"] and s.dimensions["param"]


def test_info_counts_only_values_the_agent_observed(task_by_id: dict[str, Task]) -> None:
    task = task_by_id["weather-berlin"]
    blind = score(play(task, [], "It is cloudy and 6 degrees."), task)
    assert blind.answer_checks and all(c.ok for c in blind.answer_checks)
    assert blind.dimensions["info"] is False  # nothing reached the agent: a guess, not information
    looked = score(play(task, [("get_weather", {"city": "Berlin"})], "It is cloudy and 6 degrees."), task)
    assert looked.dimensions["info"] is True
