"""The benchmark code runs (tiny loads) so it cannot rot; CI does not gate on numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_gateway_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = subprocess.run(
        [sys.executable, "-m", "bench.gateway", "--smoke", "--no-litellm", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    data = json.loads(out.read_text())
    probegate = data["targets"]["probegate"]
    assert probegate["captures_written"] == probegate["requests_sent"]
    assert data["targets"]["direct"]["lat1"]["errors"] == 0 and probegate["lat1"]["errors"] == 0
    assert probegate["stream"]["chunks_per_stream"] > 1
    assert "Added latency over direct" in result.stdout
