"""The scorer: captures + probe log -> trajectories -> metrics -> attribution -> reports.

It reads the capture store only and never talks to the network, so any stored run
can be rescored at any time. The pure core (parsers, reconstruction, matching,
metrics, attribution) does no I/O; :mod:`probegate.scorer.rebuild.load` reads the store and
:mod:`probegate.scorer.report.outputs` writes files. Definitions: docs/metrics.md.
"""

from probegate.scorer.judge.answer import Check, check_answer
from probegate.scorer.pipeline import mcp_proxy_calls, reconstruct, resolve_task_set, score_run
from probegate.scorer.judge.failures import LABELS, Attribution, attribute
from probegate.scorer.report.compare import RunDiff, compare_table, diff_runs
from probegate.scorer.judge.matching import ActualCall, Alignment, align, compare_args, fold_retries
from probegate.scorer.report.metrics import AttemptResult, pass_hat_k
from probegate.scorer.selftest.mutations import MUTATIONS, Plan, PlannedCall, mutations, reference_plan
from probegate.scorer.report.outputs import write_outputs
from probegate.scorer.rebuild.build import build_trajectory
from probegate.scorer.rebuild.rows import AttemptRows, RunInfo
from probegate.scorer.judge.task_score import Score, TaskScorer, task_scorer
from probegate.scorer.selftest.scripted import ScriptedAgent
from probegate.scorer.selftest.suite import SelftestReport, run_selftest
from probegate.scorer.report.summary import RunScore, summarize
from probegate.scorer.report.validity import DEFAULT_MAX_INTEROP, invalid_line, summary_validity, validity
from probegate.scorer.trajectory import Step, Trajectory
from probegate.scorer.rebuild.turns import ParsedTurn, parse_completion, parse_text

__all__ = [
    "DEFAULT_MAX_INTEROP",
    "LABELS",
    "MUTATIONS",
    "ActualCall",
    "Alignment",
    "AttemptResult",
    "AttemptRows",
    "Attribution",
    "Check",
    "ParsedTurn",
    "Plan",
    "PlannedCall",
    "RunDiff",
    "RunInfo",
    "RunScore",
    "Score",
    "ScriptedAgent",
    "SelftestReport",
    "Step",
    "TaskScorer",
    "Trajectory",
    "align",
    "attribute",
    "build_trajectory",
    "check_answer",
    "compare_args",
    "compare_table",
    "diff_runs",
    "fold_retries",
    "invalid_line",
    "mutations",
    "parse_completion",
    "parse_text",
    "pass_hat_k",
    "reconstruct",
    "reference_plan",
    "resolve_task_set",
    "run_selftest",
    "mcp_proxy_calls",
    "score_run",
    "summarize",
    "summary_validity",
    "task_scorer",
    "validity",
    "write_outputs",
]
