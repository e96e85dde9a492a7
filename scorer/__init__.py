"""The scorer: captures + probe log -> trajectories -> metrics -> attribution -> reports.

It reads the capture store only and never talks to the network, so any stored run
can be rescored at any time. The pure core (parsers, reconstruction, matching,
metrics, attribution) does no I/O; :mod:`scorer.load` reads the store and
:mod:`scorer.outputs` writes files. Definitions: docs/metrics.md.
"""

from scorer.answer import Check, check_answer
from scorer.api import reconstruct, resolve_task_set, score_run
from scorer.attribution import LABELS, Attribution, attribute
from scorer.compare import RunDiff, compare_table, diff_runs
from scorer.matching import ActualCall, Alignment, align, compare_args, fold_retries
from scorer.metrics import AttemptResult, pass_hat_k
from scorer.mutations import MUTATIONS, Plan, PlannedCall, mutations, reference_plan
from scorer.outputs import write_outputs
from scorer.rebuild import build_trajectory
from scorer.rows import AttemptRows, RunInfo
from scorer.score import Score, TaskScorer, task_scorer
from scorer.scripted import ScriptedAgent
from scorer.selftest import SelftestReport, run_selftest
from scorer.summary import RunScore, summarize
from scorer.trajectory import Step, Trajectory
from scorer.turns import ParsedTurn, parse_completion, parse_text

__all__ = [
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
    "mutations",
    "parse_completion",
    "parse_text",
    "pass_hat_k",
    "reconstruct",
    "reference_plan",
    "resolve_task_set",
    "run_selftest",
    "score_run",
    "summarize",
    "task_scorer",
    "write_outputs",
]
