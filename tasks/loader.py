"""Loading task sets: YAML files validated against ``tasks/schema.json``.

A task set is a folder of ``*.yaml`` files (one task each), found by name under
``tasks/`` (``default``) or by path. Loading checks every file and reports every
problem at once, with file, field and reason; a set with any invalid task is
refused (:class:`~probegate.errors.TaskSetError`).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import jsonschema
import yaml
from pydantic import BaseModel, ConfigDict, Field

from probegate.errors import TaskSetError

TASKS_DIR = Path(__file__).parent
SCHEMA_PATH = TASKS_DIR / "schema.json"

Tier = Literal["P0", "P1", "P2"]
Category = Literal[
    "single", "sequential", "conditional", "aggregation", "recovery", "constraint", "delegation"
]
Dimension = Literal["tool", "param", "info", "path", "result"]
ArgMatch = Literal["exact", "normalized", "subset", "any"]
OrderMode = Literal["strict", "unordered", "subset", "superset"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Prompt(_Frozen):
    """The user's request, per language."""

    en: str
    zh: str | None = None

    def text(self, lang: str = "en") -> str:
        """The prompt in ``lang``, falling back to English."""
        return (self.zh if lang == "zh" else None) or self.en


class ExpectedAction(_Frozen):
    """One tool call the task needs.

    Attributes:
        tool: tool name.
        args: expected argument values (keys not listed are not checked under
            ``subset``; see docs/metrics.md for every match mode).
        match: how arguments compare: ``exact``, ``normalized`` (case, whitespace,
            1 vs 1.0, aliases), ``subset`` (listed keys normalized, others ignored),
            ``any`` (only the tool must match).
        side_effect: the call changes the world (email, order, ticket, file).
    """

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    match: ArgMatch = "normalized"
    side_effect: bool = False


class NumberAnswer(_Frozen):
    value: float
    tolerance: float = 0.0


class ExpectedAnswer(_Frozen):
    """What the final answer must contain; every given field must hold.

    Attributes:
        contains: strings that must all appear (case-insensitive).
        contains_any: groups of alternatives; one of each group must appear.
        not_contains: strings that must not appear (e.g. a trap value).
        regex: a pattern that must match (Python ``re``, case-insensitive).
        number: a number within ``tolerance`` (absolute) of ``value``.
        json: a JSON object the answer must contain as a subset.
    """

    contains: list[str] = Field(default_factory=list)
    contains_any: list[list[str]] = Field(default_factory=list)
    not_contains: list[str] = Field(default_factory=list)
    regex: str | None = None
    number: NumberAnswer | None = None
    json_: dict[str, Any] | None = Field(default=None, alias="json")

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class VerifyCheck(_Frozen):
    """An outcome check answered by the probes' verification API from world state.

    ``check`` names the check (see ``probes.verify``); the other fields are its
    parameters, e.g. ``{"check": "email_sent", "to": "a@b.com", "subject_contains": "Q3"}``.
    """

    check: str
    model_config = ConfigDict(frozen=True, extra="allow")

    def params(self) -> dict[str, Any]:
        """The check's parameters (every field but ``check``)."""
        return dict(self.model_extra or {})


class Trap(_Frozen):
    """The distractor a task carries.

    Attributes:
        kind: ``distractor`` (a tempting wrong value), ``irrelevant_tool`` (a tool
            that looks useful but is wrong), ``missing_param`` (a value the agent must
            ask for or leave out, never invent), ``tool_error`` (the first reasonable
            call fails), ``long_output`` (a long observation that pushes the context).
        note: what the trap is, for humans and reports.
        value: the trap value, when there is one (checked by scorer rules).
    """

    kind: Literal["distractor", "irrelevant_tool", "missing_param", "tool_error", "long_output"]
    note: str
    value: Any = None


