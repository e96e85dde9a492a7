"""The benchmark entry points run end to end (tiny loads) so they cannot rot.

CI does not gate on the numbers: these tests check that every measurement ran, that
nothing errored and that probegate recorded every request, never how fast anything was.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=280,
                            check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def test_gateway_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = _run("bench.gateway", "--smoke", "--no-litellm", "--json", str(out))
    data = json.loads(out.read_text())
    probegate = data["targets"]["probegate"]
    assert probegate["captures_written"] == probegate["requests_sent"]
    for name in ("direct", "probegate", "mitmproxy"):
        t = data["targets"][name]
        assert t["lat1"]["errors"] == t["lat32"]["errors"] == t["rps_errors"] == t["ttfc"]["errors"] == 0
        assert t["stream1"]["chunks_per_stream"] > 100 and t["stream4"]["errors"] == 0
    assert probegate["drain"]["left"] == 0  # the queue emptied while the streams ran
    assert "Added over direct" in result.stdout and "LiteLLM skipped (--no-litellm)" in result.stdout


def test_store_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "store.json"
    _run("bench.store", "--smoke", "--no-postgres", "--json", str(out))
    results = json.loads(out.read_text())["results"]
    assert {(r["store"], r["shape"]) for r in results} == {("sqlite", "plain"), ("sqlite", "stream")}
    assert all(r["written"] == r["captures"] and r["spilled"] == 0 for r in results)


@pytest.mark.postgres
def test_store_bench_smoke_on_postgres(tmp_path: Path) -> None:
    out = tmp_path / "store.json"
    _run("bench.store", "--smoke", "--json", str(out))
    results = json.loads(out.read_text())["results"]
    assert {r["store"] for r in results} == {"sqlite", "postgres"}
    assert all(r["written"] == r["captures"] for r in results)


def test_scorer_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "scorer.json"
    result = _run("bench.scorer", "--smoke", "--json", str(out))
    data = json.loads(out.read_text())
    assert data["attempts_scored"] == 60 and data["build"]["rows"]["exchange"] >= 60
    assert data["attempts_per_s"] > 0 and "attempts / s" in result.stdout


@pytest.mark.model
def test_model_bench_smoke(tmp_path: Path) -> None:
    """bench.model measures the embedded engine and runs one attempt of the main job."""
    out = tmp_path / "model.json"
    result = subprocess.run([sys.executable, "-m", "bench.model", "--smoke", "--json", str(out)], cwd=ROOT,
                            capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    data = json.loads(out.read_text())
    assert data["speed"]["prompt"]["64"]["tokens_per_s"] > 0 and data["speed"]["generation"]["tokens_per_s"] > 0
    (run,) = data["main_job"]["runs"]
    assert run["harness"] == "fc" and run["attempts"] == 1 and run["status"] == "done" and run["model_calls"] >= 1
    assert "| prompt evaluation, cold 64 tokens |" in result.stdout and "| fc | 1 |" in result.stdout
