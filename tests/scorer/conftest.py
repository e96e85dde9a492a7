"""Fixtures of the scorer tests: the small task set under tests/scorer/taskset."""

from __future__ import annotations

import pytest

from probegate.tasks.loader import Task, TaskSet, load_task_set
from tests.scorer.rowkit import TASKS_DIR


@pytest.fixture(scope="session")
def task_set() -> TaskSet:
    """The scorer tests' own task set (six tasks: every order mode, a fault, a trap)."""
    return load_task_set(str(TASKS_DIR))


@pytest.fixture
def task_by_id(task_set: TaskSet) -> dict[str, Task]:
    """Tasks by id."""
    return {t.id: t for t in task_set.tasks}