class Task(_Frozen):
    """One task (schema: ``tasks/schema.json``)."""

    id: str
    tier: Tier
    category: Category
    dimensions: list[Dimension]
    prompt: Prompt
    tools: list[str]
    world: str = "default"
    world_patch: dict[str, Any] = Field(default_factory=dict)
    expected_actions: list[ExpectedAction] = Field(min_length=1)
    order: OrderMode = "strict"
    expected_answer: ExpectedAnswer | None = None
    verify: list[VerifyCheck] = Field(default_factory=list)
    trap: Trap
    max_steps: int = 8
    system: str | None = None


class TaskSet(_Frozen):
    """A loaded, valid task set."""

    name: str
    path: str
    tasks: list[Task]

    def get(self, task_id: str) -> Task:
        """The task with ``task_id``.

        Raises:
            KeyError: no such task.
        """
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def select(self, ids: list[str] | None) -> list[Task]:
        """The tasks named in ``ids`` (all when ``None``).

        Raises:
            TaskSetError: an id is not in the set.
        """
        if not ids:
            return list(self.tasks)
        known = {t.id for t in self.tasks}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise TaskSetError(f"unknown task id(s) in {self.name}: {', '.join(unknown)}")
        return [t for t in self.tasks if t.id in ids]


@lru_cache(maxsize=1)
def task_schema() -> dict[str, Any]:
    """The JSON Schema every task file must satisfy."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def resolve_task_set(name_or_path: str) -> Path:
    """A task set folder: a path, or a name under ``tasks/`` (``default``).

    Raises:
        TaskSetError: no such folder.
    """
    path = Path(name_or_path)
    if path.is_dir():
        return path
    builtin = TASKS_DIR / name_or_path
    if builtin.is_dir():
        return builtin
    known = sorted(p.name for p in TASKS_DIR.iterdir() if p.is_dir() and not p.name.startswith("_"))
    raise TaskSetError(
        f"no task set {name_or_path!r}: give a folder of task YAML files or one of {', '.join(known)}"
    )


def _field_path(error: jsonschema.ValidationError) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) or "(top level)"


def validate_task_data(data: Any) -> list[tuple[str, str]]:
    """Every schema violation in one task's data as ``(field, reason)``, sorted."""
    validator = jsonschema.Draft202012Validator(task_schema())
    return sorted(
        (_field_path(e), e.message) for e in validator.iter_errors(data)
    )


def load_task_file(path: Path) -> tuple[Task | None, list[str]]:
    """Load one task file; returns the task (or ``None``) and its problems as
    ``"file: field: reason"`` lines."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return None, [f"{path.name}: (file): cannot read YAML: {exc}".replace("\n", " ")]
    problems = [f"{path.name}: {field}: {reason}" for field, reason in validate_task_data(data)]
    if problems:
        return None, problems
    try:
        return Task.model_validate(data), []
    except Exception as exc:  # pydantic.ValidationError: the schema and model disagree
        return None, [f"{path.name}: (model): {exc}".replace("\n", " ")]


def load_task_set(name_or_path: str) -> TaskSet:
    """Load and validate a whole task set.

    Raises:
        TaskSetError: the folder is missing or empty, a task is invalid, or two
            tasks share an id. The message lists every problem, one per line.
    """
    folder = resolve_task_set(name_or_path)
    files = sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml"))
    if not files:
        raise TaskSetError(f"task set {folder} holds no *.yaml task files")
    tasks: list[Task] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path in files:
        task, errors = load_task_file(path)
        problems.extend(errors)
        if task is None:
            continue
        if task.id in seen:
            problems.append(f"{path.name}: id: duplicate task id {task.id!r} (also in {seen[task.id]})")
        seen[task.id] = path.name
        tasks.append(task)
    if problems:
        raise TaskSetError(
            f"task set {folder} has {len(problems)} problem(s):\n" + "\n".join(problems)
        )
    return TaskSet(name=folder.name, path=str(folder), tasks=tasks)
