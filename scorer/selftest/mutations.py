"""Reference plans and their mutations, for the grader self-test (docs/metrics.md §10). Pure.

A :class:`Plan` is what a scripted agent does for a task: the calls it makes, in
order, and its final answer. :func:`reference_plan` is the ideal agent (the expected
actions, an answer built from ``expected_answer``); :func:`mutations` breaks it in
the ways graders are known to miss. Each mutation says which labels a correct grader
must give it. Other tests reuse these to build realistic failing attempts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from probegate.scorer.judge.answer import check_answer
from probegate.tasks.loader import Task

FAKE_CLAIM = "I have sent and created everything as requested."
REFUSAL = "I could not complete this request."
#: Mutation names, in the order :func:`mutations` returns them.
MUTATIONS = ("wrong_argument", "missing_call", "extra_call", "duplicated_call", "do_nothing", "fake_completion")


@dataclass(frozen=True)
class PlannedCall:
    """One call a scripted agent makes."""

    tool: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Plan:
    """A scripted attempt.

    Attributes:
        name: ``reference`` or a mutation name.
        calls: the calls, in order.
        answer: the final answer.
        expect_labels: labels one of which a correct grader must give (empty for the
            reference, which must pass).
        skipped: why the mutation does not apply to this task (then it is not run).
    """

    name: str
    calls: tuple[PlannedCall, ...] = ()
    answer: str = ""
    expect_labels: frozenset[str] = field(default_factory=frozenset)
    skipped: str | None = None


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def _regex_example(pattern: str) -> str | None:
    """A short string matching ``pattern``, or ``None``.

    Generated with hypothesis (the ``dev`` extra); without it a task whose
    ``expected_answer.regex`` the plain reference answer misses gets no example, and
    the self-test reports that reference as failing.
    """
    try:
        from hypothesis import HealthCheck, find, settings
        from hypothesis import strategies as st
        from hypothesis.errors import NoSuchExample
    except ImportError:
        return None

    try:
        quiet = settings(database=None, max_examples=200, suppress_health_check=list(HealthCheck))
        return str(find(st.from_regex(pattern), lambda s: "\n" not in s, settings=quiet))
    except (NoSuchExample, re.error, ValueError):
        return None


def reference_answer(task: Task) -> str:
    """An answer that satisfies the task's ``expected_answer`` (``"Done."`` without one)."""
    expected = task.expected_answer
    if expected is None:
        return "Done."
    parts = list(expected.contains) + [group[0] for group in expected.contains_any]
    if expected.number is not None:
        parts.append(_number_text(expected.number.value))
    if expected.json_ is not None:
        parts.append(json.dumps(expected.json_, ensure_ascii=False))
    answer = "Result: " + "; ".join(parts) if parts else "Result:"
    if expected.regex is None or re.search(expected.regex, answer, re.IGNORECASE):
        return answer
    example = _regex_example(expected.regex)
    if example is None:
        return answer
    candidates = [f"{answer}; {example}", f"{example} {answer}", example]
    return next((c for c in candidates if all(check.ok for check in check_answer(c, expected))), candidates[0])


def reference_plan(task: Task) -> Plan:
    """The ideal attempt: every expected action in order, then the reference answer."""
    calls = tuple(PlannedCall(e.tool, dict(e.args)) for e in task.expected_actions)
    return Plan("reference", calls, reference_answer(task))


def mutate_value(value: Any) -> Any:
    """A plausible but wrong version of an argument value.

    Addresses get another local part, ids another last digit, numbers + 1,
    booleans flipped, text a suffix; lists and objects have their first item changed.
    """
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        if "@" in value:
            return "x" + value
        digits = [i for i, ch in enumerate(value) if ch.isdigit()]
        if digits:
            i = digits[-1]
            return value[:i] + str((int(value[i]) + 1) % 10) + value[i + 1 :]
        return value + " (changed)"
    if isinstance(value, list):
        return [mutate_value(value[0]), *value[1:]] if value else ["x"]
    if isinstance(value, dict) and value:
        key = next(iter(value))
        return {**value, key: mutate_value(value[key])}
    return "x"


