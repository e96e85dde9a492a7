"""World fixtures: loading, patching, determinism, invariants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from probegate.probes.worlds import WorldError, deep_merge, known_worlds, load_world, world_problems


def test_default_world_is_listed_and_loads() -> None:
    assert "default" in known_worlds()
    world = load_world("default")
    assert world["now"] == {"date": "2025-03-14", "time": "09:30", "timezone": "Europe/Berlin", "utc_offset": "+01:00"}
    assert world_problems(world) == []


def test_default_world_holds_what_tasks_need() -> None:
    world = load_world()
    assert len(world["cities"]) >= 8 and len(world["products"]) >= 12 and len(world["orders"]) >= 10
    assert len(world["customers"]) >= 7 and len(world["tickets"]) >= 8 and len(world["documents"]) >= 10
    assert len(world["inbox"]) >= 7 and len(world["events"]) >= 8 and len(world["files"]) >= 5
    long_docs = [d for d in world["documents"].values() if len(d["text"]) >= 3000]
    assert len(long_docs) >= 2, "long-output tasks need documents of several KB"


def test_loads_are_equal_and_independent() -> None:
    first = load_world()
    first["products"]["SKU-1001"]["stock"]["Berlin"] = 0
    first["outbox"]["OUT-1"] = {}
    second = load_world()
    assert second["products"]["SKU-1001"]["stock"]["Berlin"] == 18
    assert second == load_world() and second["outbox"] == {}


def test_world_is_plain_json() -> None:
    world = load_world()
    assert json.loads(json.dumps(world)) == world
    assert all(isinstance(d["date"], str) for d in world["events"].values())


@pytest.mark.parametrize(
    ("base", "patch", "merged"),
    [
        ({"a": {"b": 1, "c": 2}}, {"a": {"b": 5}}, {"a": {"b": 5, "c": 2}}),
        ({"a": {"b": 1}}, {"a": {"b": None}}, {"a": {}}),
        ({"a": [1, 2]}, {"a": [3]}, {"a": [3]}),
        ({"a": 1}, {"b": {"c": 1}}, {"a": 1, "b": {"c": 1}}),
        ({"a": {"b": 1}}, {"a": 7}, {"a": 7}),
        ({"a": 1}, {"zzz": None}, {"a": 1}),
    ],
)
def test_deep_merge(base: dict[str, Any], patch: dict[str, Any], merged: dict[str, Any]) -> None:
    before = json.dumps(base)
    assert deep_merge(base, patch) == merged
    assert json.dumps(base) == before


def test_patch_changes_one_entity() -> None:
    world = load_world("default", {"products": {"SKU-1006": {"stock": {"Berlin": 40}}}, "tickets": {"TCK-2998": None}})
    assert world["products"]["SKU-1006"]["stock"] == {"Berlin": 40, "Hamburg": 3}
    assert world["products"]["SKU-1006"]["name"] == "Black Toner Cartridge TN-420"
    assert "TCK-2998" not in world["tickets"]


@pytest.mark.parametrize(
    ("patch", "problem"),
    [
        ({"products": {"SKU-1001": {"stock": {"Berlin": -1}}}}, "products.SKU-1001.stock"),
        ({"tickets": {"TCK-3001": {"priority": "critical"}}}, "tickets.TCK-3001"),
        ({"now": {"time": "9.30"}}, "now must hold"),
        ({"faults": [{"times": 1}]}, "faults[0] needs a tool"),
        ({"faults": [{"tool": "get_weather", "times": 0}]}, "faults[0].times"),
        ({"orders": {"ORD-5001": {"customer_id": "CUST-9999"}}}, "orders.ORD-5001"),
        ({"side_effects": [{"kind": "email", "ref": "OUT-9"}]}, "points at nothing"),
    ],
)
def test_invalid_patches_are_refused(patch: dict[str, Any], problem: str) -> None:
    with pytest.raises(WorldError, match="invalid") as info:
        load_world("default", patch)
    assert problem in str(info.value)


def test_unknown_world() -> None:
    with pytest.raises(WorldError, match="no world 'nowhere'"):
        load_world("nowhere")


def test_world_from_a_file_path(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps({"version": 1, "now": {"date": "2030-01-01", "time": "08:00", "utc_offset": "+00:00"},
                                "counters": {}, "side_effects": []}))
    assert load_world(str(path))["now"]["date"] == "2030-01-01"


@pytest.mark.parametrize(
    ("content", "message"),
    [("version: 2\ncounters: {}\n", "format version 2"), ("- a\n", "must be a mapping"), ("a: [\n", "cannot read")],
)
def test_bad_world_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(WorldError, match=message):
        load_world(str(path))


@pytest.mark.parametrize(
    ("world", "problem"),
    [(["x"], "a world must be a mapping"), ({"now": {}}, "missing counters, side_effects")],
)
def test_world_problems_on_broken_shapes(world: Any, problem: str) -> None:
    assert world_problems(world) == [problem]
