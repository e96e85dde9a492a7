"""The scorer's public surface is pinned."""

from __future__ import annotations

import scorer

EXPECTED = [
    "LABELS", "MUTATIONS", "ActualCall", "Alignment", "AttemptResult", "AttemptRows", "Attribution", "Check",
    "ParsedTurn", "Plan", "PlannedCall", "RunDiff", "RunInfo", "RunScore", "Score", "ScriptedAgent",
    "SelftestReport", "Step", "TaskScorer", "Trajectory", "align", "attribute", "build_trajectory",
    "check_answer", "compare_args", "compare_table", "diff_runs", "fold_retries", "mutations",
    "parse_completion", "parse_text", "pass_hat_k", "reconstruct", "reference_plan", "resolve_task_set",
    "run_selftest", "score_run", "summarize", "task_scorer", "write_outputs",
]


def test_exported_members() -> None:
    assert scorer.__all__ == EXPECTED
    for name in EXPECTED:
        assert getattr(scorer, name) is not None
    assert callable(scorer.reconstruct) and scorer.reconstruct.__module__ == "scorer.api"