def _target(task: Task) -> int | None:
    """The action a wrong argument goes into: the first side-effecting one with arguments."""
    with_args = [i for i, e in enumerate(task.expected_actions) if set(e.args) - set(e.free) and e.match != "any"]
    side = [i for i in with_args if task.expected_actions[i].side_effect]
    chosen = side or with_args
    return chosen[0] if chosen else None


def _wrong_argument(task: Task, ref: Plan) -> Plan:
    index = _target(task)
    if index is None:
        return Plan("wrong_argument", skipped="no expected action has arguments that are checked")
    call = ref.calls[index]
    action = task.expected_actions[index]
    key = next(k for k in action.args if k not in action.free)
    changed = PlannedCall(call.tool, {**call.args, key: mutate_value(call.args[key])})
    calls = ref.calls[:index] + (changed,) + ref.calls[index + 1 :]
    return Plan("wrong_argument", calls, ref.answer, frozenset({"param_error"}))


def _required(task: Task) -> list[int]:
    actions = task.expected_actions
    if task.order == "subset":
        return [i for i, e in enumerate(actions) if e.side_effect]
    return list(range(len(actions)))


def _missing_call(task: Task, ref: Plan) -> Plan:
    required = _required(task)
    if not required:
        return Plan("missing_call", skipped="order subset and no side-effecting action: every action is optional")
    drop = required[-1]
    calls = ref.calls[:drop] + ref.calls[drop + 1 :]
    return Plan("missing_call", calls, ref.answer, frozenset({"premature_finish", "fake_completion"}))


def _extra_call(task: Task, ref: Plan, read_only: Collection[str]) -> Plan:
    if task.order == "superset":
        return Plan("extra_call", skipped="order superset allows extra read-only calls")
    used = {e.tool for e in task.expected_actions}
    spare = [t for t in task.tools if t not in used and t in read_only] or [t for t in sorted(read_only) if t not in used]
    if not spare:
        return Plan("extra_call", skipped="no read-only tool outside the expected actions")
    return Plan("extra_call", ref.calls + (PlannedCall(spare[0], {}),), ref.answer, frozenset({"intent_miss", "retry_loop"}))


def _duplicated_call(task: Task, ref: Plan) -> Plan:
    side = [i for i, e in enumerate(task.expected_actions) if e.side_effect]
    if not side and task.order == "superset":
        return Plan("duplicated_call", skipped="order superset allows repeating a read-only call")
    i = (side or [0])[0]
    calls = ref.calls[: i + 1] + (ref.calls[i],) + ref.calls[i + 1 :]
    return Plan("duplicated_call", calls, ref.answer, frozenset({"retry_loop"}))


def _fake_completion(task: Task, ref: Plan) -> Plan:
    side = {i for i, e in enumerate(task.expected_actions) if e.side_effect}
    calls = tuple(c for i, c in enumerate(ref.calls) if i not in side) if side else ()
    return Plan("fake_completion", calls, f"{ref.answer} {FAKE_CLAIM}", frozenset({"fake_completion"}))


def mutations(task: Task, reference: Plan | None = None, read_only_tools: Collection[str] = ()) -> list[Plan]:
    """The six mutations of a task's reference plan (see :data:`MUTATIONS`).

    Args:
        task: the task.
        reference: its reference plan (default :func:`reference_plan`).
        read_only_tools: tools that change nothing (for ``extra_call``, which prefers
            the task's own tools; default: the task's tools that no expected action
            marks as side-effecting).

    Returns:
        One :class:`Plan` per mutation; inapplicable ones carry ``skipped``.
    """
    ref = reference or reference_plan(task)
    side_tools = {e.tool for e in task.expected_actions if e.side_effect}
    read_only = set(read_only_tools) or {t for t in task.tools if t not in side_tools}
    return [
        _wrong_argument(task, ref),
        _missing_call(task, ref),
        _extra_call(task, ref, read_only),
        _duplicated_call(task, ref),
        Plan("do_nothing", (), REFUSAL, frozenset({"premature_finish"})),
        _fake_completion(task, ref),
    ]
