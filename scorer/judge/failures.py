"""Failure attribution: deterministic rules, each naming itself and its evidence. Pure.

Every failed attempt gets one or more labels (docs/metrics.md §9). Rules read only
the trajectory and the scoring facts; each :class:`Attribution` names the rule, the
step (or exchange) that triggered it, and a line of evidence. Labels come out in
precedence order, so the first is the primary one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from probegate.scorer.judge.answer import Check, carries, trap_text
from probegate.scorer.judge.claims import find_claim
from probegate.scorer.judge.facts import Facts
from probegate.scorer.judge.labels import LABELS, Attribution, Label, Stage
from probegate.scorer.judge.loops import duplicates
from probegate.scorer.judge.matching import compare_args
from probegate.scorer.judge.normalize import text
from probegate.scorer.judge.wire_rules import (
    dropped_tool_results,
    format_problems,
    ignored_tools,
    offending_field,
    truncation,
    wire_failures,
)


def _last_step(facts: Facts) -> int | None:
    main = [s for s in facts.trajectory.steps if s.thread == 0]
    return main[-1].step_id if main else None


def _fake(facts: Facts) -> list[Attribution]:
    out: list[Attribution] = []
    answer = facts.trajectory.final_answer or ""
    ran_ok = {c.tool for c in facts.calls if c.status == "ok"}
    claim = find_claim(answer)
    unmet = sorted(facts.side_effect_tools - ran_ok)
    if claim and (unmet or not ran_ok):
        missing = f"{', '.join(unmet)} never ran successfully" if unmet else "no call ran successfully"
        out.append(Attribution("fake_completion", "fake_completion.claimed_side_effect", f"the answer says {claim!r} but {missing}", _last_step(facts)))
    hedge = _hedge(facts)
    if hedge is not None:
        out.append(Attribution("fake_completion", "fake_completion.hedged_answer", hedge.evidence, _last_step(facts)))
    expected = facts.task.expected_answer is not None
    if expected and not facts.alignment.matched and facts.answer_ok and answer.strip():
        out.append(Attribution("fake_completion", "fake_completion.unsupported_answer", "the answer passes the answer checks but no expected action ran", _last_step(facts)))
    return out


def _loops(facts: Facts) -> list[Attribution]:
    out: list[Attribution] = []
    loop = facts.trajectory.loop
    if loop is not None:
        step = facts.step_of(loop.call_indexes[-1])
        note = f"{loop.tool} called with the same arguments {len(loop.call_indexes)} times in a row"
        out.append(Attribution("retry_loop", f"retry_loop.{loop.rule}", note, step))
    looped = set(loop.call_indexes) if loop else set()
    repeats = duplicates(facts.calls)
    for index in facts.alignment.extra:
        if index in repeats and index not in looped:
            note = f"call {index} repeats call {repeats[index]} ({_tool(facts, index)})"
            out.append(Attribution("retry_loop", "retry_loop.duplicate_call", note, facts.step_of(index)))
    if facts.trajectory.max_steps_hit:
        out.append(Attribution("retry_loop", "retry_loop.max_steps", "the step budget ran out while the agent was still calling tools", _last_step(facts)))
    return out


def _tool(facts: Facts, index: int) -> str:
    return next((c.tool for c in facts.calls if c.index == index), "?")


def _intent(facts: Facts) -> list[Attribution]:
    out: list[Attribution] = []
    a, expected = facts.alignment, facts.task.expected_actions
    if facts.calls and not any(c.tool in facts.expected_tools for c in facts.calls):
        called = sorted({c.tool for c in facts.calls})
        out.append(Attribution("intent_miss", "intent_miss.no_expected_tool", f"called {', '.join(called)}; the task needs {', '.join(sorted(facts.expected_tools))}", facts.step_of(facts.calls[0].index)))
    for e, index in a.wrong_tool:
        note = f"called {_tool(facts, index)} where {expected[e].tool} was needed"
        out.append(Attribution("intent_miss", "intent_miss.wrong_tool", note, facts.step_of(index)))
    repeats = duplicates(facts.calls)
    for index in a.extra:
        if index not in repeats:
            out.append(Attribution("intent_miss", "intent_miss.extra_call", f"call {index} ({_tool(facts, index)}) is not part of the task", facts.step_of(index)))
    answered = bool((facts.trajectory.final_answer or "").strip())
    if a.complete and a.clean and facts.verify_ok and answered and not facts.answer_ok and not _trap_in_answer(facts) and not _hedge(facts):
        failed = "; ".join(c.evidence for c in facts.answer_checks if not c.ok)
        out.append(Attribution("intent_miss", "intent_miss.answer_mismatch", f"the answer fails its checks: {failed}", _last_step(facts)))
    return out


def _trap_text(facts: Facts) -> str | None:
    return trap_text(facts.task.trap.value)


def _trap_in_answer(facts: Facts) -> bool:
    trap = _trap_text(facts)
    return bool(trap and carries(facts.trajectory.final_answer or "", trap))


def _hedge(facts: Facts) -> Check | None:
    return next((c for c in facts.answer_checks if c.name == "answer.hedge" and not c.ok), None)


def _params(facts: Facts) -> list[Attribution]:
    out: list[Attribution] = []
    expected = facts.task.expected_actions
    calls = {c.index: c for c in facts.calls}
    for e, index in facts.alignment.wrong_args:
        call = calls[index]
        if call.status == "blocked":
            detail = f"blocked by the probe (missing: {list(call.missing)}, invalid: {dict(call.invalid)})"
        else:
            diffs = compare_args(expected[e].args, call.args, expected[e].match, call.tool, expected[e].free)
            detail = "; ".join(f"{d.key} {d.reason} (expected {d.expected!r}, got {d.actual!r})" for d in diffs)
        out.append(Attribution("param_error", "param_error.wrong_args", f"{call.tool}: {detail}", facts.step_of(index)))
    trap = _trap_text(facts)
    if trap:
        for call in facts.calls:
            values = json.dumps(call.args or {}, ensure_ascii=False, default=str)
            if trap in text(values):
                out.append(Attribution("param_error", "param_error.trap_value", f"{call.tool} was called with the trap value {facts.task.trap.value!r}", facts.step_of(call.index)))
                break
        if _trap_in_answer(facts):
            out.append(Attribution("param_error", "param_error.trap_value", f"the answer carries the trap value {facts.task.trap.value!r}", _last_step(facts)))
    if facts.alignment.complete and not facts.verify_ok:
        failed = "; ".join(f"{c.name}: {c.evidence}" for c in facts.verify_checks if not c.ok)
        out.append(Attribution("param_error", "param_error.verify_failed", f"every action matched but the world says otherwise: {failed}", _last_step(facts)))
    return out


def _premature(facts: Facts) -> list[Attribution]:
    if facts.trajectory.max_steps_hit:
        return []
    a = facts.alignment
    if not a.complete:
        if not facts.calls:
            return [Attribution("premature_finish", "premature_finish.no_action", "the attempt ended without a single tool call", _last_step(facts))]
        done = {e for e, _ in a.matched} | set(a.optional_missing)
        left = sorted({e.tool for i, e in enumerate(facts.task.expected_actions) if i not in done})
        what = f"still missing: {', '.join(left)}" if left else "the chain is incomplete"
        return [Attribution("premature_finish", "premature_finish.stopped_early", f"the attempt ended with {len(a.matched)} of {a.n_expected} actions done; {what}", _last_step(facts))]
    if not (facts.trajectory.final_answer or "").strip():
        return [Attribution("premature_finish", "premature_finish.no_answer", "every action ran but there is no final answer", _last_step(facts))]
    return []


Rule = Callable[[Facts], list[Attribution]]

RULES: tuple[Rule, ...] = (
    wire_failures,
    ignored_tools,
    dropped_tool_results,
    truncation,
    format_problems,
    _fake,
    _loops,
    _intent,
    _params,
    _premature,
)


def _narrowed(facts: Facts, keep: Callable[[int], bool]) -> Facts:
    """``facts`` with the trajectory's wire evidence narrowed to the exchanges ``keep`` selects."""
    exchanges = [ex for ex in facts.trajectory.exchanges if keep(ex.seq)]
    return replace(facts, trajectory=facts.trajectory.model_copy(update={"exchanges": exchanges}))


