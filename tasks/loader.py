"""Loading task sets: YAML files validated against ``tasks/schema.json``.

A task set is a folder of ``*.yaml`` files (one task each), found by name under
``tasks/`` (``default``) or by path. Loading checks every file and reports every
problem at once, with file, field and reason; a set with any invalid task is
refused (:class:`~probegate.errors.TaskSetError`).

Two layers of checks: the JSON Schema (shape, enums, required fields), then a lint
(:func:`lint_task`) for what a schema cannot see: every tool and verify check
exists in the probes, every expected action uses an offered tool with parameters
that tool has, the world and its patch load, a ``tool_error`` trap says which call
fails. Both report ``file: field: reason`` lines.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import jsonschema
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from probegate.errors import TaskSetError
from probegate.yamlfile import load_yaml

TASKS_DIR = Path(__file__).parent
SCHEMA_PATH = TASKS_DIR / "schema.json"
#: A task set folder's optional file of named subsets: ``NAME: [task id, ...]``.
SUBSETS_FILE = "subsets.yaml"
#: The subset a run covers when ``--tasks`` is not given (when the set defines it).
DEFAULT_SUBSET = "default"
#: The ``--tasks`` name for every task of the set.
ALL_TASKS = "all"
_SUBSET_NAME = re.compile(r"^[a-z][a-z0-9-]*$")

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
        free: keys of ``args`` whose values are free text (an e-mail's subject and
            body, a comment): a reference plays them, the scorer never compares them.
            Every other key is compared under ``match``.
    """

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    match: ArgMatch = "normalized"
    side_effect: bool = False
    free: tuple[str, ...] = ()


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

    ``check`` names the check (see ``probegate.probes.verify``); the other fields are its
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
        value: the trap value, when there is one (checked by scorer rules); for
            ``tool_error``, the failing first call as ``{tool, args}`` unless an
            injected fault makes an expected call fail (docs/tasks.md, "Recovery tasks").
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
    #: Named subsets (``subsets.yaml`` in the folder): name -> task ids, in set order.
    #: The one named :data:`DEFAULT_SUBSET` is what a run covers without ``--tasks``.
    subsets: dict[str, list[str]] = Field(default_factory=dict)

    def get(self, task_id: str) -> Task:
        """The task with ``task_id``.

        Raises:
            KeyError: no such task.
        """
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def snapshot(self, tasks: list[Task] | None = None) -> dict[str, Any]:
        """A JSON snapshot of the set (or of ``tasks``), stored with a run so it can be
        rescored, exported and imported without the task files."""
        chosen = self.tasks if tasks is None else tasks
        return {
            "name": self.name,
            "path": self.path,
            "tasks": [t.model_dump(mode="json", by_alias=True, exclude_defaults=True) for t in chosen],
        }

    @classmethod
    def from_snapshot(cls, data: dict[str, Any]) -> TaskSet:
        """Rebuild a set from :meth:`snapshot` data.

        Raises:
            TaskSetError: the snapshot holds an invalid task.
        """
        try:
            tasks = [Task.model_validate(t) for t in data.get("tasks") or []]
        except Exception as exc:  # pydantic.ValidationError
            raise TaskSetError(f"the run's task snapshot is invalid: {exc}".replace("\n", " ")) from None
        return cls(name=str(data.get("name") or "snapshot"), path=str(data.get("path") or ""), tasks=tasks)

    def select(self, ids: list[str] | None) -> list[Task]:
        """The tasks named in ``ids``, in set order.

        Each name is a task id, a subset name (``subsets.yaml``) or ``all`` (every
        task). ``None`` or empty means the subset called ``default`` when the set has
        one, else every task.

        Raises:
            TaskSetError: a name is neither a task id, a subset nor ``all``.
        """
        names = list(ids or []) or ([DEFAULT_SUBSET] if DEFAULT_SUBSET in self.subsets else [ALL_TASKS])
        known = {t.id for t in self.tasks}
        wanted: set[str] = set()
        unknown = []
        for name in names:
            if name == ALL_TASKS:
                wanted |= known
            elif name in self.subsets:
                wanted |= set(self.subsets[name])
            elif name in known:
                wanted.add(name)
            else:
                unknown.append(name)
        if unknown:
            subsets = ", ".join([*self.subsets, ALL_TASKS])
            raise TaskSetError(f"unknown task id(s) in {self.name}: {', '.join(unknown)} (subsets: {subsets})")
        return [t for t in self.tasks if t.id in wanted]

    def subset_of(self, ids: list[str] | None) -> str | None:
        """The subset name ``ids`` stands for (``None`` or empty: the default choice;
        one subset name or ``all``), or ``None`` for a list of task ids."""
        names = list(ids or []) or ([DEFAULT_SUBSET] if DEFAULT_SUBSET in self.subsets else [ALL_TASKS])
        return names[0] if len(names) == 1 and (names[0] in self.subsets or names[0] == ALL_TASKS) else None


