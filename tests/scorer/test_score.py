"""The task score (docs/metrics.md §5) on attempts played through the real probes."""

from __future__ import annotations

import pytest

from probegate.scorer.judge.task_score import Score, task_scorer
from probegate.tasks.loader import Task
from tests.scorer.rowkit import play

score = task_scorer()

SEND = ("send_email", {"to": "jonas.becker@globex.example", "subject": "ORD-5002 shipped", "body": "Order ORD-5002 has shipped."})
FIND = ("find_contact", {"query": "Jonas Becker"})


def test_reference_attempt_passes(task_by_id: dict[str, Task]) -> None:
    s = score(play(task_by_id["email-jonas"], [FIND, SEND], "Done: I have sent it."), task_by_id["email-jonas"])
    assert (s.value, s.passed, s.stage, s.attributions, s.interop) == (1.0, True, None, (), False)
    assert s.depth == 4 and all(s.dimensions.values())
    assert s.explanation.startswith("passed")
    assert s.to_json()["labels"] == []


# score = 2m / (n + a) * n / (n + 1): n = 2 expected actions, m matched, a calls after retry folding
PARTIAL = [
    ("one of two actions", [FIND], 2 * 1 / (2 + 1) * 2 / 3),
    ("nothing", [], 0.0),
    ("both, but a duplicate side effect", [FIND, SEND, SEND], 2 * 2 / (2 + 3) * 2 / 3),
    ("right calls in the wrong order", [SEND, FIND], 2 * 1 / (2 + 2) * 2 / 3),
    ("one of two, then three unrelated calls", [FIND, ("get_weather", {"city": "Berlin"}), ("get_time", {"city": "Berlin"}),
                                                ("find_contact", {"query": "Karl"})], 2 * 1 / (2 + 4) * 2 / 3),
]


@pytest.mark.parametrize(("rule", "calls", "value"), PARTIAL, ids=[c[0] for c in PARTIAL])
def test_partial_credit_is_f1_of_matched_calls_over_n_plus_one_units(task_by_id: dict[str, Task], rule: str, calls: list, value: float) -> None:
    s = score(play(task_by_id["email-jonas"], calls, "Done."), task_by_id["email-jonas"])
    assert not s.passed and s.value == pytest.approx(value), rule


def test_a_shotgun_attempt_scores_below_an_honest_one_of_the_same_depth(task_by_id: dict[str, Task]) -> None:
    task = task_by_id["email-jonas"]
    honest = score(play(task, [FIND], "I found Jonas but could not send the mail."), task)
    noise = [("find_contact", {"query": q}) for q in ("Jonas", "Becker", "Globex", "ORD-5002")]
    shotgun = score(play(task, [*noise, FIND, ("get_weather", {"city": "Berlin"})], "Done."), task)
    assert len(honest.alignment.matched) == len(shotgun.alignment.matched) == 1
    assert shotgun.value < honest.value / 2
    assert shotgun.alignment.accuracy < honest.alignment.accuracy


def test_all_actions_but_failed_verification_never_reaches_one() -> None:
    task = Task.model_validate({
        "id": "loose", "tier": "P1", "category": "sequential", "dimensions": ["result"], "prompt": {"en": "Mail Jonas about ORD-5002"},
        "tools": ["send_email"], "expected_actions": [{"tool": "send_email", "match": "any", "side_effect": True}],
        "verify": [{"check": "email_sent", "to": "jonas.becker@globex.example", "subject_contains": "ORD-5002"}],
        "trap": {"kind": "distractor", "note": "n"},
    })
    s = score(play(task, [("send_email", {"to": "jonas.becker@globex.example", "subject": "hello", "body": "b"})], "ok"), task)
    assert s.value == 0.5 and not s.passed and s.stage == "final_answer"
    assert s.attributions[0].rule == "param_error.verify_failed"
    assert not s.verify_checks[0].ok


def test_answer_checks_gate_the_pass(task_by_id: dict[str, Task]) -> None:
    task = task_by_id["weather-berlin"]
    good = score(play(task, [("get_weather", {"city": "Berlin"})], "It is cloudy."), task)
    bad = score(play(task, [("get_weather", {"city": "Berlin"})], "It is snowing."), task)
    assert good.passed and not bad.passed and bad.value == 0.5
    assert bad.dimensions["info"] is False and bad.dimensions["tool"] is True


def test_retry_after_injected_fault_still_passes(task_by_id: dict[str, Task]) -> None:
    task = task_by_id["weather-fault"]
    call = ("get_weather", {"city": "Hamburg"})
    s = score(play(task, [call, call], "It is 5 degrees."), task)
    assert s.passed and s.alignment.recoveries == (0,)


def test_score_shape() -> None:
    assert Score(0.0, False, "x").labels == []


def test_an_attempt_without_a_world_state_is_checked_against_the_fixture(task_by_id: dict[str, Task]) -> None:
    task = task_by_id["email-jonas"]
    t = play(task, [FIND], "ok").model_copy(update={"world_state": None})
    s = score(t, task)
    assert s.verify_checks[0].name == "verify.email_sent" and not s.verify_checks[0].ok
    assert "no world state" not in s.verify_checks[0].evidence
    blind = task_scorer(initial_state=None)(t, task)
    assert blind.verify_checks[0].evidence == "no world state recorded for this attempt"
