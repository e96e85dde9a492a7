"""Failure attribution (docs/metrics.md §9): every rule fires on its own evidence and names
its step. Attempts are played through the real probes or built from wire rows."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from probegate.scorer.judge.failures import LABELS, offending_field
from probegate.scorer.rebuild.build import build_trajectory
from probegate.scorer.rebuild.rows import AttemptRows, RunInfo
from probegate.scorer.judge.task_score import task_scorer
from probegate.scorer.trajectory import Trajectory
from probegate.tasks.loader import Task
from tests.scorer.rowkit import AttemptBuilder, assistant_message, completion, play

score = task_scorer()
FIND = ("find_contact", {"query": "Jonas Becker"})
SEND = ("send_email", {"to": "jonas.becker@globex.example", "subject": "ORD-5002 shipped", "body": "Order ORD-5002 has shipped."})
BERLIN = ("get_weather", {"city": "Berlin"})


def wire(task: Task, build: Callable[[AttemptBuilder], None], run: RunInfo | None = None) -> Trajectory:
    """An attempt made only of exchanges (no probe call ran)."""
    b = AttemptBuilder(task=task.id)
    build(b)
    rows = AttemptRows(b.run, task.id, 0, exchanges=tuple(b.rows))
    return build_trajectory(rows, run or RunInfo(b.run), tools=task.tools, max_steps=task.max_steps)


USER = [{"role": "user", "content": "What is the weather in Berlin?"}]


def _rejected(b: AttemptBuilder) -> None:
    body = {"error": {"message": "[{'type': 'string_type', 'loc': ('body', 'messages', 2, 'content'), 'msg': 'Input should be a valid string'}]"}}
    b.exchange(USER, None, status=500, response_body=body)


def _server_down(b: AttemptBuilder) -> None:
    b.exchange(USER, None, status=503, response_body={"error": "loading model"})


def _route_missing(b: AttemptBuilder) -> None:
    # the Responses API against a server without the route (llama-cpp-python), no shim on
    b.exchange(USER, None, status=404, response_body={"detail": "Not Found"}).path = "/v1/responses"


def _model_missing(b: AttemptBuilder) -> None:
    b.exchange(USER, None, status=404, response_body={"error": "model 'qwen9' not found, try pulling it first"})


def _too_long(b: AttemptBuilder) -> None:
    b.exchange(USER, None, status=400, response_body={"error": {"message": "This model's maximum context length is 4096 tokens"}})


def _tools_ignored(b: AttemptBuilder) -> None:
    # the server counted 12 prompt tokens for a request carrying three tool schemas
    b.exchange(USER, completion("It is sunny in Berlin."), prompt_tokens=12)


def _finish_length(b: AttemptBuilder) -> None:
    b.exchange(USER, completion("It is clou", finish="length"))


def _context_full(b: AttemptBuilder) -> None:
    b.exchange(USER, completion("It is cloudy"), prompt_tokens=2040, completion_tokens=10, request_extra={"options": {"num_ctx": 2048}})


def _dropped(b: AttemptBuilder) -> None:
    b.exchange([{"role": "system", "content": "Always answer in French."}, *USER], completion("Let me check the weather service now."))
    b.exchange([{"role": "assistant", "content": "Let me check the weather service now."}, {"role": "user", "content": "continue"}], completion("cloudy"))


def _unparseable(b: AttemptBuilder) -> None:
    b.exchange(USER, completion(None, [{"id": "a", "name": "get_weather", "arguments": None, "raw": '{"city": "Ber'}]))


def _in_content(b: AttemptBuilder) -> None:
    b.exchange(USER, completion('<tool_call>{"name": "get_weather", "arguments": {"city": "Berlin"}}</tool_call>'))


def _repaired_not_run(b: AttemptBuilder) -> None:
    b.exchange(USER, completion(None, [{"id": "a", "name": "get_weather", "arguments": {"city": "Berlin"}, "raw": "{'city': 'Berlin'}", "repaired": True}]))


def _other_protocol(b: AttemptBuilder) -> None:
    react = 'Action: get_weather\nAction Input: {"city": "Berlin"}'
    b.tools = None
    b.exchange(USER, completion(react))
    b.exchange([*USER, {"role": "assistant", "content": react}, {"role": "user", "content": "Reply with a python code block."}], completion("It is cloudy."))


OBSERVATION = json.dumps({"city": "Berlin", "hourly": [{"hour": h, "sky": "cloudy", "temp_c": 7} for h in range(12)]})
BERLIN_CALL = {"id": "c1", "name": "get_weather", "arguments": {"city": "Berlin"}}


def _round_trip(b: AttemptBuilder, grew: int, result: str = OBSERVATION, status: int = 200) -> None:
    """A tool call, then the request that carries its result; ``grew``: prompt tokens added
    by the second request."""
    b.exchange(USER, completion(None, [BERLIN_CALL]), prompt_tokens=300)
    messages = [*USER, assistant_message(None, [BERLIN_CALL]), {"role": "tool", "tool_call_id": "c1", "content": result}]
    b.exchange(messages, completion("It is cloudy."), prompt_tokens=300 + grew,
               status=status, response_body={"error": "boom"} if status >= 400 else None)


def _round_trip_without_tools(b: AttemptBuilder, grew: int) -> None:
    """As :func:`_round_trip`, but the second request offers no tools (CrewAI's last request)."""
    b.exchange(USER, completion(None, [BERLIN_CALL]), prompt_tokens=300)
    tools, b.tools = b.tools, []
    messages = [*USER, assistant_message(None, [BERLIN_CALL]), {"role": "tool", "tool_call_id": "c1", "content": OBSERVATION}]
    b.exchange(messages, completion("It is cloudy."), prompt_tokens=300 + grew)
    b.tools = tools


def test_a_request_that_drops_the_tool_list_is_not_tool_results_dropped(task_by_id: dict[str, Task]) -> None:
    """The prompt shrinks by the tool list's tokens: no evidence about the tool results."""
    task = task_by_id["weather-berlin"]
    s = score(wire(task, lambda b: _round_trip_without_tools(b, -113)), task)
    assert "interop.tool_results_dropped" not in [a.rule for a in s.attributions]


def _tool_results_dropped(b: AttemptBuilder) -> None:
    _round_trip(b, 12)  # llama-cpp-python's chatml-function-calling: the call's tokens and an empty tool header


WIRE_CASES = [
    # rule, builder, step, evidence fragment
    ("interop.upstream_rejected", _rejected, None, "messages.2.content"),
    ("interop.upstream_error", _server_down, None, "HTTP 503"),
    ("interop.route_missing", _route_missing, None, "HTTP 404 on /v1/responses: the server has no such route"),
    ("interop.upstream_error", _model_missing, None, "model 'qwen9' not found"),
    ("interop.tools_ignored", _tools_ignored, 0, "the tools never reached the model"),
    ("interop.tool_results_dropped", _tool_results_dropped, 1, "from 300 to 312 tokens (+12; at least"),
    ("context_truncation.upstream_rejected", _too_long, None, "maximum context length"),
    ("context_truncation.finish_length", _finish_length, 0, "finish_reason: length"),
    ("context_truncation.context_full", _context_full, 0, "2050 tokens used of a 2048"),
    ("context_truncation.instruction_dropped", _dropped, 1, "Always answer in French"),
    ("format_mismatch.unparseable", _unparseable, 0, "arguments_unparseable"),
    ("format_mismatch.call_in_content", _in_content, 0, "written as text"),
    ("format_mismatch.not_executed", _repaired_not_run, 0, "python_literal"),
    ("format_mismatch.not_executed", _other_protocol, 0, "written as react and the agent went on"),
]


@pytest.mark.parametrize(("rule", "build", "step", "evidence"), WIRE_CASES, ids=[c[0] for c in WIRE_CASES])
def test_wire_rules(task_by_id: dict[str, Task], rule: str, build: Callable[[AttemptBuilder], None], step: int | None, evidence: str) -> None:
    task = task_by_id["weather-berlin"]
    s = score(wire(task, build), task)
    hits = [a for a in s.attributions if a.rule == rule]
    assert hits, [a.rule for a in s.attributions]
    assert hits[0].step_id == step
    assert evidence in hits[0].evidence
    assert hits[0].label == rule.split(".")[0]


DROPPED_CASES = [
    # case, prompt tokens the second request added, tool result, HTTP status, labelled
    ("dropped", 12, OBSERVATION, 200, True),
    ("prompt shrank", -40, OBSERVATION, 200, True),
    ("counted", len(OBSERVATION) // 4 + 20, OBSERVATION, 200, False),
    ("counted at 8 characters a token", len(OBSERVATION) // 8 + 10, OBSERVATION, 200, False),
    ("result too short to tell", 3, '{"ok": true}', 200, False),
    ("the request failed", 12, OBSERVATION, 500, False),
]


@pytest.mark.parametrize(("case", "grew", "result", "status", "labelled"), DROPPED_CASES, ids=[c[0] for c in DROPPED_CASES])
def test_tool_results_dropped(task_by_id: dict[str, Task], case: str, grew: int, result: str, status: int,
                              labelled: bool) -> None:
    task = task_by_id["weather-berlin"]
    s = score(wire(task, lambda b: _round_trip(b, grew, result, status)), task)
    hits = [a for a in s.attributions if a.rule == "interop.tool_results_dropped"]
    assert bool(hits) == labelled, [a.rule for a in s.attributions]
    if hits:
        assert f"1 tool result(s) of {len(result)} characters" in hits[0].evidence
        assert "tool-results-as-user" in hits[0].evidence and hits[0].exchange_seq == 1


CALL_CASES: list[tuple[str, str, list[tuple[str, dict[str, Any]]], str | None, int | None, str]] = [
    # rule, task, calls, answer, step of the attribution, evidence fragment
    ("fake_completion.claimed_side_effect", "email-jonas", [FIND], "I have sent the email to Jonas.", 1, "send_email never ran"),
    ("fake_completion.claimed_side_effect", "weather-berlin", [], "Email sent!", 0, "no call ran"),
    ("fake_completion.unsupported_answer", "weather-berlin", [], "It is cloudy.", 0, "no expected action ran"),
    ("retry_loop.repeat_ok", "weather-berlin", [BERLIN, BERLIN], "cloudy", 1, "2 times in a row"),
    ("retry_loop.repeat_failure", "weather-berlin", [("get_weather", {"city": "Atlantis"})] * 3, "no idea", 2, "3 times in a row"),
    ("retry_loop.duplicate_call", "email-jonas", [FIND, SEND, FIND], "Sent.", 2, "repeats call 0"),
    ("intent_miss.no_expected_tool", "weather-berlin", [("get_time", {"city": "Berlin"})], "It is 09:30.", 0, "the task needs get_weather"),
    ("intent_miss.wrong_tool", "weather-berlin", [("get_forecast", {"city": "Berlin"})], "cloudy", 0, "called get_forecast where get_weather was needed"),
    ("intent_miss.extra_call", "weather-berlin", [BERLIN, ("get_time", {"city": "Berlin"})], "cloudy", 1, "get_time"),
    ("intent_miss.answer_mismatch", "weather-berlin", [BERLIN], "It is sunny.", 1, "missing 'cloudy'"),
    ("param_error.wrong_args", "email-jonas", [FIND, ("send_email", {**SEND[1], "to": "jonas.becker@brightline.example"})], "ok", 1, "to different"),
    ("param_error.wrong_args", "email-jonas", [FIND, ("send_email", {"to": "jonas.becker@globex.example"})], "ok", 1, "blocked by the probe (missing: ['subject', 'body']"),
    ("param_error.trap_value", "email-jonas", [FIND, ("send_email", {**SEND[1], "to": "jonas.becker@brightline.example"})], "ok", 1, "trap value"),
    ("param_error.trap_value", "weather-berlin", [BERLIN], "Munich has snow.", 1, "answer carries the trap value"),
    ("premature_finish.no_action", "weather-berlin", [], "I cannot help.", 0, "without a single tool call"),
    ("premature_finish.stopped_early", "email-jonas", [FIND], "Here is his address.", 1, "still missing: send_email"),
    ("premature_finish.no_answer", "weather-berlin", [BERLIN], "", 1, "no final answer"),
]


@pytest.mark.parametrize(("rule", "task_id", "calls", "answer", "step", "evidence"), CALL_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALL_CASES)])
def test_call_rules(task_by_id: dict[str, Task], rule: str, task_id: str, calls: list, answer: str | None, step: int | None, evidence: str) -> None:
    task = task_by_id[task_id]
    s = score(play(task, calls, answer), task)
    assert not s.passed
    hits = [a for a in s.attributions if a.rule == rule]
    assert hits, [(a.rule, a.evidence) for a in s.attributions]
    assert hits[0].step_id == step
    assert evidence in hits[0].evidence, hits[0].evidence


def test_max_steps_is_a_retry_loop_and_not_premature(task_by_id: dict[str, Task]) -> None:
    task = task_by_id["email-jonas"]
    t = play(task, [FIND] + [("find_contact", {"query": f"Jonas {i}"}) for i in range(5)], None)
    s = score(t, task)
    rules = [a.rule for a in s.attributions]
    assert t.max_steps_hit and "retry_loop.max_steps" in rules
    assert not any(r.startswith("premature_finish") for r in rules)


def test_labels_come_in_precedence_order_and_passing_attempts_get_none(task_by_id: dict[str, Task]) -> None:
    task = task_by_id["email-jonas"]
    s = score(play(task, [FIND], "I have sent the email."), task)
    order = [LABELS.index(a.label) for a in s.attributions]
    assert order == sorted(order) and s.labels[0] == "fake_completion"
    assert score(play(task, [FIND, SEND], "Sent."), task).attributions == ()


STAGES = [
    ("nothing matched", [], "first_action"),
    ("some matched", [FIND], "mid_chain"),
    ("all matched but an extra call", [FIND, SEND, ("list_inbox", {})], "mid_chain"),
]


@pytest.mark.parametrize(("rule", "calls", "stage"), STAGES, ids=[c[0] for c in STAGES])
def test_stage(task_by_id: dict[str, Task], rule: str, calls: list, stage: str) -> None:
    task = task_by_id["email-jonas"]
    assert score(play(task, calls, "done"), task).stage == stage, rule


def test_interop_attempts_are_flagged_for_exclusion(task_by_id: dict[str, Task]) -> None:
    task = task_by_id["weather-berlin"]
    s = score(wire(task, _rejected), task)
    assert s.interop and s.labels[0] == "interop"
    got_past_it = score(wire(task, lambda b: (_server_down(b), b.exchange(USER, completion("cloudy")))), task)
    assert not got_past_it.interop and got_past_it.labels == ["fake_completion", "premature_finish"]


LLAMA_CPP_500 = (
    "7 validation errors:\n  {'type': 'literal_error', 'loc': ('messages', 1, 'ChatCompletionRequestSystemMessage', 'role'), "
    "'msg': \"Input should be 'system'\", 'input': 'assistant'}\n  {'type': 'string_type', 'loc': ('messages', 1, "
    "'ChatCompletionRequestAssistantMessage', 'content'), 'msg': 'Input should be a valid string', 'input': None}"
)
FIELDS = [
    (LLAMA_CPP_500, "messages.1.content"),
    (json.dumps({"detail": [{"type": "string_type", "loc": ["body", "messages", 2, "typed-dict", "content"], "msg": "x"}]}), "messages.2.content"),
    ("[{'type': 'string_type', 'loc': ('body', 'messages', 2, 'content'), 'msg': 'Input should be a valid string'}]", "messages.2.content"),
    (json.dumps({"detail": [{"loc": ["body", "tools", 0, "function"], "msg": "field required"}]}), "tools.0.function"),
    ("messages[3].tool_calls[0].id: field required", "messages.3.tool_calls.0.id"),
    ("validation failed for field 'temperature'", "temperature"),
    ("internal error", None),
]


@pytest.mark.parametrize(("message", "field"), FIELDS)
def test_offending_field(message: str, field: str | None) -> None:
    assert offending_field(message) == field


OTHER = [{"role": "user", "content": "A sub-task: look it up."}]


def _ignored_then_served(b: AttemptBuilder) -> None:
    b.exchange(OTHER, completion("I will guess."), prompt_tokens=12)  # a sub-agent thread whose tools were dropped
    b.exchange(USER, completion("It is cloudy in Berlin."))  # the main thread went on, served properly


def _ignored_every_time(b: AttemptBuilder) -> None:
    b.exchange(USER, completion("I will guess."), prompt_tokens=12)
    b.exchange(USER + [{"role": "assistant", "content": "I will guess."}, {"role": "user", "content": "go on"}],
               completion("Still guessing."), prompt_tokens=14)


def _rejected_then_other_failure(b: AttemptBuilder) -> None:
    _rejected(b)
    _server_down(b)


BLOCKING = [
    ("the fault is the attempt's last exchange", _rejected, "interop.upstream_rejected"),
    ("every later exchange shows the same fault", _ignored_every_time, "interop.tools_ignored"),
    ("a fault the agent got past (another thread went on)", _ignored_then_served, None),
    ("a later exchange failed another way: only that one blocked", _rejected_then_other_failure, "interop.upstream_error"),
]


@pytest.mark.parametrize(("case", "build", "rule"), BLOCKING, ids=[c[0] for c in BLOCKING])
def test_interop_only_where_the_fault_blocked_the_attempt(task_by_id: dict[str, Task], case: str, build: Callable[[AttemptBuilder], None], rule: str | None) -> None:
    task = task_by_id["weather-berlin"]
    s = score(wire(task, build), task)
    interop = [a.rule for a in s.attributions if a.label == "interop"]
    assert interop == ([rule] if rule else []), case
    assert s.interop is (rule is not None)


def test_a_hedged_answer_fails_with_a_label_saying_so(task_by_id: dict[str, Task]) -> None:
    task = task_by_id["weather-berlin"].model_copy(update={"expected_answer": task_by_id["weather-berlin"].expected_answer.model_copy(update={"contains": ["2025-03-14"]})})
    dump = "cloudy; " + ", ".join(f"2025-03-{d:02d}" for d in range(1, 29))
    s = score(play(task, [BERLIN], dump), task)
    assert not s.passed
    assert "fake_completion.hedged_answer" in [a.rule for a in s.attributions]
    assert "intent_miss.answer_mismatch" not in [a.rule for a in s.attributions]


@pytest.mark.parametrize(("path", "status", "message", "shim"), [
    ("/v1/responses", 404, '{"detail": "Not Found"}', True),
    ("/v1/responses", 405, "Method Not Allowed", True),
    ("/api/chat", 404, "404 page not found", False),
    ("/api/chat", 404, "model 'qwen9' not found", None),
    ("/v1/responses", 400, "bad request", None),
])
def test_route_missing_evidence(path: str, status: int, message: str, shim: bool | None) -> None:
    """A missing route names the path and status; on the Responses route it names the shim
    the run summary lists as the fix (a missing *model* is no missing route)."""
    from probegate.scorer.judge.wire_rules import route_missing
    from probegate.scorer.trajectory import ExchangeRecord

    found = route_missing(ExchangeRecord(seq=0, path=path, status_code=status), message)
    if shim is None:
        assert found is None
        return
    assert found is not None and found.startswith(f"HTTP {status} on {path}: the server has no such route")
    assert ("the responses-via-chat shim would fix it" in found) is shim
