"""Replaying a recorded run of every built-in harness style reproduces its trajectories
and its summary.json: the model is answered from the captures, the probes run live."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from probegate.runner.execute import RunConfig, execute
from probegate.gateway.app import GatewayConfig
from probegate.gateway.replay import ReplaySettings
from probegate.runner.compose import build_app
from probegate.store import CaptureWriter, open_store
from probegate.testing import ScriptedUpstream, Turn, serve_in_thread

TASKS = str(Path(__file__).parent / "tasks")
SEARCH = {"id": "c1", "name": "search_products", "arguments": {"query": "office chair"}}
STOCK = {"id": "c2", "name": "check_stock", "arguments": {"sku": "SKU-1001"}}
CALLS = [Turn(tool_calls=[SEARCH]), Turn(tool_calls=[STOCK]), Turn("We have 25 in stock.")]
SCRIPTS: dict[str, list[Turn]] = {
    "fc": CALLS,
    "langchain": CALLS,
    "crewai": CALLS,
    "openai-agents": CALLS,
    "openai-agents-chat": CALLS,
    "react": [
        Turn("Thought: find the SKU\nAction: search_products\nAction Input: {\"query\": \"office chair\"}"),
        Turn("Thought: read its stock\nAction: check_stock\nAction Input: {\"sku\": \"SKU-1001\"}"),
        Turn("Thought: done\nFinal Answer: 25 chairs in stock."),
    ],
    "plan": [Turn("1. Find the chair's SKU\n2. Check its stock"), *CALLS],
    "code": [Turn("```python\nsku = search_products(query='office chair')['products'][0]['sku']\n"
                  "print(check_stock(sku=sku)['in_stock'])\n```")],
}
FRAMEWORKS = {"langchain", "crewai", "openai-agents", "openai-agents-chat"}
#: CrewAI 1.15 warns about itself on import and use (as in test_crewai_agent.py)
CREWAI_MARKS = [pytest.mark.frameworks, pytest.mark.filterwarnings("ignore::ImportWarning"),
                pytest.mark.filterwarnings("ignore::DeprecationWarning")]
VOLATILE = {"id", "latency_ms", "at", "started_at", "ended_at", "ttft_ms", "overhead_ms", "exchange_id"}


def _stable(value: Any) -> Any:
    """A trace without ids and measured times (they differ between stores and runs)."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _config(style: str, store: str, out: Path, **where: str) -> RunConfig:
    return RunConfig(task_set=TASKS, harness=style, model="test-model", store=store, task_ids=("stock-total",),
                     run_id="recorded-run", output_dir=out, **where)


@pytest.mark.parametrize(
    "style",
    [pytest.param(s, marks=CREWAI_MARKS if s == "crewai" else pytest.mark.frameworks) if s in FRAMEWORKS else s
     for s in SCRIPTS],
)
def test_replay_reproduces_trajectories_and_summary(style: str, tmp_path: Path) -> None:
    if style == "crewai":
        pytest.importorskip("crewai")
    model = serve_in_thread(ScriptedUpstream(list(SCRIPTS[style])))
    recorded = f"sqlite:///{tmp_path / 'recorded.db'}"
    try:
        first = execute(_config(style, recorded, tmp_path / "first", model_endpoint=model.url))
    finally:
        model.stop()
    assert [o.passed for o in first.outcomes] == [True], first.outcomes

    replayed_engine = open_store(f"sqlite:///{tmp_path / 'replayed.db'}")
    writer = CaptureWriter(replayed_engine)
    app = build_app(GatewayConfig(upstream="", replay=ReplaySettings("recorded-run"), replay_store=recorded),
                    engine=replayed_engine, writer=writer)
    server = serve_in_thread(app)
    try:
        second = execute(_config(style, f"sqlite:///{tmp_path / 'replayed.db'}", tmp_path / "second",
                                 gateway=server.url))
    finally:
        server.stop()
        writer.close()
    assert [o.result.final_answer for o in second.outcomes] == [o.result.final_answer for o in first.outcomes]

    a, b = tmp_path / "first" / "recorded-run", tmp_path / "second" / "recorded-run"
    assert (a / "summary.json").read_bytes() == (b / "summary.json").read_bytes()
    trace_a = json.loads((a / "traces" / "stock-total-0.json").read_text())
    trace_b = json.loads((b / "traces" / "stock-total-0.json").read_text())
    assert _stable(trace_a) == _stable(trace_b)
    assert trace_a["trajectory"]["steps"], "the trajectory has steps to compare"
