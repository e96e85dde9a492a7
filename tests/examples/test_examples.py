"""The README's examples run as written under the cmd: harness (scripted model)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from probegate.runner.execute import RunConfig, execute
from probegate.testing import ScriptedUpstream, Turn, serve_in_thread

ROOT = Path(__file__).resolve().parents[2]
TASKS = str(ROOT / "tests" / "harnesses" / "tasks")
SCRIPT = [
    Turn(tool_calls=[{"id": "c1", "name": "search_products", "arguments": {"query": "office chair"}}]),
    Turn(tool_calls=[{"id": "c2", "name": "check_stock", "arguments": {"sku": "SKU-1001"}}]),
    Turn("We have 25 in stock."),
]


@pytest.mark.parametrize(
    "example", ["openai_agent.py", pytest.param("langchain_agent.py", marks=pytest.mark.frameworks)]
)
def test_example_agent_under_cmd(example: str, tmp_path: Path) -> None:
    model = serve_in_thread(ScriptedUpstream(list(SCRIPT)))
    try:
        report = execute(RunConfig(
            task_set=TASKS, harness=f"cmd:{sys.executable} {ROOT / 'examples' / example}", model="test-model",
            model_endpoint=model.url, store=f"sqlite:///{tmp_path / 's.db'}", task_ids=("stock-total",),
            output_dir=tmp_path / "runs"))
    finally:
        model.stop()
    [outcome] = report.outcomes
    assert (outcome.result.stop, outcome.passed) == ("answered", True), outcome
    assert "25" in (outcome.result.final_answer or "")
