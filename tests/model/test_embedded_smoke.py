"""The main job in small: the embedded model, 3 tasks, 2 harness styles, end to end.

Marked ``model`` (deselect with ``-m 'not model'``); CI runs it. It drives the real
CLI, so the captures, the scoring, the reports and the reconstruction are what a user
gets from ``probegate run``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sqlmodel import Session, select

from probegate.runner.embedded import embedded_shims
from probegate.store import Exchange, Run, open_store
from probegate.scorer import reconstruct

pytestmark = pytest.mark.model
TASKS = ["p0-weather-berlin", "p0-time-tokyo", "p1-delayed-order-email"]


def test_three_tasks_two_styles_on_the_embedded_model(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    out = tmp_path / "runs"
    result = subprocess.run(
        [sys.executable, "-m", "probegate", "run", "--harness", "fc,react", "--tasks", ",".join(TASKS),
         "--store", store, "--output-dir", str(out), "--run-id", "smoke", "--task-timeout", "240"],
        capture_output=True, text=True, timeout=1200, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "smoke-fc" in result.stdout and "smoke-react" in result.stdout
    # no --compat: the embedded server's own shims, said once and recorded on the run
    assert f"shims for the embedded server: {','.join(embedded_shims(None))}" in result.stderr
    engine = open_store(store)
    for run_id in ("smoke-fc", "smoke-react"):
        folder = out / run_id
        assert (folder / "report.html").stat().st_size > 10_000
        summary = json.loads((folder / "summary.json").read_text())
        assert summary["headline"]["tasks"] == 3 and summary["run"]["harness"] == run_id.split("-")[1]
        with Session(engine) as session:
            run = session.get(Run, run_id)
            exchanges = session.exec(select(Exchange).where(Exchange.run_id == run_id)).all()
        assert run is not None and run.status == "done" and run.model == "smollm2-135m-instruct-q4_1"
        assert run.params["compat"] == list(embedded_shims(None)) and run.params["task_subset"] is None
        assert {e.task_id for e in exchanges} == set(TASKS)
        for task in TASKS:
            trajectory = reconstruct(engine, run_id, task, 0)
            assert trajectory.usage.model_calls >= 1, (run_id, task)
            assert trajectory.steps, (run_id, task)
    engine.dispose()
