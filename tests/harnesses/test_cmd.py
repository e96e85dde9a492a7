"""The cmd harness's environment (its end-to-end test is in test_harnesses_e2e.py)."""

from __future__ import annotations

from probegate.harnesses.base import HarnessContext
from probegate.harnesses.cmd import CmdHarness, agent_environment


def test_agent_environment() -> None:
    ctx = HarnessContext("http://g/r/run/t/1/v1", "http://g/r/run/t/1/tools", "m", "Do it", api_key="k",
                         run_id="run", task_id="t", attempt=1, max_steps=4, temperature=0.2)
    env = agent_environment(ctx, {"PATH": "/bin", "OPENAI_BASE_URL": "http://elsewhere"})
    assert env == {
        "PATH": "/bin",
        "OPENAI_BASE_URL": "http://g/r/run/t/1/v1",
        "OPENAI_API_KEY": "k",
        "OPENAI_MODEL": "m",
        "PROBEGATE_MODEL": "m",
        "PROBEGATE_TOOLS_URL": "http://g/r/run/t/1/tools",
        "PROBEGATE_MCP_URL": "http://g/r/run/t/1/mcp",
        "PROBEGATE_TASK_PROMPT": "Do it",
        "PROBEGATE_SYSTEM": "",
        "PROBEGATE_RUN": "run",
        "PROBEGATE_TASK": "t",
        "PROBEGATE_ATTEMPT": "1",
        "PROBEGATE_MAX_STEPS": "4",
        "PROBEGATE_TEMPERATURE": "0.2",
    }


def test_exit_status_timeout_and_silence() -> None:
    ctx = HarnessContext("http://g/v1", "http://g/tools", "m", "p", timeout=30)
    failing = CmdHarness("python3 -c 'import sys; print(\"partial\"); sys.exit(3)'").run(ctx)
    assert (failing.stop, failing.final_answer) == ("error", "partial")
    assert failing.error is not None and failing.error.startswith("the command exited with status 3")
    silent = CmdHarness("true").run(ctx)
    assert (silent.stop, silent.error) == ("error", "the command printed no answer on stdout")
    missing = CmdHarness("/no/such/agent").run(ctx)
    assert missing.stop == "error" and "cannot start '/no/such/agent'" in (missing.error or "")
    slow = CmdHarness("sleep 30").run(HarnessContext("http://g/v1", "http://g/tools", "m", "p", timeout=0.3))
    assert slow.stop == "timeout"


def test_a_users_agent_end_to_end(rig, task_set) -> None:
    import shlex
    import sys
    from pathlib import Path

    from probegate.testing import Turn

    rig.script.push(
        Turn(tool_calls=[{"id": "c1", "name": "search_products", "arguments": {"query": "office chair"}}]),
        Turn(tool_calls=[{"id": "c2", "name": "check_stock", "arguments": {"sku": "SKU-1001"}}]),
        Turn("25 chairs."),
    )
    agent = Path(__file__).resolve().parents[2] / "examples" / "openai_agent.py"  # the README example
    harness = CmdHarness(f"{shlex.quote(sys.executable)} {shlex.quote(str(agent))}")
    outcome = rig.attempt(harness, task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer) == ("answered", "25 chairs.")
    assert [(e.task_id, e.status_code) for e in rig.exchanges()] == [("stock-total", 200)] * 3
    assert rig.script.requests[0].headers["authorization"] == "Bearer probegate"
    assert [(c.tool, c.status) for c in rig.probe_calls()] == [("search_products", "ok"), ("check_stock", "ok")]
