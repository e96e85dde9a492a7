"""docs/probes.md stays in step with the catalogue, the checks and the default world."""

from __future__ import annotations

from pathlib import Path

import pytest

from probegate.probes.catalog import tool_names
from probegate.probes.verify import known_checks
from probegate.probes.worlds import load_world

DOC = (Path(__file__).resolve().parents[2] / "docs" / "probes.md").read_text(encoding="utf-8")
WORLD = load_world()


@pytest.mark.parametrize("name", tool_names())
def test_every_tool_is_documented(name: str) -> None:
    assert f"| `{name}` |" in DOC


@pytest.mark.parametrize("name", sorted(known_checks()))
def test_every_check_is_documented(name: str) -> None:
    assert f"| `{name}` |" in DOC


@pytest.mark.parametrize(
    "collection", ["products", "orders", "customers", "tickets", "documents", "files", "events", "inbox", "contacts",
                   "shipments", "suppliers", "discounts"],
)
def test_every_default_world_entity_is_documented(collection: str) -> None:
    assert all(f"| {key} |" in DOC for key in WORLD[collection])
