"""Terminal renderings of scorer results."""

from __future__ import annotations

import pytest
from rich.console import Console

from probegate.scorer.report.console import cell, pct, trace_footer, trace_table
from probegate.scorer.trajectory import LoopInfo, ProbeCallRecord, Step, Trajectory


@pytest.mark.parametrize(("value", "percent", "text"), [(None, False, "–"), (0.5, True, "50.0 %"), (1234.56, False, "1,234.6"), (3, False, "3")])
def test_cells(value: object, percent: bool, text: str) -> None:
    assert cell(value, percent) == text
    assert pct(None) == "–"


def test_trace_rendering_shows_steps_probes_and_flags() -> None:
    t = Trajectory(
        run_id="r", task_id="t",
        steps=[Step(step_id=0, thread=0, exchange_seq=0, tool_name="get_weather", tool_args={"city": "Oslo"}, probe_call=0, observation={"c": 1})],
        probe_calls=[ProbeCallRecord(index=0, seq=1, tool="get_weather", step_id=0, joined_by="call"), ProbeCallRecord(index=1, seq=2, tool="x", status="error")],
        loop=LoopInfo(rule="repeat_ok", tool="get_weather", call_indexes=[0, 1]), loop_detected=True,
    )
    console = Console(record=True, width=160)
    console.print(trace_table(t))
    text = console.export_text()
    assert 'get_weather({"city": "Oslo"})' in text and "#0 ok" in text and '{"c": 1}' in text
    assert trace_footer(t) == ["probe call #1 x error via rest (no step claimed it)", "final answer: None loop (repeat_ok)"]