@lru_cache(maxsize=1)
def task_schema() -> dict[str, Any]:
    """The JSON Schema every task file must satisfy."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def task_set_folder(name_or_path: str) -> Path:
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


def _plain(value: Any) -> Any:
    """YAML dates and datetimes as ISO strings (an unquoted ``2025-03-17`` is a date to YAML)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    return value


Problem = tuple[str, str]
_TRAP_CALL = "the failing call as {tool, args}"

#: The arguments that pick the target of a side-effecting tool (who gets the e-mail,
#: which order is cancelled, which file is written): an expected action of one of
#: these tools must compare them (docs/tasks.md, "Side effects are matched on their target").
TARGET_ARGS: dict[str, tuple[str, ...]] = {
    "send_email": ("to",),
    "cancel_order": ("order_id",),
    "place_order": ("sku",),
    "create_ticket": ("customer_id",),
    "set_ticket_priority": ("ticket_id",),
    "add_ticket_comment": ("ticket_id",),
    "write_file": ("path",),
    "create_reminder": ("date",),
    "create_event": ("date",),
}


def _lint_side_effect(field: str, action: ExpectedAction, side_effecting: bool) -> list[Problem]:
    """A side-effecting expected action compares its target: no ``match: any``, its
    target arguments given and not ``free``; ``free`` names keys of ``args``."""
    problems = [(f"{field}.free", f"{key!r} is not one of the action's args") for key in action.free if key not in action.args]
    if not side_effecting:
        return problems
    if action.match == "any":
        return [*problems, (f"{field}.match", "a side-effecting action must compare its target arguments: use subset "
                                              "(or normalized) and list free-text keys in free, not match: any")]
    compared = [k for k in action.args if k not in action.free]
    if not compared:
        problems.append((f"{field}.free", "a side-effecting action must compare at least one argument"))
    for key in TARGET_ARGS.get(action.tool, ()):
        if key not in action.args:
            problems.append((f"{field}.args.{key}", f"{action.tool} picks its target by {key!r}: give its expected value"))
        elif key in action.free:
            problems.append((f"{field}.free", f"{key!r} picks the target of {action.tool}: it cannot be free text"))
    return problems


def _lint_call(field: str, tool: str, args: Any, offered: list[str]) -> list[Problem]:
    """A call a task names (expected action or trap): known, offered tool; known, valid arguments."""
    # the probes package pulls in the store models: import it on use, not with the loader
    from probegate.probes.catalog import CATALOG
    from probegate.probes.validate import validate_args

    if tool not in CATALOG:
        return [(f"{field}.tool", f"unknown tool {tool!r}: not in the probe catalogue (see `probegate probes list`)")]
    problems: list[Problem] = []
    if tool not in offered:
        problems.append((f"{field}.tool", f"{tool!r} is not offered in tools"))
    if not isinstance(args, dict):
        return [*problems, (f"{field}.args", "must be a mapping of argument name to value")]
    params = CATALOG[tool].parameters
    verdict = validate_args(params, json.dumps(args).encode())
    names = ", ".join(params.get("properties", {}))
    problems += [(f"{field}.args.{key}", f"{tool} has no parameter {key!r} (it takes {names})") for key in verdict.unknown]
    problems += [(f"{field}.args.{key}", f"invalid value for {tool}: {why}") for key, why in verdict.invalid.items()]
    return problems


