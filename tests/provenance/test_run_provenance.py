"""Every run records where its numbers came from: a run against a scripted llama.cpp-like
server on loopback, then summary.json, report.html, the console, a rescore from the
store alone and ``probegate compare``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import Session

from probegate.runner.execute import RunConfig, execute, provenance
from probegate.runner.provenance import MODELS, PROPS, QUERIES
from probegate.store import Run, open_store
from probegate.testing import Reply, RunningServer, ScriptedUpstream, serve_in_thread

from tests.harnesses.test_run_cli import stock_model
from tests.provenance.shapes import LLAMA_CPP_MODELS, LLAMA_CPP_PROPS

TASKS = str(Path(__file__).parents[1] / "harnesses" / "tasks")
MODEL = "qwen2.5-0.5b-instruct-q8_0.gguf"
KEY = "sk-provenance-secret-000000000001"


@pytest.fixture
def llama_cpp() -> Iterator[tuple[ScriptedUpstream, RunningServer]]:
    script = ScriptedUpstream(handler=stock_model, info={"/v1/models": Reply.json(LLAMA_CPP_MODELS),
                                                         "/props": Reply.json(LLAMA_CPP_PROPS)})
    server = serve_in_thread(script)
    yield script, server
    server.stop()


@pytest.fixture
def silent() -> Iterator[tuple[ScriptedUpstream, RunningServer]]:
    script = ScriptedUpstream(handler=stock_model)  # answers no provenance query
    server = serve_in_thread(script)
    yield script, server
    server.stop()


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "probegate", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, check=False)


def run(server: RunningServer, store: str, out: Path, run_id: str, **options: object) -> None:
    config = RunConfig(task_set=TASKS, harness="fc", model=MODEL, model_endpoint=server.url, store=store,
                       task_ids=("stock-total",), run_id=run_id, output_dir=out, api_key=KEY, **options)  # type: ignore[arg-type]
    assert execute(config).status == "done"


def test_a_run_records_and_shows_its_provenance(llama_cpp, silent, sqlite_url: str, tmp_path: Path) -> None:
    script, server = llama_cpp
    run(server, sqlite_url, tmp_path / "runs", "prov-a", compat=("null-content",))
    assert [r.path for r in script.info_requests] == ["/v1/models", "/props", "/api/version", "/version"]
    assert all(r.path == "/v1/chat/completions" for r in script.requests)  # the model's turns, nothing else

    engine = open_store(sqlite_url)
    with Session(engine) as session:
        row = session.get(Run, "prov-a")
        stored = dict(row.params["provenance"])
    engine.dispose()
    assert stored["server"] == {"software": "llama.cpp server", "version": "b4500-adbed955", "build": "b4500-adbed955"}
    assert (stored["model"]["file"], stored["model"]["quantization"], stored["model"]["context_size"]) == (
        MODEL, "Q8_0", 8192)
    assert stored["shims"] == ["null-content"] and stored["sampling"]["temperature"] == 0.0
    assert stored["sources"][MODELS] == stored["sources"][PROPS] == "answered"
    assert KEY not in Path(sqlite_url.removeprefix("sqlite:///")).read_bytes().decode("latin-1")  # sent, never stored

    folder = tmp_path / "runs" / "prov-a"
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["provenance"] == stored
    report = (folder / "report.html").read_text()
    assert 'id="provenance-line"' in report and "llama.cpp server b4500-adbed955" in report and "Q8_0" in report

    # rescored from the store alone: the same provenance, and the console says it
    rescored = cli("score", "prov-a", "--task-set", TASKS, "--store", sqlite_url, "--out", str(tmp_path / "again"),
                   cwd=tmp_path)
    assert rescored.returncode == 0, rescored.stderr
    assert json.loads((tmp_path / "again" / "prov-a" / "summary.json").read_text())["provenance"] == stored
    assert "provenance: server llama.cpp server b4500-adbed955" in " ".join(rescored.stdout.split())

    # a second run against a server that tells nothing: the run goes on, compare shows the difference
    second = cli("run", "--task-set", TASKS, "--tasks", "stock-total", "--harness", "fc", "--model", MODEL,
                 "--model-endpoint", silent[1].url, "--store", sqlite_url, "--run-id", "prov-b", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "provenance: server not told · shims none" in " ".join(second.stdout.split())
    assert len(silent[0].info_requests) == 4 and silent[0].requests
    compared = cli("compare", "prov-a", "prov-b", "--task-set", TASKS, "--store", sqlite_url, cwd=tmp_path)
    assert compared.returncode == 0, compared.stderr
    text = " ".join(compared.stdout.split())
    assert "provenance · quantization" in text and "Q8_0" in text
    assert "provenance differs between the runs: server, model file, quantization, context, chat handler, sampling, shims" in text
    as_json = json.loads(cli("compare", "prov-a", "prov-b", "--task-set", TASKS, "--store", sqlite_url, "--json",
                             cwd=tmp_path).stdout)
    assert as_json["provenance_differs"] == ["server", "model file", "quantization", "context", "chat handler",
                                           "sampling", "shims"]


def test_a_gateway_that_does_not_tell_is_not_asked_further() -> None:
    config = RunConfig(task_set=TASKS, harness="fc", model="m", gateway="http://127.0.0.1:9")
    recorded = provenance(config, None)
    assert {recorded["sources"][q] for q in QUERIES} == {
        "not asked: the run goes through an external gateway (--gateway) that does not name its upstream"}
    assert recorded["model"]["name"] == "m" and recorded["frameworks"]["openai"]


def test_a_pass_through_gateway_names_its_upstream(llama_cpp, gateway_factory) -> None:
    script, server = llama_cpp
    gateway = gateway_factory(server.url, compat=["null-content"])
    config = RunConfig(task_set=TASKS, harness="fc", model=MODEL, gateway=gateway.url)
    recorded = provenance(config, None)
    assert recorded["server"]["software"] == "llama.cpp server" and recorded["model"]["quantization"] == "Q8_0"
    assert recorded["shims"] == ["null-content"]  # the gateway's, which rewrite what the run sends
    assert [r.path for r in script.info_requests][:2] == ["/v1/models", "/props"] and script.requests == []
