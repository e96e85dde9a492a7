"""Loading task sets for a run: broken task files are refused, each with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from probegate.errors import TaskSetError
from probegate.tasks.loader import load_task_set

GOOD = {
    "id": "good",
    "tier": "P1",
    "category": "sequential",
    "dimensions": ["tool"],
    "prompt": {"en": "Count the chairs."},
    "tools": ["check_stock"],
    "expected_actions": [{"tool": "check_stock", "args": {"sku": "SKU-1001"}}],
    "trap": {"kind": "distractor", "note": "none"},
}


def write(folder: Path, name: str, data: object) -> None:
    text = data if isinstance(data, str) else yaml.safe_dump(data)
    (folder / name).write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ("id: [unclosed\n", "t.yaml: (file): cannot read YAML:"),
        ({k: v for k, v in GOOD.items() if k != "trap"}, "t.yaml: (top level): 'trap' is a required property"),
        ({**GOOD, "tier": "P9"}, "t.yaml: tier: 'P9' is not one of ['P0', 'P1', 'P2']"),
        ({**GOOD, "tools": ["Check Stock"]}, "t.yaml: tools.0: 'Check Stock' does not match '^[a-z][a-z0-9_]*$'"),
        ({**GOOD, "id": "has space"}, "t.yaml: id: 'has space' does not match"),
        ({**GOOD, "max_steps": 0}, "t.yaml: max_steps: 0 is less than the minimum of 1"),
        ({**GOOD, "colour": "red"},
         "t.yaml: (top level): Additional properties are not allowed ('colour' was unexpected)"),
        ({**GOOD, "tier": "P0", "expected_actions": [{"tool": "a"}, {"tool": "b"}]},
         "t.yaml: expected_actions: [{'tool': 'a'}, {'tool': 'b'}] is too long"),
        ({**GOOD, "expected_answer": {}}, "t.yaml: expected_answer: {} should be non-empty"),
    ],
)
def test_broken_task_files_are_refused(tmp_path: Path, data: object, problem: str) -> None:
    write(tmp_path, "ok.yaml", GOOD)
    write(tmp_path, "t.yaml", data)
    with pytest.raises(TaskSetError) as caught:
        load_task_set(str(tmp_path))
    message = str(caught.value)
    assert message.startswith(f"task set {tmp_path} has 1 problem: ")  # one problem: one line
    assert message.removeprefix(f"task set {tmp_path} has 1 problem: ").startswith(problem), message
    assert "ok.yaml" not in message  # the good file is not blamed


def test_duplicate_ids_and_empty_sets(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", GOOD)
    write(tmp_path, "b.yaml", GOOD)
    with pytest.raises(TaskSetError, match=r"b\.yaml: id: duplicate task id 'good' \(also in a\.yaml\)"):
        load_task_set(str(tmp_path))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TaskSetError, match="holds no \\*.yaml task files"):
        load_task_set(str(empty))


def test_the_harness_test_set_loads(task_set) -> None:
    assert [t.id for t in task_set.tasks] == ["delegate-stock", "stock-total"]