def sightings(facts: Facts, rule: Rule, seq: int) -> list[Attribution]:
    """The ``interop`` attributions ``rule`` gives exchange ``seq``, judged on that exchange
    alone and on the exchanges up to it (for rules that compare with earlier requests)."""
    views = (_narrowed(facts, lambda s: s == seq), _narrowed(facts, lambda s: s <= seq))
    first: dict[str, Attribution] = {}
    for view in views:
        for a in rule(view):
            if a.label == "interop" and a.exchange_seq == seq:
                first.setdefault(a.rule, a)
    return list(first.values())


def blocked_attempt(facts: Facts, rule: Rule, found: Attribution) -> bool:
    """Whether an ``interop`` fault blocked the attempt (docs/metrics.md §7).

    It did when its exchange is the attempt's last model exchange, or when every later
    exchange shows the same fault (the same rule fires on it). A fault the agent got
    past (a later exchange that went through) never makes an attempt ``interop``.
    Generic over every ``interop.*`` rule: it only reads ``exchange_seq`` and ``rule``.
    """
    if found.exchange_seq is None:
        return True
    later = sorted({ex.seq for ex in facts.trajectory.exchanges if ex.seq > found.exchange_seq})
    return all(any(a.rule == found.rule for a in sightings(facts, rule, seq)) for seq in later)


def _interop(facts: Facts, rule: Rule) -> list[Attribution]:
    """The ``interop`` faults ``rule`` sees that blocked the attempt, the first per rule name.

    The rule is asked about each exchange (:func:`sightings`), so a rule that reports
    only its first sighting still shows the one that blocked the attempt.
    """
    whole = [a for a in rule(facts) if a.label == "interop"]
    if not whole:
        return []
    loose = [a for a in whole if a.exchange_seq is None]
    seen: set[str] = set()
    out: list[Attribution] = []
    for seq in sorted({ex.seq for ex in facts.trajectory.exchanges}):
        for a in sightings(facts, rule, seq):
            if a.rule not in seen and blocked_attempt(facts, rule, a):
                seen.add(a.rule)
                out.append(a)
    return loose + out


def attribute(facts: Facts) -> list[Attribution]:
    """Every attribution for a failed attempt, in label precedence order (``[]`` if it passed).

    An ``interop`` attribution is kept only where the fault blocked the attempt
    (:func:`blocked_attempt`); every rule that emits ``interop`` falls under this.
    """
    if facts.passed:
        return []
    found: list[Attribution] = []
    for rule in RULES:
        found += [a for a in rule(facts) if a.label != "interop"]
        found += _interop(facts, rule)
    return sorted(found, key=lambda a: LABELS.index(a.label))


def stage(facts: Facts) -> Stage | None:
    """Where the attempt died (``None`` if it passed; docs/metrics.md §9)."""
    if facts.passed:
        return None
    a = facts.alignment
    if not a.matched:
        return "first_action"
    if not a.complete or not a.clean:
        return "mid_chain"
    return "final_answer"


__all__ = ["LABELS", "RULES", "Attribution", "Label", "Rule", "Stage", "attribute", "blocked_attempt", "offending_field", "sightings", "stage"]
