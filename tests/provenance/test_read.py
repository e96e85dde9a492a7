"""Reading provenance: real HTTP queries to a scripted server on loopback, the GGUF
checksum cache, the embedded launcher's facts (without starting llama.cpp)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from probegate.runner.chat_handler import NAME as PROBEGATE_HANDLER
from probegate.runner.embedded import SEED, EmbeddedServer, launcher_facts
from probegate.runner.provenance import MODELS, OLLAMA_SHOW, OLLAMA_VERSION, PROPS, QUERIES, VLLM_VERSION
from probegate.runner.provenance_read import USER_AGENT, file_sha256, read_server, run_provenance, server_root
from probegate.testing import Reply, RunningServer, ScriptedUpstream, Turn, serve_in_thread
from probegate.testing.upstream import PROVENANCE_AGENT

from tests.provenance.shapes import LLAMA_CPP_MODELS, LLAMA_CPP_PROPS, OLLAMA_SHOW_BODY


@pytest.fixture
def serve() -> Iterator:
    started: list[RunningServer] = []

    def start(script: ScriptedUpstream) -> RunningServer:
        started.append(serve_in_thread(script))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def test_the_user_agents_agree() -> None:
    assert PROVENANCE_AGENT.startswith(USER_AGENT + "/")


def test_server_root() -> None:
    assert server_root("http://h:8080/v1/") == server_root("http://h:8080") == "http://h:8080"


def test_a_llama_cpp_server_answers(serve) -> None:
    script = ScriptedUpstream([Turn("queued for the model")], info={
        "/v1/models": Reply(200, [("content-type", "application/json"), ("x-served-by", "llama.cpp b4500")],
                            json.dumps(LLAMA_CPP_MODELS).encode()),
        "/props": Reply.json(LLAMA_CPP_PROPS)})
    server = serve(script)
    answers = read_server(f"{server.url}/v1", "qwen2.5-0.5b-instruct-q8_0.gguf", api_key="sk-test-secret-key-0001")
    assert {q: a.describe() for q, a in answers.items()} == {
        MODELS: "answered", PROPS: "answered", OLLAMA_VERSION: "HTTP 404",
        OLLAMA_SHOW: "not asked: not an Ollama server (GET /api/version)", VLLM_VERSION: "HTTP 404"}
    assert answers[PROPS].body["build_info"] == "b4500-adbed955" and answers[MODELS].headers["x-served-by"] == "llama.cpp b4500"
    assert [(r.method, r.path) for r in script.info_requests] == [
        ("GET", "/v1/models"), ("GET", "/props"), ("GET", "/api/version"), ("GET", "/version")]
    assert script.info_requests[0].headers["authorization"] == "Bearer sk-test-secret-key-0001"
    assert script.requests == [] and script.completed == 4  # the queued turn is still there for the model


def test_an_ollama_server_is_asked_about_the_model(serve) -> None:
    script = ScriptedUpstream(info={"/v1/models": Reply.json({"object": "list", "data": [{"id": "qwen2.5:0.5b"}]}),
                                    "/api/version": Reply.json({"version": "0.5.7"}),
                                    "/api/show": Reply.json(OLLAMA_SHOW_BODY)})
    server = serve(script)
    provenance = run_provenance(upstream=server.url, model="qwen2.5:0.5b", temperature=0.0)
    show = [r for r in script.info_requests if r.path == "/api/show"]
    assert [r.method for r in show] == ["POST"] and show[0].json() == {"model": "qwen2.5:0.5b"}
    assert provenance["server"] == {"software": "ollama", "version": "0.5.7", "build": None}
    assert provenance["model"]["quantization"] == "Q4_K_M" and provenance["model"]["context_size"] == 2048
    assert provenance["frameworks"]["openai"] and "crewai" in provenance["frameworks"]


def test_a_server_that_answers_none_of_them(serve) -> None:
    script = ScriptedUpstream()  # 404 for every provenance query
    server = serve(script)
    provenance = run_provenance(upstream=server.url, model="m", temperature=0.0)
    assert provenance["sources"][MODELS] == "HTTP 404" and provenance["server"]["software"] is None
    assert provenance["model"]["name"] == "m"


def test_nothing_listening_costs_one_query() -> None:
    answers = read_server("http://127.0.0.1:9", "m", timeout_s=2)
    assert answers[MODELS].describe().startswith("no answer: Connect")
    assert all(answers[q].describe() == "not asked: GET /v1/models got no answer" for q in QUERIES if q != MODELS)


def test_the_checksum_is_cached_by_path_size_and_mtime(tmp_path: Path) -> None:
    gguf, cache = tmp_path / "m.Q4_1.gguf", tmp_path / "cache" / "sha256.json"
    gguf.write_bytes(b"GGUF" + bytes(1000))
    first = file_sha256(gguf, cache)
    assert first == hashlib.sha256(b"GGUF" + bytes(1000)).hexdigest()
    # a cached digest is taken as it is: poison the entry to prove the file is not read again
    cache.write_text(cache.read_text().replace(first, "cached" * 10 + "cafe"))
    assert file_sha256(gguf, cache) == "cached" * 10 + "cafe"
    gguf.write_bytes(b"GGUF" + bytes(1001))  # size and mtime change: hashed again, the old entry dropped
    os.utime(gguf, ns=(1, 2))
    assert file_sha256(gguf, cache) == hashlib.sha256(b"GGUF" + bytes(1001)).hexdigest()
    assert len(cache.read_text().splitlines()) == 3  # one entry: {, "key": "digest", }


def test_an_unwritable_cache_still_gives_the_digest(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"x")
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert len(file_sha256(gguf, blocker / "sha256.json")) == 64


def test_the_launcher_facts_without_starting_the_server(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny-model.Q8_0.gguf"
    gguf.write_bytes(b"GGUF" + bytes(64))
    facts = launcher_facts(gguf, alias="tiny", n_ctx=2048, threads=2, chat_handler="chatml-function-calling",
                           cache=tmp_path / "c.json")
    assert {k: v for k, v in facts.items() if k != "software_version"} == {
        "software": "llama-cpp-python", "model_path": str(gguf), "model_alias": "tiny", "size_bytes": 68,
        "sha256": file_sha256(gguf, tmp_path / "c.json"), "n_ctx": 2048, "threads": 2, "seed": SEED,
        "chat_handler": "chatml-function-calling"}
    missing = launcher_facts(tmp_path / "gone.gguf", alias="gone", cache=tmp_path / "c.json")
    assert (missing["size_bytes"], missing["sha256"]) == (None, None)


def test_an_embedded_server_states_its_own_facts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The facts a run gets from the embedded endpoint: built from the server's configuration
    (a stand-in process: llama.cpp is not started)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    gguf = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    gguf.write_bytes(b"GGUF" + bytes(16))
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait(30)
    server = EmbeddedServer("http://127.0.0.1:9", "smollm2", gguf, process, tmp_path / "log", n_ctx=2048, threads=2)
    facts = server.facts()
    assert (facts["model_path"], facts["model_alias"], facts["n_ctx"], facts["threads"], facts["chat_handler"],
            facts["size_bytes"]) == (str(gguf), "smollm2", 2048, 2, PROBEGATE_HANDLER, 20)
    assert facts["sha256"] == hashlib.sha256(gguf.read_bytes()).hexdigest()
    assert (tmp_path / "cache" / "probegate" / "sha256.json").is_file()  # cached where the docs say
