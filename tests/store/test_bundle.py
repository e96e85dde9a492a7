"""Portable runs: export, import into any store, rescore identically; bad bundles refused."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func
from sqlmodel import Session, select

from probegate.errors import UsageError
from probegate.redact import make_redactor
from probegate.store import CaptureWriter, Exchange, ProbeCall, Run, WorldState, open_store
from probegate.store.bundle import BundleError, export_run, import_bundle, read_bundle
from probegate.testing import Turn
from probegate.probes.service import ProbeService
from probegate.scorer import score_run, write_outputs
from probegate.scorer.selftest.mutations import reference_plan
from probegate.scorer.selftest.scripted import ScriptedAgent
from probegate.tasks.loader import load_task_set

TASKS = str(Path(__file__).resolve().parents[1] / "scorer" / "taskset")


@pytest.fixture
def recorded(engine, upstream, gateway_factory):
    """A run of two tasks (one played for real through the probes), plus one exchange
    captured by the real gateway (raw bytes, stream pieces)."""
    task_set = load_task_set(TASKS)
    writer = CaptureWriter(engine).start()
    agent = ScriptedAgent(ProbeService(writer), writer)
    agent.start_run("r1", TASKS)
    for task in task_set.tasks[:2]:
        agent.play("r1", task, 0, reference_plan(task))
    writer.close()
    script, server = upstream
    script.push(Turn("streamed reply with sk-proj-abcdefghijklmnopqrstuvwx"))
    gw = gateway_factory(server.url)
    httpx.post(f"{gw.base('r1', 'extra')}/chat/completions",
               json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "mail a@b.example"}]})
    gw.flush()
    return engine


def _counts(engine, run: str) -> dict[str, int]:
    with Session(engine) as session:
        return {m.__tablename__: session.exec(select(func.count()).select_from(m).where(
            (m.id if m is Run else m.run_id) == run)).one() for m in (Run, Exchange, ProbeCall, WorldState)}


def _summary(engine, run: str, out: Path) -> bytes:
    paths = write_outputs(score_run(engine, run, TASKS), out / run)
    return Path(paths["summary"]).read_bytes()


def test_roundtrip_into_the_other_store_rescores_identically(recorded, tmp_path, store_url, request) -> None:
    bundle = tmp_path / "r1.jsonl.gz"
    summary = export_run(recorded, "r1", bundle)
    assert summary.counts["exchange"] >= 3 and summary.counts["probe_call"] >= 2
    other_url = f"sqlite:///{tmp_path / 'other.db'}" if store_url.startswith("postgresql") else \
        request.getfixturevalue("pg_url")
    target = open_store(other_url)
    imported = import_bundle(target, bundle)
    assert imported.run == "r1"
    assert _counts(target, "r1") == _counts(recorded, "r1")
    with Session(recorded) as a, Session(target) as b:
        ours = {e.id: e for e in a.exec(select(Exchange).where(Exchange.run_id == "r1")).all()}
        theirs = {e.id: e for e in b.exec(select(Exchange).where(Exchange.run_id == "r1")).all()}
    assert ours.keys() == theirs.keys()
    for xid, row in ours.items():
        assert theirs[xid].response_raw == row.response_raw and theirs[xid].sse_events == row.sse_events
    assert _summary(recorded, "r1", tmp_path / "a") == _summary(target, "r1", tmp_path / "b")
    target.dispose()


def test_import_never_clashes(recorded, tmp_path) -> None:
    bundle = tmp_path / "r1.jsonl.gz"
    export_run(recorded, "r1", bundle)
    with pytest.raises(BundleError, match="already holds run 'r1'.*--as"):
        import_bundle(recorded, bundle)
    copy = import_bundle(recorded, bundle, rename="r1-copy")
    assert _counts(recorded, "r1-copy") == _counts(recorded, "r1")
    with Session(recorded) as session:
        ids = session.exec(select(Exchange.id)).all()
    assert len(ids) == len(set(ids))  # clashing exchange ids got new ones
    assert copy.counts["exchange"] == _counts(recorded, "r1")["exchange"]


def test_export_redacts_on_the_way_out(recorded, tmp_path) -> None:
    bundle = tmp_path / "red.jsonl.gz"
    export_run(recorded, "r1", bundle, redactor=make_redactor(pii=True))
    text = gzip.decompress(bundle.read_bytes()).decode()
    assert "a@b.example" not in text and "sk-proj-abcdefghijklmnopqrstuvwx" not in text
    read_bundle(bundle)  # still a valid bundle


def _rewrite(bundle: Path, change) -> None:
    lines = gzip.decompress(bundle.read_bytes()).decode().splitlines(keepends=True)
    bundle.write_bytes(gzip.compress("".join(change(lines)).encode()))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda b: b.write_bytes(b.read_bytes()[: len(b.read_bytes()) // 2]), "truncated"),
        (lambda b: _rewrite(b, lambda ls: ls[:-1]), "end record is missing"),
        (lambda b: _rewrite(b, lambda ls: [ls[0], ls[1].replace('"status"', '"statu"'), *ls[2:]]), "checksum"),
        (lambda b: _rewrite(b, lambda ls: [ls[0].replace('"version":1', '"version":9'), *ls[1:]]), "newer than this"),
        (lambda b: b.write_bytes(b"not gzip at all"), "not a probegate bundle"),
    ],
    ids=["cut-gzip", "no-end", "edited", "newer", "garbage"],
)
def test_bad_bundles_are_refused_without_half_importing(recorded, tmp_path, damage, message) -> None:
    bundle = tmp_path / "bad.jsonl.gz"
    export_run(recorded, "r1", bundle)
    damage(bundle)
    target = open_store(f"sqlite:///{tmp_path / 'fresh.db'}")
    with pytest.raises(BundleError, match=message):
        import_bundle(target, bundle)
    assert _counts(target, "r1") == {"run": 0, "exchange": 0, "probecall": 0, "worldstate": 0}


def test_export_of_nothing_is_a_usage_error(engine, tmp_path) -> None:
    with pytest.raises(UsageError, match="nothing is recorded under run 'ghost'"):
        export_run(engine, "ghost", tmp_path / "x.jsonl.gz")


def test_header_names_format_and_schema(recorded, tmp_path) -> None:
    bundle = tmp_path / "r1.jsonl.gz"
    export_run(recorded, "r1", bundle)
    header = json.loads(gzip.decompress(bundle.read_bytes()).decode().splitlines()[0])
    assert (header["format"], header["version"], header["run"]) == ("probegate-bundle", 1, "r1")
    assert header["schema"] and header["probegate"]
