"""Every package's public front is pinned: its ``__all__`` is exactly the public names it
defines or re-exports (submodules left aside), as httpx's ``test_exported_members``.

Changing a package's public names is an API change: this test must be edited with it.
"""

from __future__ import annotations

import importlib
import types

import pytest

FRONTS = {
    "probegate.gateway": ["GatewayApp", "GatewayConfig", "create_gateway"],
    "probegate.harnesses": [
        "HARNESSES", "STOP_REASONS", "Harness", "HarnessContext", "HarnessResult", "Observation", "ProbesError",
        "StopReason", "SubAgentRunner", "ToolsClient", "attempt_urls", "get_harness", "harness_names",
        "reset_attempt",
    ],
    "probegate.runner": [
        "AttemptOutcome", "AttemptSettings", "RunConfig", "RunEvents", "RunReport", "execute", "run_attempt",
    ],
    "probegate.scorer": [
        "DEFAULT_MAX_INTEROP", "LABELS", "MUTATIONS", "ActualCall", "Alignment", "AttemptResult", "AttemptRows", "Attribution", "Check",
        "ParsedTurn", "Plan", "PlannedCall", "RunDiff", "RunInfo", "RunScore", "Score", "ScriptedAgent",
        "SelftestReport", "Step", "TaskScorer", "Trajectory", "align", "attribute", "build_trajectory",
        "check_answer", "compare_args", "compare_table", "diff_runs", "fold_retries", "invalid_line", "mcp_proxy_calls", "mutations",
        "parse_completion", "parse_text", "pass_hat_k", "reconstruct", "reference_plan", "resolve_task_set",
        "run_selftest", "score_run", "summarize", "summary_validity", "task_scorer", "validity", "write_outputs",
    ],
}


def public_names(module: types.ModuleType) -> list[str]:
    """The names a reader of the module sees: not private, not a submodule, not ``annotations``."""
    return sorted(
        name for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType) and name != "annotations"
    )


PACKAGES = [
    "probegate.gateway", "probegate.harnesses", "probegate.probes", "probegate.runner", "probegate.scorer",
    "probegate.store", "probegate.tasks", "probegate.testing", "probegate.wire",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_the_public_front(name: str) -> None:
    module = importlib.import_module(name)
    assert sorted(module.__all__) == public_names(module)
    assert len(set(module.__all__)) == len(module.__all__)


@pytest.mark.parametrize("name", sorted(FRONTS))
def test_pinned_fronts(name: str) -> None:
    assert sorted(importlib.import_module(name).__all__) == sorted(FRONTS[name])
