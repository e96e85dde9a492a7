"""The default task set: coverage, bilingual prompts, honest traps, and every task solved
by its own reference through the real probes with its verify checks holding afterwards.

The reference of each task is played through a store-less ``probegate.probes.service.ProbeService``
(see ``tests/tasks/reference.py`` for the recovery and delegation conventions); the
answer a task expects must be readable from the tool results the reference saw, or
follow from them by a calculation listed in ``DERIVED``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import get_args

import pytest
import yaml

from probegate.probes.catalog import CATALOG
from probegate.probes.verify import run_check
from probegate.probes.worlds import load_world
from probegate.tasks.loader import (
    Category,
    Dimension,
    Task,
    Tier,
    SUBSETS_FILE,
    load_task_set,
    task_set_folder,
)
from tests.tasks.reference import (
    DERIVED,
    SUBAGENT_SCRIPTS,
    Player,
    Reference,
    trap_call,
)

TASK_SET = load_task_set("default")
TASKS = TASK_SET.tasks
CJK = re.compile(r"[\u4e00-\u9fff]")
#: What must read the same in both prompts: addresses, paths, ids, dates, times, numbers.
TOKEN = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|/[\w./-]+\.\w+|\b[A-Z]{2,}-\d+\b|\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}|\d+(?:,\d{3})*(?:\.\d+)?"
)
NUMBER = re.compile(r"(?<![A-Za-z])-?\d+(?:\.\d+)?")


def by_task(function):  # type: ignore[no-untyped-def]
    """Parametrize a test over every task of the default set, named by task id."""
    return pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])(function)


def side_effecting(task: Task) -> bool:
    return any(a.side_effect for a in task.expected_actions)


def injected_faults(task: Task) -> list[dict]:
    return list((task.world_patch or {}).get("faults") or [])


# -- the set as a whole -----------------------------------------------------------------
def test_every_file_is_named_after_its_task() -> None:
    folder = task_set_folder("default")
    for path in sorted(folder.glob("*.yaml")):
        if path.name == SUBSETS_FILE:
            continue
        assert yaml.safe_load(path.read_text(encoding="utf-8"))["id"] == path.stem


def test_the_default_subset_spans_every_tier_and_dimension() -> None:
    """What the main job runs without --tasks: every tier and every dimension, in five tasks."""
    chosen = load_task_set("default").select(None)
    assert len(chosen) == 5
    assert Counter(t.tier for t in chosen) == {"P0": 2, "P1": 2, "P2": 1}
    assert {d for t in chosen for d in t.dimensions} == set(get_args(Dimension))
    assert any(a.side_effect for t in chosen for a in t.expected_actions)


def test_the_set_covers_tiers_categories_and_dimensions() -> None:
    tiers = Counter(t.tier for t in TASKS)
    categories = Counter(t.category for t in TASKS)
    dimensions = Counter(d for t in TASKS for d in t.dimensions)
    assert len(TASKS) >= 32
    assert all(tiers[tier] >= 10 for tier in get_args(Tier)), tiers
    assert set(categories) == set(get_args(Category)), categories
    assert all(dimensions[d] >= 3 for d in get_args(Dimension)), dimensions
    assert all(len(t.expected_actions) == 1 for t in TASKS if t.tier == "P0")
    assert all(len(t.expected_actions) >= 2 for t in TASKS if t.tier != "P0")


def test_the_set_has_enough_tasks_of_each_hard_kind() -> None:
    verified = [t for t in TASKS if side_effecting(t) and t.verify]
    injected = [t for t in TASKS if t.category == "recovery" and injected_faults(t)]
    delegation = [t for t in TASKS if any(a.tool == "delegate" for a in t.expected_actions)]
    long_docs = [
        t for t in TASKS
        if any(a.args.get("doc_id") in ("DOC-301", "DOC-305", "DOC-308") for a in t.expected_actions)
        or t.id in SUBAGENT_SCRIPTS
    ]
    assert len(verified) >= 8
    assert len(injected) >= 3
    assert sum(t.category == "constraint" for t in TASKS) >= 3
    assert len(delegation) >= 2 and all(t.category == "delegation" for t in delegation)
    assert len(long_docs) >= 2 and sum(t.trap.kind == "long_output" for t in TASKS) >= 2
    assert {t.trap.kind for t in TASKS} >= {"distractor", "irrelevant_tool", "missing_param", "tool_error", "long_output"}


def test_derivations_belong_to_tasks_of_the_set() -> None:
    ids = {t.id for t in TASKS}
    assert set(DERIVED) <= ids and set(SUBAGENT_SCRIPTS) <= ids


# -- each task on its own ---------------------------------------------------------------
@by_task
def test_prompts_are_bilingual_with_identical_values(task: Task) -> None:
    assert task.prompt.zh and CJK.search(task.prompt.zh), "the Chinese prompt must be Chinese"
    missing = [token for token in TOKEN.findall(task.prompt.en) if token not in task.prompt.zh]
    assert not missing, f"values of the English prompt absent from the Chinese one: {missing}"


@by_task
def test_dimensions_name_what_the_grader_checks(task: Task) -> None:
    compared = any(a.match != "any" and a.args for a in task.expected_actions)
    assert ("param" in task.dimensions) == compared, "param: some expected arguments are compared"
    assert ("info" in task.dimensions) == (task.expected_answer is not None), "info: the answer is checked"
    assert ("result" in task.dimensions) == bool(task.verify), "result: verify checks the world"
    assert ("path" in task.dimensions) == (task.tier != "P0"), "path: a chain of calls"


@by_task
def test_tools_are_a_small_list_with_distractors(task: Task) -> None:
    needed = {a.tool for a in task.expected_actions}
    needed |= {tool for tool, _ in SUBAGENT_SCRIPTS[task.id].calls} if task.id in SUBAGENT_SCRIPTS else set()
    distractors = set(task.tools) - needed
    assert needed <= set(task.tools)
    assert 1 <= len(distractors) <= 4, distractors
    assert len(task.tools) <= 11


@by_task
def test_side_effects_are_marked_as_the_catalogue_says(task: Task) -> None:
    for action in task.expected_actions:
        assert action.side_effect == (CATALOG[action.tool].side_effect is not None), action.tool


@by_task
def test_a_trap_is_declared(task: Task) -> None:
    assert len(task.trap.note) >= 40
    if task.trap.kind == "tool_error":
        assert task.category == "recovery"
        assert trap_call(task) is not None or injected_faults(task)
    if task.category == "recovery":
        assert task.trap.kind == "tool_error"


@by_task
def test_the_answer_alone_never_passes_a_side_effect_task(task: Task) -> None:
    if not side_effecting(task):
        assert task.expected_answer is not None, "a read-only task is judged by its answer"
        return
    assert task.verify, "a side-effect task is judged by verify checks"
    initial = load_world(task.world, task.world_patch)
    holding = [run_check(initial, {**c.params(), "check": c.check}).ok for c in task.verify]
    assert not all(holding), "every verify check already holds before the agent does anything"


@pytest.fixture(scope="module")
def player() -> Player:
    return Player()


@by_task
def test_the_reference_solves_the_task(task: Task, player: Player) -> None:
    reference = player.play(task)
    for check in task.verify:
        result = run_check(reference.state, {**check.params(), "check": check.check})
        assert result.ok, f"{check.check}: {result.evidence}"
    for fault in reference.state.get("faults", []):
        assert fault.get("fired", 0) >= 1, f"the injected fault on {fault['tool']} never fired"
    if task.category == "recovery":
        statuses = [c.status for c in reference.calls]
        assert 400 in statuses and statuses[-1] == 200
    assert_answer_is_derivable(task, reference, player)


def assert_answer_is_derivable(task: Task, reference: Reference, player: Player) -> None:
    """Every value the answer must hold was seen in a tool result, or follows from seen ones."""
    expected = task.expected_answer
    if expected is None:
        return
    observed = reference.observations().casefold()
    numbers = [float(n) for n in NUMBER.findall(observed)]
    for needle in expected.contains:
        assert needle.casefold() in observed or derived(task, needle, observed, player), needle
    for group in expected.contains_any:
        assert any(n.casefold() in observed for n in group) or derived(task, group[0], observed, player), group
    if expected.number is not None:
        want, tolerance = expected.number.value, expected.number.tolerance
        seen = any(abs(n - want) <= tolerance + 1e-9 for n in numbers)
        assert seen or derived(task, want, observed, player), want
    assert expected.regex is None and expected.json_ is None, "extend this check before using regex or json"


def derived(task: Task, value: float | str, observed: str, player: Player) -> bool:
    """Whether ``value`` follows from the observations by the task's ``DERIVED`` entry."""
    recipe = DERIVED.get(task.id)
    if recipe is None or recipe.value != value:
        return False
    missing = [text for text in recipe.inputs if text.casefold() not in observed]
    assert not missing, f"inputs of the derivation not observed: {missing}"
    if recipe.expression is not None:
        assert player.calculate(recipe.expression) == pytest.approx(float(value))
    else:
        assert recipe.compute is not None and recipe.compute() == value
    return True
