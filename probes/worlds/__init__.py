"""World fixtures: the seeded data every probe tool answers from (YAML or JSON files here).

A world is a plain JSON-compatible dict: "now" (date, time, timezone, UTC offset),
the entities (cities, products, orders, customers, tickets, documents, files,
calendar...), id counters, fault-injection entries and the side-effect log. A task
names a world (``default``) and may patch it; :func:`load_world` deep-merges the
patch into a fresh copy, so two loads with the same arguments are always equal.

Patch rules: dicts merge key by key, any other value replaces, and ``null`` deletes
the key. Example: ``{"products": {"SKU-1006": {"stock": {"Berlin": 40}}}}``.
"""

from __future__ import annotations

import copy
import json
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from probegate.probes.worlds.invariants import world_problems
from probegate.yamlfile import load_yaml

WORLDS_DIR = Path(__file__).parent
#: Newest world format this code reads.
WORLD_VERSION = 1


class WorldError(ValueError):
    """A world fixture is missing, unreadable or invalid."""


def known_worlds() -> list[str]:
    """Names of the fixtures shipped with probegate."""
    return sorted(p.stem for p in WORLDS_DIR.iterdir() if p.suffix in (".yaml", ".yml", ".json"))


def _path(name: str) -> Path:
    if name.endswith((".yaml", ".yml", ".json")) and Path(name).is_file():
        return Path(name)
    for suffix in (".yaml", ".yml", ".json"):
        path = WORLDS_DIR / f"{name}{suffix}"
        if path.is_file():
            return path
    raise WorldError(f"no world {name!r}: use one of {', '.join(known_worlds())} or a path to a .yaml/.json file")


def _plain(value: Any) -> Any:
    """YAML dates and datetimes as ISO strings, so the world is JSON all the way down."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    return value


@lru_cache(maxsize=16)
def _fixture(name: str) -> str:
    path = _path(name)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else load_yaml(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, json.JSONDecodeError, RecursionError) as exc:
        raise WorldError(f"cannot read world {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise WorldError(f"world {path} must be a mapping at the top level")
    version = data.get("version", 1)
    if not isinstance(version, int) or version > WORLD_VERSION:
        raise WorldError(f"world {path} has format version {version!r}; this probegate reads up to {WORLD_VERSION}")
    return json.dumps(_plain(data))


def deep_merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``patch`` merged in (a new dict; neither argument is changed)."""
    out = dict(base)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_world(name: str = "default", patch: dict[str, Any] | None = None) -> dict[str, Any]:
    """A fresh, patched copy of world ``name``.

    Args:
        name: a fixture under ``probes/worlds/`` (``default``) or a path to a YAML/JSON file.
        patch: deep-merged into the fixture (``null`` deletes a key).

    Returns:
        The world state: a JSON-compatible dict the caller may mutate.

    Raises:
        WorldError: no such fixture, it cannot be parsed, it is newer than this code,
            or the patched world breaks an invariant (see :func:`world_problems`).
    """
    world = json.loads(_fixture(name))
    if patch:
        world = deep_merge(world, _plain(patch))
    problems = world_problems(world)
    if problems:
        raise WorldError(f"world {name!r} is invalid: " + "; ".join(problems[:5]))
    return world


__all__ = ["WORLD_VERSION", "WorldError", "deep_merge", "known_worlds", "load_world", "world_problems"]
