"""Thread assignment: extending, continuing, sub-agents, dropped instructions."""

from __future__ import annotations

import pytest

from probegate.scorer.rebuild.threads import ThreadTracker, content_text, message_sizes, request_messages

SYS = {"role": "system", "content": "You are the main agent."}
USER = {"role": "user", "content": "Plan the trip."}


def test_extending_history_stays_in_its_thread() -> None:
    t = ThreadTracker()
    assert t.assign(0, [SYS, USER]) == 0
    t.record_output(0, None, ["c1"])
    step2 = [SYS, USER, {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "x"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "r"}]
    assert t.assign(1, step2) == 0
    assert t.threads[0].exchanges == [0, 1]


def test_a_request_that_extends_nothing_is_a_sub_agent() -> None:
    t = ThreadTracker()
    t.assign(0, [SYS, USER])
    t.record_output(0, None, ["c1"])
    sub = t.assign(1, [{"role": "system", "content": "You are the researcher."}, {"role": "user", "content": "Find flights."}])
    assert sub == 1 and t.threads[1].parent == 0
    t.record_output(1, "Flights found: LH123 at 9:00", [])
    back = [SYS, USER, {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "delegate"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "LH123"}]
    assert t.assign(2, back) == 0


def test_rebuilt_prompt_continues_when_it_repeats_the_last_output() -> None:
    t = ThreadTracker()
    t.assign(0, [{"role": "user", "content": "Question: weather?\n"}])
    t.record_output(0, "Thought: look\nAction: get_weather\nAction Input: {}", [])
    scratch = {"role": "user", "content": "Question: weather?\nThought: look\nAction: get_weather\nAction Input: {}\nObservation: sunny\n"}
    assert t.assign(1, [scratch]) == 0
    assert t.threads[0].dropped == []


def test_continuing_without_the_first_instruction_is_recorded_as_dropped() -> None:
    t = ThreadTracker()
    t.assign(0, [SYS, USER])
    t.record_output(0, "I will first check the calendar for free slots.", [])
    trimmed = [{"role": "assistant", "content": "I will first check the calendar for free slots."}, {"role": "user", "content": "go on"}]
    assert t.assign(1, trimmed) == 0
    assert [(d.role, d.exchange_seq) for d in t.threads[0].dropped] == [("system", 1), ("user", 1)]


def test_a_call_without_id_continues_its_thread_by_name_and_arguments() -> None:
    """Ollama's native calls carry no id: a rebuilt history that repeats the call (its
    arguments an object, or the same JSON as text) continues the thread."""
    t = ThreadTracker()
    t.assign(0, [SYS, USER])
    t.record_output(0, None, [""], [("check_stock", {"sku": "A1", "warehouse": "all"})])
    called = {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "check_stock", "arguments": {"warehouse": "all", "sku": "A1"}}}]}
    trimmed = [USER, called, {"role": "tool", "tool_name": "check_stock", "content": "25"}]
    assert t.assign(1, trimmed) == 0
    assert [(d.role, d.exchange_seq) for d in t.threads[0].dropped] == [("system", 1)]
    t.record_output(0, None, [""], [("check_stock", '{"sku": "B2"}')])
    as_text = {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "check_stock", "arguments": '{"sku":"B2"}'}}]}
    assert t.assign(2, [as_text, {"role": "tool", "content": "3"}]) == 0
    t.record_output(0, None, [""], [("check_stock", {"sku": "C3"})])
    other = {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "check_stock", "arguments": {"sku": "D4"}}}]}
    assert t.assign(3, [other, {"role": "tool", "content": "0"}]) == 1  # another call: another thread


def test_request_messages_of_every_dialect() -> None:
    assert request_messages({"system": "s", "messages": [USER]}) == [{"role": "system", "content": "s"}, USER]
    assert request_messages({"prompt": "p"}) == [{"role": "user", "content": "p"}]
    items = request_messages({"instructions": "i", "input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}, {"type": "function_call_output", "call_id": "c", "output": "o"}]})
    assert items[1]["tool_calls"][0]["id"] == "c" and items[2] == {"role": "tool", "tool_call_id": "c", "content": "o"}
    assert request_messages("nope") == []
    assert content_text([{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}]) == "ab"


@pytest.mark.parametrize(("body", "sizes"), [
    ({"messages": [{"role": "user", "content": "a  b"}]}, (0, 0, 3)),
    ({"messages": [{"role": "assistant", "content": None, "tool_calls": [{"id": "1", "function": {"name": "f", "arguments": '{"x": 1}'}}]},
                   {"role": "tool", "tool_call_id": "1", "content": "result\n\n text"}]}, (1, 11, 20)),
    ({"input": [{"type": "function_call_output", "call_id": "1", "output": "42"}]}, (1, 2, 2)),
    ({"prompt": "hello"}, (0, 0, 5)),
    (None, (0, 0, 0)),
])
def test_message_sizes(body: object, sizes: tuple[int, int, int]) -> None:
    assert tuple(message_sizes(body)) == sizes