def _lint_world(task: Task) -> tuple[list[Problem], list[dict[str, Any]]]:
    """Problems of ``world`` / ``world_patch``, and the faults the patched world holds."""
    from probegate.probes.worlds import WorldError, load_world

    try:
        load_world(task.world)
    except WorldError as exc:
        return [("world", str(exc))], []
    try:
        state = load_world(task.world, task.world_patch)
    except WorldError as exc:
        return [("world_patch", str(exc))], []
    except (TypeError, AttributeError) as exc:  # a patch whose shape does not fit the world's
        return [("world_patch", f"cannot be merged into world {task.world!r}: {exc}")], []
    faults = [f for f in state.get("faults", []) if isinstance(f, dict)]
    problems = [
        (f"world_patch.faults.{i}.tool", f"the fault names {f.get('tool')!r}, which is not offered in tools")
        for i, f in enumerate(faults)
        if f.get("tool") not in task.tools
    ]
    return problems, faults


def _lint_trap(task: Task, faults: list[dict[str, Any]]) -> list[Problem]:
    """A ``tool_error`` trap must say which call fails: an injected fault, or ``trap.value``."""
    value = task.trap.value
    if task.trap.kind != "tool_error":
        return []
    if value is None:
        if faults:
            return []
        return [("trap", f"a tool_error trap needs a fault in world_patch.faults or {_TRAP_CALL} in trap.value")]
    if not isinstance(value, dict) or "tool" not in value or set(value) - {"tool", "args"}:
        return [("trap.value", f"a tool_error trap's value must be {_TRAP_CALL}")]
    return _lint_call("trap.value", str(value["tool"]), value.get("args", {}), task.tools)


def _verify_problem(index: int, name: str, line: str) -> Problem:
    """``validate_check``'s ``"field: reason"`` as a problem of ``verify.<index>[.<field>]``."""
    field, _, reason = line.partition(": ")
    return (f"verify.{index}" if field == name else f"verify.{index}.{field}", reason)


def lint_task(task: Task) -> list[Problem]:
    """Problems the schema cannot see, as ``(field, reason)`` pairs.

    Every offered tool is in the probe catalogue; every expected action uses an
    offered tool, with parameters that tool has and values its schema accepts (a
    required parameter may be left out: ``subset`` compares only the keys given);
    every ``verify`` entry is a known check with valid parameters
    (``probegate.probes.verify.validate_check``); ``world`` and ``world_patch`` load; injected
    faults name offered tools; a ``tool_error`` trap names its failing call (a fault,
    or ``trap.value: {tool, args}``); ``expected_answer.regex`` compiles; a
    side-effecting expected action (``side_effect: true`` or a tool the catalogue marks
    as changing the world) is not ``match: any`` and compares its target arguments
    (:data:`TARGET_ARGS`), leaving only the keys in ``free`` uncompared.

    Args:
        task: a task that passed the schema.

    Returns:
        The problems, in field order; empty when the task is sound.
    """
    from probegate.probes.catalog import CATALOG
    from probegate.probes.verify import validate_check

    problems: list[Problem] = [
        (f"tools.{i}", f"unknown tool {name!r}: not in the probe catalogue (see `probegate probes list`)")
        for i, name in enumerate(task.tools)
        if name not in CATALOG
    ]
    for i, action in enumerate(task.expected_actions):
        problems += _lint_call(f"expected_actions.{i}", action.tool, action.args, task.tools)
        side_effecting = action.side_effect or bool(getattr(CATALOG.get(action.tool), "side_effect", None))
        problems += _lint_side_effect(f"expected_actions.{i}", action, side_effecting)
    for i, check in enumerate(task.verify):
        problems += [_verify_problem(i, check.check, line) for line in validate_check({**check.params(), "check": check.check})]
    world_problems, faults = _lint_world(task)
    problems += world_problems + _lint_trap(task, faults)
    if task.expected_answer is not None and task.expected_answer.regex is not None:
        try:
            re.compile(task.expected_answer.regex)
        except re.error as exc:
            problems.append(("expected_answer.regex", f"invalid pattern: {exc}"))
    return problems


