"""One id rule everywhere, and no path outside its folder (issue 18, part 3).

The reproductions: a run id ``../../../elsewhere/x`` in ``x-probegate-run`` went into
the store, through export and import, and ``probegate report`` then wrote outside
``--out`` and deleted a file there; ``/v1/%2e%2e/%2e%2e/secret`` reached the upstream as
``/secret``; ``%3F`` added a query; ``%00 %09 %0a %0d %7f`` in a path gave an unrecorded 500.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from probegate.store.bundle import export_run
from probegate.store.models import Exchange, ProbeCall, Run, WorldState
from probegate.testing import Reply, chat_completion
from tests.conftest import Gateway

EVIL = "../../../elsewhere/x"


def _exchanges(gw: Gateway) -> list[Exchange]:
    gw.flush()
    with Session(gw.engine) as session:
        return list(session.exec(select(Exchange).order_by(Exchange.started_at)).all())


@pytest.mark.parametrize("header", ["x-probegate-run", "x-probegate-task"])
def test_unusable_attribution_header_is_a_recorded_400(upstream, gateway: Gateway, header: str) -> None:
    script, _ = upstream
    answer = httpx.post(f"{gateway.url}/v1/chat/completions", json={"model": "m", "messages": []},
                        headers={header: EVIL}, timeout=30)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad_attribution"
    assert header in answer.json()["error"]["message"]
    assert script.requests == []  # never forwarded
    (row,) = _exchanges(gateway)
    assert (row.run_id, row.task_id, row.status_code) == ("adhoc", "-", 400)
    assert row.error is not None and row.error.startswith("bad_attribution") and row.request_body == {"model": "m", "messages": []}


@pytest.mark.parametrize("path", ["/r/%2e%2e/t1/0/v1/chat/completions", "/r/run1/t%0a1/v1/chat/completions", "/r/-x/t1/v1/models"])
def test_unusable_id_in_the_url_is_a_recorded_400(upstream, gateway: Gateway, path: str) -> None:
    script, _ = upstream
    answer = httpx.post(f"{gateway.url}{path}", json={"model": "m"}, timeout=30)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad_attribution"
    assert script.requests == []
    (row,) = _exchanges(gateway)
    assert (row.run_id, row.task_id, row.status_code) == ("adhoc", "-", 400)


@pytest.mark.parametrize(
    "path",
    [
        "/v1/%2e%2e/%2e%2e/secret",
        "/v1/chat/%2E%2E/%2e%2e/%2e%2e/secret",
        "/r/run1/t1/0/v1/%2e%2e/%2e%2e/secret",
        "/v1/models%3Fadded=1",
        "/v1/models%23frag",
        "/v1/a%5c..%5c..%5csecret",
        "/v1/x%00y",
        "/v1/x%09y",
        "/v1/x%0ay",
        "/v1/x%0dy",
        "/v1/x%7fy",
    ],
)
def test_path_leaving_the_api_prefix_or_with_control_characters_is_a_recorded_400(
    upstream, gateway: Gateway, path: str
) -> None:
    script, _ = upstream
    answer = httpx.post(f"{gateway.url}{path}", json={"model": "m"}, timeout=30)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "bad_path"
    assert script.requests == []
    (row,) = _exchanges(gateway)
    assert row.status_code == 400 and row.error is not None and row.error.startswith("bad_path")


def test_dot_segments_inside_the_prefix_are_normalised(upstream, gateway: Gateway) -> None:
    script, _ = upstream
    script.push(Reply.json(chat_completion("ok")))
    answer = httpx.post(f"{gateway.url}/r/run1/t1/0/v1/x/%2e%2e/chat/./completions", json={"model": "m"}, timeout=30)
    assert answer.status_code == 200
    assert script.requests[0].path == "/v1/chat/completions"
    (row,) = _exchanges(gateway)
    assert (row.run_id, row.path) == ("run1", "/v1/chat/completions")


def test_percent_in_a_path_stays_a_character_upstream(upstream, gateway: Gateway) -> None:
    script, _ = upstream
    script.push(Reply.json({"object": "model", "id": "a%2Fb"}))
    answer = httpx.get(f"{gateway.url}/v1/models/a%252Fb", timeout=30)
    assert answer.status_code == 200
    assert script.requests[0].path == "/v1/models/a%2Fb"  # decoded once, as the client meant


def test_probe_doors_refuse_unusable_ids(gateway: Gateway) -> None:
    called = httpx.post(f"{gateway.url}/tools/get_weather", json={"city": "Berlin"},
                        headers={"x-probegate-run": EVIL}, timeout=30)
    assert called.status_code == 400
    reset = httpx.post(f"{gateway.url}/probegate/attempts/reset", json={"run": EVIL, "task": "t1"}, timeout=30)
    assert reset.status_code == 422 and "not usable as a run id" in reset.text
    reset = httpx.post(f"{gateway.url}/probegate/attempts/reset", json={"run": "run1", "task": "t1\n"}, timeout=30)
    assert reset.status_code == 422
    gateway.flush()
    with Session(gateway.engine) as session:
        runs = {r.run_id for r in session.exec(select(ProbeCall)).all()} | {w.run_id for w in session.exec(select(WorldState)).all()}
    assert EVIL not in runs


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "probegate", *args], capture_output=True, text=True, timeout=120)


def _one_line_exit_2(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_traversal_run_id_is_refused_by_export_import_and_report(engine: Engine, store_url: str, tmp_path: Path) -> None:
    # a store written before the rule existed: the evil run id is already inside
    with Session(engine) as session:
        session.add(Run(id=EVIL, status="done"))
        session.add(Exchange(run_id=EVIL, task_id="t1", path="/v1/chat/completions", status_code=200))
        session.commit()
    out = tmp_path / "a" / "b" / "c" / "runs"
    victim = out / EVIL / "traces" / "keep.json"  # resolves to tmp_path/a/elsewhere/x/traces
    victim.parent.mkdir(parents=True)
    victim.write_text("{}")

    _one_line_exit_2(_cli("report", EVIL, "--out", str(out), "--store", store_url))
    _one_line_exit_2(_cli("score", EVIL, "--out", str(out), "--store", store_url))
    _one_line_exit_2(_cli("trace", EVIL, "t1", "--store", store_url))
    _one_line_exit_2(_cli("export", EVIL, "-o", str(tmp_path / "b.jsonl.gz"), "--store", store_url))
    assert victim.read_text() == "{}" and sorted(p.name for p in victim.parent.iterdir()) == ["keep.json"]

    # a bundle carrying it (written by the library, as an older probegate did)
    bundle = tmp_path / "evil.jsonl.gz"
    export_run(engine, EVIL, bundle)
    target = f"sqlite:///{tmp_path / 'target.db'}"
    refused = _cli("import", str(bundle), "--store", target)
    _one_line_exit_2(refused)
    assert "not a usable run id" in refused.stderr
    _one_line_exit_2(_cli("import", str(bundle), "--store", target, "--as", EVIL))
    renamed = _cli("import", str(bundle), "--store", target, "--as", "safe-x")
    assert renamed.returncode == 0 and "imported run safe-x" in renamed.stdout


def test_bundle_with_a_traversal_task_id_is_refused(engine: Engine, tmp_path: Path) -> None:
    with Session(engine) as session:
        session.add(Run(id="r1", status="done"))
        session.add(Exchange(run_id="r1", task_id="../../t", path="/v1/chat/completions"))
        session.commit()
    bundle = tmp_path / "evil.jsonl.gz"
    export_run(engine, "r1", bundle)
    refused = _cli("import", str(bundle), "--store", f"sqlite:///{tmp_path / 'target.db'}", "--as", "r2")
    _one_line_exit_2(refused)
    assert "task id" in refused.stderr
