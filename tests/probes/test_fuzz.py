"""Property-based fuzzing of every tool through HTTP (hypothesis).

For arguments drawn from each tool's schema (valid values, known entity ids, and
junk of every JSON type, with required keys dropped and unknown keys added), and
for raw bodies that are not JSON at all, the probe always answers with a clean
result (200) or a structured error (400 tool error, 422 blocked) — never a 500 —
and the attempt's world keeps every invariant after every call.
"""

from __future__ import annotations

import json
import string
from datetime import date
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from probegate.probes.catalog import CATALOG, tool_names
from probegate.probes.worlds import load_world, world_problems

WORLD = load_world()
IDS = sorted(
    set(WORLD["products"]) | set(WORLD["orders"]) | set(WORLD["customers"]) | set(WORLD["tickets"])
    | set(WORLD["shipments"]) | set(WORLD["inbox"]) | set(WORLD["documents"]) | {"SKU-0000", "ORD-0000"}
)
EMAILS = sorted({c["email"] for c in WORLD["contacts"].values()} | {"nobody@nowhere.example"})
PATHS = sorted(WORLD["files"]) + ["/reports/new.md", "/templates/x.md", "/a/../b", "/"]
WORDS = sorted(WORLD["cities"]) + ["chair", "toner", "Globex", "reorder", "2 * (3 + 4)", "10 / 0", "Atlantis", ""]
JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def valid_value(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values that satisfy (or nearly satisfy) one parameter schema."""
    if "enum" in prop:
        return st.sampled_from(prop["enum"])
    fmt, kind = prop.get("format"), prop.get("type")
    if fmt == "date":
        return st.dates(date(2025, 3, 1), date(2025, 4, 30)).map(date.isoformat)
    if fmt == "time":
        return st.times().map(lambda t: t.strftime("%H:%M"))
    if fmt == "email":
        return st.one_of(st.sampled_from(EMAILS), st.emails())
    if kind == "integer":
        return st.integers(prop.get("minimum", -10), prop.get("maximum", 10_000))
    if kind == "number":
        return st.floats(prop.get("minimum", -1e6), prop.get("maximum", 1e6), allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(valid_value(prop.get("items", {})), max_size=3)
    if "pattern" in prop:
        return st.one_of(st.sampled_from(IDS + PATHS), st.from_regex(prop["pattern"], fullmatch=True))
    return st.one_of(st.sampled_from(WORDS), st.text(string.printable, max_size=40))


def arguments(name: str) -> st.SearchStrategy[Any]:
    """Argument objects for one tool, sometimes broken on purpose."""
    schema = CATALOG[name].parameters
    required = set(schema["required"])
    props = {k: st.one_of(valid_value(p), valid_value(p), JUNK) for k, p in schema["properties"].items()}
    base = st.fixed_dictionaries(
        {k: v for k, v in props.items() if k in required},
        optional={k: v for k, v in props.items() if k not in required},
    )

    def mutate(args: dict[str, Any], drop: bool, extra: str | None) -> dict[str, Any]:
        if drop and args:
            args.pop(sorted(args)[0])
        if extra:
            args[extra] = 1
        return args

    return st.builds(mutate, base, st.booleans(), st.one_of(st.none(), st.text(string.ascii_lowercase, min_size=1, max_size=8)))


def bodies(name: str) -> st.SearchStrategy[bytes]:
    """Request bodies: mostly JSON argument objects, sometimes any JSON, sometimes raw bytes."""
    return st.one_of(
        arguments(name).map(lambda a: json.dumps(a).encode()),
        arguments(name).map(lambda a: json.dumps(a).encode()),
        arguments(name).map(lambda a: json.dumps(a).encode()),
        JUNK.map(lambda v: json.dumps(v).encode()),
        st.binary(max_size=40),
    )


def assert_clean_answer(response: httpx.Response) -> None:
    assert response.status_code in (200, 400, 422), (response.status_code, response.text)
    payload = response.json()
    assert isinstance(payload, dict)
    if response.status_code == 400:
        assert isinstance(payload["error"], str) and isinstance(payload["message"], str)
    elif response.status_code == 422:
        assert payload["error"] == "invalid_params"
        assert isinstance(payload["missing"], list) and isinstance(payload["invalid"], dict)
        assert payload["missing"] or payload["invalid"] or payload["unknown"]


def fuzz_tool(client: httpx.Client, name: str) -> None:
    """Fuzz one tool on its own attempt ``fuzz/<tool>/0``."""
    url = f"/r/fuzz/{name}/0/tools/{name}"
    state_url = f"/probegate/attempts/fuzz/{name}/0/state"
    changes_world = CATALOG[name].side_effect is not None
    client.post("/probegate/attempts/reset", json={"run": "fuzz", "task": name, "attempt": 0})
    before = client.get(state_url).json()["state"]

    @settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(body=bodies(name))
    def run(body: bytes) -> None:
        assert_clean_answer(client.post(url, content=body, headers={"content-type": "application/json"}))
        if changes_world:
            assert world_problems(client.get(state_url).json()["state"]) == [], name

    run()
    after = client.get(state_url).json()["state"]
    assert world_problems(after) == [], name
    if not changes_world:
        after.pop("faults", None), before.pop("faults", None)
        assert after == before, f"read-only tool {name} changed the world"


def test_fuzz_every_tool_over_http(gateway: Any) -> None:
    """One gateway per store; every tool fuzzed on its own attempt."""
    with httpx.Client(base_url=gateway.url, timeout=30) as client:
        for name in tool_names():
            fuzz_tool(client, name)