def load_task_file(path: Path) -> tuple[Task | None, list[str]]:
    """Load and lint one task file.

    Returns:
        The task (``None`` when it has any problem) and its problems as
        ``"file: field: reason"`` lines (schema problems first; the lint runs only
        on a file that passed the schema).
    """
    try:
        data = _plain(load_yaml(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return None, [f"{path.name}: (file): cannot read YAML: {exc}".replace("\n", " ")]
    problems = [f"{path.name}: {field}: {reason}" for field, reason in validate_task_data(data)]
    if problems:
        return None, problems
    try:
        task = Task.model_validate(data)
    except ValidationError as exc:  # the schema and the model disagree
        return None, [f"{path.name}: (model): {exc}".replace("\n", " ")]
    problems = [f"{path.name}: {field}: {reason}".replace("\n", " ") for field, reason in lint_task(task)]
    return (None if problems else task), problems


def load_task_set(name_or_path: str) -> TaskSet:
    """Load and validate a whole task set.

    Raises:
        TaskSetError: the folder is missing or empty, a task is invalid, or two
            tasks share an id. The message lists every problem, one per line.
    """
    folder = task_set_folder(name_or_path)
    files = [p for p in sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml")) if p.name != SUBSETS_FILE]
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
    subsets, subset_problems = load_subsets(folder / SUBSETS_FILE, [t.id for t in tasks])
    problems.extend(subset_problems)
    if len(problems) == 1:  # one line, as every other error
        raise TaskSetError(f"task set {folder} has 1 problem: {problems[0]}")
    if problems:
        raise TaskSetError(
            f"task set {folder} has {len(problems)} problem(s):\n" + "\n".join(problems)
        )
    return TaskSet(name=folder.name, path=str(folder), tasks=tasks, subsets=subsets)


def load_subsets(path: Path, task_ids: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """A set's named subsets (``subsets.yaml``: ``NAME: [task id, ...]``) and their problems.

    A missing file means no subsets. Names are lowercase words with dashes, not
    ``all`` and not a task id; every id must be a task of the set, once.

    Returns:
        ``({name: ids in set order}, ["subsets.yaml: field: reason", ...])``.
    """
    if not path.is_file():
        return {}, []
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return {}, [f"{path.name}: (file): {exc}".replace("\n", " ")]
    if not isinstance(data, dict):
        return {}, [f"{path.name}: (top level): must map subset names to lists of task ids"]
    known = set(task_ids)
    subsets: dict[str, list[str]] = {}
    problems = []
    for name, ids in data.items():
        where = f"{path.name}: {name}"
        if not isinstance(name, str) or not _SUBSET_NAME.match(name) or name == ALL_TASKS or name in known:
            problems.append(f"{where}: a subset name is a lowercase word with dashes, not {ALL_TASKS!r} "
                            f"and not a task id")
            continue
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            problems.append(f"{where}: must be a non-empty list of task ids")
            continue
        unknown = [i for i in ids if i not in known]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if unknown:
            problems.append(f"{where}: unknown task id(s): {', '.join(unknown)}")
        if twice:
            problems.append(f"{where}: listed more than once: {', '.join(twice)}")
        if not unknown and not twice:
            subsets[name] = [i for i in task_ids if i in ids]
    return subsets, problems
