"""The task loader: schema errors and lint problems, each as ``file: field: reason``, all at once.

Broken task files are written to a temporary folder next to a good one and loaded as
a set; the CLI test runs the real ``probegate`` command on such a folder.
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from probegate.errors import TaskSetError
from probegate.tasks.loader import Task, lint_task, load_task_file, load_task_set

GOOD: dict[str, Any] = {
    "id": "good",
    "tier": "P1",
    "category": "sequential",
    "dimensions": ["param", "result"],
    "prompt": {"en": "Reorder toner: 22 units of SKU-1006 for Berlin.", "zh": "补货硒鼓：SKU-1006 订 22 个，送柏林。"},
    "tools": ["check_stock", "place_order", "get_price"],
    "expected_actions": [
        {"tool": "check_stock", "args": {"sku": "SKU-1006"}, "match": "subset"},
        {"tool": "place_order", "args": {"sku": "SKU-1006", "quantity": 22, "warehouse": "Berlin"},
         "match": "subset", "side_effect": True},
    ],
    "verify": [{"check": "order_placed", "sku": "SKU-1006", "quantity": 22}],
    "trap": {"kind": "distractor", "note": "a stale snapshot shows other numbers"},
}


def changed(path: str, value: Any) -> dict[str, Any]:
    """``GOOD`` with the value at a dotted ``path`` replaced (``None`` deletes the key)."""
    data = copy.deepcopy(GOOD)
    *parents, last = path.split(".")
    target: Any = data
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if value is None:
        del target[last]
    elif isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return data


def write(folder: Path, name: str, data: object) -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def problems_of(folder: Path) -> list[str]:
    with pytest.raises(TaskSetError) as caught:
        load_task_set(str(folder))
    first, *lines = str(caught.value).splitlines()
    one = f"task set {folder} has 1 problem: "
    if first.startswith(one):  # a single problem is one line
        assert not lines
        return [first.removeprefix(one)]
    assert first == f"task set {folder} has {len(lines)} problem(s):" and len(lines) > 1
    return lines


def test_the_good_task_loads(tmp_path: Path) -> None:
    write(tmp_path, "good.yaml", GOOD)
    task_set = load_task_set(str(tmp_path))
    assert [t.id for t in task_set.tasks] == ["good"]
    assert lint_task(task_set.tasks[0]) == []


# -- one broken file next to a good one: its problem, and nothing about the good one ------
BROKEN: list[tuple[str, object, str]] = [
    ("bad YAML", "id: [unclosed\n", "t.yaml: (file): cannot read YAML:"),
    ("missing field", changed("trap", None), "t.yaml: (top level): 'trap' is a required property"),
    ("wrong enum", changed("tier", "P9"), "t.yaml: tier: 'P9' is not one of ['P0', 'P1', 'P2']"),
    ("wrong match mode", changed("expected_actions.0.match", "fuzzy"),
     "t.yaml: expected_actions.0.match: 'fuzzy' is not one of ['exact', 'normalized', 'subset', 'any']"),
    ("unknown tool", changed("tools", ["check_stock", "place_order", "teleport"]),
     "t.yaml: tools.2: unknown tool 'teleport': not in the probe catalogue"),
    ("action tool not offered", changed("tools", ["check_stock", "get_price"]),
     "t.yaml: expected_actions.1.tool: 'place_order' is not offered in tools"),
    ("action tool unknown", changed("expected_actions.0.tool", "check_stocks"),
     "t.yaml: expected_actions.0.tool: unknown tool 'check_stocks': not in the probe catalogue"),
    ("unknown argument", changed("expected_actions.0.args", {"sku": "SKU-1006", "store": "Berlin"}),
     "t.yaml: expected_actions.0.args.store: check_stock has no parameter 'store' (it takes sku, warehouse)"),
    ("invalid argument", changed("expected_actions.1.args.quantity", "22"),
     "t.yaml: expected_actions.1.args.quantity: invalid value for place_order: expected integer, got string"),
    ("unquoted time", {**changed("tools", ["create_event"]), "verify": [],
                       "expected_actions": [{"tool": "create_event", "args": {"title": "x", "date": "2025-03-17", "start": 840, "end": "15:00"}}]},
     "t.yaml: expected_actions.0.args.start: invalid value for create_event: expected string, got integer"),
    ("unknown verify check", changed("verify", [{"check": "order_sent", "sku": "SKU-1006"}]),
     "t.yaml: verify.0.check: unknown check 'order_sent'; known: email_sent,"),
    ("bad verify parameter", changed("verify", [{"check": "order_placed", "sku": "SKU-1006", "warehouse": "Paris"}]),
     "t.yaml: verify.0.warehouse: 'Paris' is not one of ['Berlin', 'Hamburg']"),
    ("missing verify parameter", changed("verify", [{"check": "ticket_priority", "ticket": "TCK-3003"}]),
     "t.yaml: verify.0: 'priority' is a required property"),
    ("unknown world", changed("world", "atlantis"), "t.yaml: world: no world 'atlantis':"),
    ("invalid world patch", changed("world_patch", {"products": {"SKU-1006": {"stock": {"Berlin": -1}}}}),
     "t.yaml: world_patch: world 'default' is invalid: products.SKU-1006.stock must hold non-negative integers"),
    ("misshapen world patch", changed("world_patch", {"products": 5}),
     "t.yaml: world_patch: cannot be merged into world 'default':"),
    ("fault on a tool not offered", changed("world_patch", {"faults": [{"tool": "get_weather"}]}),
     "t.yaml: world_patch.faults.0.tool: the fault names 'get_weather', which is not offered in tools"),
    ("tool_error trap without a failing call", changed("trap.kind", "tool_error"),
     "t.yaml: trap: a tool_error trap needs a fault in world_patch.faults or the failing call as {tool, args} in trap.value"),
    ("tool_error trap with a bad value", changed("trap", {"kind": "tool_error", "note": "x", "value": "boom"}),
     "t.yaml: trap.value: a tool_error trap's value must be the failing call as {tool, args}"),
    ("tool_error trap calling an unknown parameter",
     changed("trap", {"kind": "tool_error", "note": "x", "value": {"tool": "place_order", "args": {"sku": "SKU-1006", "qty": 3}}}),
     "t.yaml: trap.value.args.qty: place_order has no parameter 'qty'"),
    ("invalid answer regex", changed("expected_answer", {"regex": "(unclosed"}),
     "t.yaml: expected_answer.regex: invalid pattern: missing ), unterminated subpattern"),
    ("a side effect matched by tool name only", changed("expected_actions.1.match", "any"),
     "t.yaml: expected_actions.1.match: a side-effecting action must compare its target arguments"),
    ("a catalogue side effect not marked as one", changed("expected_actions.1", {"tool": "place_order", "args": {"sku": "SKU-1006"}, "match": "any"}),
     "t.yaml: expected_actions.1.match: a side-effecting action must compare its target arguments"),
    ("a side effect's target left free", changed("expected_actions.1.free", ["sku"]),
     "t.yaml: expected_actions.1.free: 'sku' picks the target of place_order: it cannot be free text"),
    ("a side effect without its target", changed("expected_actions.1.args", {"quantity": 22, "warehouse": "Berlin"}),
     "t.yaml: expected_actions.1.args.sku: place_order picks its target by 'sku': give its expected value"),
    ("free names no argument", changed("expected_actions.0.free", ["note"]),
     "t.yaml: expected_actions.0.free: 'note' is not one of the action's args"),
]


@pytest.mark.parametrize(("data", "problem"), [(d, p) for _, d, p in BROKEN], ids=[name for name, _, _ in BROKEN])
def test_a_broken_file_is_refused_with_its_reason(tmp_path: Path, data: object, problem: str) -> None:
    write(tmp_path, "ok.yaml", {**GOOD, "id": "ok"})
    write(tmp_path, "t.yaml", data)
    lines = problems_of(tmp_path)
    assert any(line.startswith(problem) for line in lines), lines
    assert not any(line.startswith("ok.yaml") for line in lines)


def test_duplicate_ids_name_both_files(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", GOOD)
    write(tmp_path, "b.yaml", GOOD)
    assert problems_of(tmp_path) == ["b.yaml: id: duplicate task id 'good' (also in a.yaml)"]


def test_every_problem_of_every_file_is_listed(tmp_path: Path) -> None:
    several = changed("tools", ["check_stock", "teleport"])
    several["verify"] = [{"check": "order_sent"}]
    write(tmp_path, "a.yaml", several)
    write(tmp_path, "b.yaml", "id: [unclosed\n")
    write(tmp_path, "c.yaml", changed("tier", "P9"))
    fields = [line.split(": ")[:2] for line in problems_of(tmp_path)]
    assert fields == [
        ["a.yaml", "tools.1"],
        ["a.yaml", "expected_actions.1.tool"],
        ["a.yaml", "verify.0.check"],
        ["b.yaml", "(file)"],
        ["c.yaml", "tier"],
    ]


def test_unquoted_yaml_dates_are_read_as_iso_text(tmp_path: Path) -> None:
    text = yaml.safe_dump(changed("expected_actions.1.args", {"sku": "SKU-1006", "quantity": 22, "deliver_by": "2025-03-20"}))
    path = write(tmp_path, "t.yaml", text.replace("'2025-03-20'", "2025-03-20"))
    task, problems = load_task_file(path)
    assert problems == [] and isinstance(task, Task)
    assert task.expected_actions[1].args["deliver_by"] == "2025-03-20"


def test_lint_accepts_a_partial_subset_and_a_fault_backed_trap() -> None:
    task = Task.model_validate(
        changed("trap", {"kind": "tool_error", "note": "the first check times out"})
        | {"world_patch": {"faults": [{"tool": "check_stock", "times": 1}]},
           "expected_actions": [{"tool": "place_order", "args": {"sku": "SKU-1006"}, "match": "subset"}]}
    )
    assert lint_task(task) == []


def test_the_cli_refuses_a_broken_set_with_one_line_per_problem(tmp_path: Path) -> None:
    several = changed("tools", ["check_stock", "teleport"])
    write(tmp_path, "a.yaml", several)
    write(tmp_path, "b.yaml", "id: [unclosed\n")
    command = [sys.executable, "-m", "probegate", "run", "--task-set", str(tmp_path), "--harness", "fc",
               "--model", "m", "--model-endpoint", "http://127.0.0.1:9"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    lines = done.stderr.strip().splitlines()
    assert lines[0] == f"error: task set {tmp_path} has 3 problem(s):"
    assert [line.split(": ")[:2] for line in lines[1:]] == [
        ["a.yaml", "tools.1"], ["a.yaml", "expected_actions.1.tool"], ["b.yaml", "(file)"],
    ]


def test_the_public_names_of_tasks() -> None:
    from probegate import tasks

    assert tasks.__all__ == [
        "ExpectedAction", "ExpectedAnswer", "Prompt", "Task", "TaskSet", "Trap", "VerifyCheck",
        "lint_task", "load_task_file", "load_task_set", "task_set_folder", "validate_task_data",
    ]


# -- named subsets (subsets.yaml) -------------------------------------------------------
def _subset_set(tmp_path, subsets_text: str):
    import shutil

    from probegate.tasks.loader import task_set_folder

    folder = tmp_path / "set"
    folder.mkdir()
    for name in ("p0-order-status-5003", "p0-time-tokyo", "p1-toner-reorder"):
        shutil.copy(task_set_folder("default") / f"{name}.yaml", folder)
    (folder / "subsets.yaml").write_text(subsets_text, encoding="utf-8")
    return folder


def test_a_subset_is_selected_by_name_and_default_is_what_no_tasks_means(tmp_path) -> None:
    from probegate.tasks.loader import load_task_set

    folder = _subset_set(tmp_path, "default: [p1-toner-reorder, p0-time-tokyo]\nquick: [p0-time-tokyo]\n")
    task_set = load_task_set(str(folder))
    assert [t.id for t in task_set.select(None)] == ["p0-time-tokyo", "p1-toner-reorder"]  # set order
    assert [t.id for t in task_set.select(["quick"])] == ["p0-time-tokyo"]
    assert len(task_set.select(["all"])) == 3
    assert [t.id for t in task_set.select(["quick", "p0-order-status-5003"])] == ["p0-order-status-5003",
                                                                                 "p0-time-tokyo"]
    assert (task_set.subset_of(None), task_set.subset_of(["all"]), task_set.subset_of(["p0-time-tokyo"])) == (
        "default", "all", None)


def test_without_subsets_no_tasks_means_every_task(tmp_path) -> None:
    from probegate.tasks.loader import load_task_set

    folder = _subset_set(tmp_path, "")
    (folder / "subsets.yaml").unlink()
    task_set = load_task_set(str(folder))
    assert len(task_set.select(None)) == 3 and task_set.subset_of(None) == "all"


@pytest.mark.parametrize(("text", "reason"), [
    ("default: [no-such-task]\n", "default: unknown task id(s): no-such-task"),
    ("all: [p0-time-tokyo]\n", "all: a subset name is a lowercase word"),
    ("p0-time-tokyo: [p0-time-tokyo]\n", "p0-time-tokyo: a subset name is a lowercase word"),
    ("default: []\n", "default: must be a non-empty list of task ids"),
    ("default: [p0-time-tokyo, p0-time-tokyo]\n", "default: listed more than once: p0-time-tokyo"),
    ("- p0-time-tokyo\n", "(top level): must map subset names"),
])
def test_a_bad_subsets_file_refuses_the_set_with_file_field_and_reason(tmp_path, text, reason) -> None:
    from probegate.errors import TaskSetError
    from probegate.tasks.loader import load_task_set

    with pytest.raises(TaskSetError, match=re.escape(f"subsets.yaml: {reason}")):
        load_task_set(str(_subset_set(tmp_path, text)))


def test_an_unknown_name_lists_the_subsets(tmp_path) -> None:
    from probegate.errors import TaskSetError
    from probegate.tasks.loader import load_task_set

    task_set = load_task_set(str(_subset_set(tmp_path, "quick: [p0-time-tokyo]\n")))
    with pytest.raises(TaskSetError, match=r"unknown task id\(s\) in set: nope \(subsets: quick, all\)"):
        task_set.select(["nope"])
