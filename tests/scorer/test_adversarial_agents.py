"""Gaming agents as a permanent check (issue 17): each runs through the real
``probegate run --harness 'cmd:...'`` over the default task set, against a scripted model
server on loopback that refuses every valid request and rejects malformed ones. None may
pass a task or reach the honest baseline's mean score; the poisoner's run is invalid.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from probegate.cli import app
from probegate.runner.audit import judge_audit
from probegate.scorer.selftest.agents import AGENTS, GAMING, HONEST, AuditAgent
from probegate.tasks.loader import load_task_set
from probegate.testing import ScriptedUpstream, do_nothing_model, serve_in_thread

DEFAULT = load_task_set("default").path
SMALL = str(Path(__file__).parent / "taskset")


@pytest.fixture(scope="module")
def model() -> Iterator[str]:
    server = serve_in_thread(ScriptedUpstream(handler=do_nothing_model))
    yield server.url
    server.stop()


class Runs:
    """Each audit agent's run over the default set, made on first use: (the CLI's result, summary.json)."""

    def __init__(self, model: str, where: Path) -> None:
        self.model, self.where = model, where
        self.done: dict[str, tuple[subprocess.CompletedProcess[str], dict[str, Any]]] = {}

    def __getitem__(self, name: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
        if name not in self.done:
            agent = next(a for a in AGENTS if a.name == name)
            run_id = f"agent-{name.replace('_', '-')}"
            done = subprocess.run(
                [sys.executable, "-m", "probegate", "run", "--task-set", DEFAULT, "--harness", agent.harness(DEFAULT),
                 "--model", "do-nothing", "--model-endpoint", self.model, "--store", f"sqlite:///{self.where / 'store.db'}",
                 "--run-id", run_id, "--tasks", "all", "--concurrency", "2", "--task-timeout", "120", "--output-dir", str(self.where / "runs")],
                capture_output=True, text=True, cwd=self.where, timeout=500, check=False,
            )
            assert done.returncode == 0, (name, done.stderr[-2000:])
            self.done[name] = (done, json.loads((self.where / "runs" / run_id / "summary.json").read_text()))
        return self.done[name]


@pytest.fixture(scope="module")
def runs(model: str, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """The audit agents' runs (one ``probegate run`` of 36 attempts each, made when a test first needs it)."""
    return Runs(model, tmp_path_factory.mktemp("agents"))


@pytest.mark.timeout(600)
def test_the_honest_baseline_does_real_work(runs) -> None:  # type: ignore[no-untyped-def]
    _, summary = runs[HONEST.name]
    assert summary["headline"]["attempts"] == 36 and summary["validity"]["valid"]
    assert summary["headline"]["passed"] > 0 and summary["overall"]["score_mean"] > 0.2


@pytest.mark.timeout(600)
@pytest.mark.parametrize("agent", GAMING, ids=[a.name for a in GAMING])
def test_a_gaming_agent_reaches_nothing_and_scores_below_the_honest_baseline(runs, agent: AuditAgent) -> None:  # type: ignore[no-untyped-def]
    done, summary = runs[agent.name]
    honest = runs[HONEST.name][1]["overall"]["score_mean"]
    head = summary["headline"]
    assert head["attempts"] == 36, "every attempt is in the denominator"
    assert head["passed"] == 0 and head["reach"] == 0.0
    assert all(tier["reach"] == 0.0 for tier in summary["tiers"].values())
    assert summary["overall"]["score_mean"] < honest
    if agent.name in ("do_nothing", "claim_only", "answer_spam", "wrong_target"):
        assert summary["overall"]["score_mean"] == 0.0  # no call matched: a wrong target is a wrong call (match: any was not)
    if agent.name == "shotgun":
        assert summary["overall"]["score_mean"] < honest / 2  # matched / (n + 1) paid it as much as honest work
    assert summary["overall"]["by_dimension"]["info"] == 0.0 or agent.name in ("shotgun",), "info needs observed values"
    if agent.poisons:
        assert summary["validity"]["valid"] is False and head["interop_attempts"] == 36
        assert done.stdout.splitlines()[0].startswith(f"INVALID ENVIRONMENT: run agent-{agent.name}:")
        assert summary["interop"]["fixes"] == {"interop.upstream_rejected": "null-content"}
    else:
        assert summary["validity"]["valid"] is True and "INVALID" not in done.stdout


@pytest.mark.timeout(600)
def test_the_shotgun_pays_for_its_extra_calls(runs) -> None:  # type: ignore[no-untyped-def]
    summary = runs["shotgun"][1]
    assert summary["overall"]["misuse"]["extra"] + summary["overall"]["misuse"]["wrong_args"] > 36 * 3
    assert summary["overall"]["accuracy"] < runs[HONEST.name][1]["overall"]["accuracy"] / 2


JUDGED = [
    ("a gaming agent that passed", GAMING[0], {"headline": {"passed": 1, "attempts": 36}, "overall": {"score_mean": 0.01}},
     "passed 1 of 36 attempts"),
    ("a gaming agent at the baseline's score", GAMING[3], {"headline": {"passed": 0}, "overall": {"score_mean": 0.5}},
     "is not below the honest baseline's 0.500"),
    ("a poisoner whose run stayed valid", GAMING[5], {"headline": {"passed": 0}, "overall": {"score_mean": 0.1}, "validity": {"valid": True}},
     "did not mark the run invalid"),
    ("a gaming agent that behaved", GAMING[1], {"headline": {"passed": 0}, "overall": {"score_mean": 0.0}}, None),
]


@pytest.mark.parametrize(("case", "agent", "summary", "problem"), JUDGED, ids=[c[0] for c in JUDGED])
def test_judge_audit(case: str, agent: AuditAgent, summary: dict[str, Any], problem: str | None) -> None:
    honest = {"headline": {"passed": 3}, "overall": {"score_mean": 0.5}, "validity": {"valid": True}}
    verdicts = judge_audit([(HONEST, "h", honest), (agent, "g", summary)])
    assert verdicts[0].ok
    found = verdicts[1].problems
    assert (problem is None and not found) or (problem is not None and any(problem in p for p in found)), (case, found)


def test_a_baseline_that_scores_nothing_fails_the_audit() -> None:
    verdicts = judge_audit([(HONEST, "h", {"headline": {"passed": 0}, "overall": {"score_mean": 0.0}})])
    assert not verdicts[0].ok


@pytest.mark.timeout(600)
def test_selftest_agents_audits_a_task_set() -> None:
    result = CliRunner().invoke(app, ["selftest", "--agents", "--task-set", SMALL, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["ok"] is True and [a["agent"] for a in data["agents"]] == [a.name for a in AGENTS]
    poisoner = next(a for a in data["agents"] if a["agent"] == "poisoner")
    assert poisoner["valid"] is False and poisoner["passed"] == 0
