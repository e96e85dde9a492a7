"""Pairing tool results with the calls they answer: id, then name, then position."""

from __future__ import annotations

from probegate.wire.tool_results import missing_tool_call_ids, pair_tool_results


def _assistant(*calls):
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}} for cid, name in calls]}


def test_by_id_even_out_of_order() -> None:
    messages = [{"role": "user", "content": "q"}, _assistant(("a", "f"), ("b", "g")),
                {"role": "tool", "tool_call_id": "b", "content": "2"},
                {"role": "tool", "tool_call_id": "a", "content": "1"}]
    assert [(r.tool_call_id, r.name, r.paired_by) for r in pair_tool_results(messages)] == [
        ("b", "g", "id"), ("a", "f", "id")]


def test_by_name_when_unique() -> None:
    messages = [_assistant(("a", "f"), ("b", "g")), {"role": "tool", "name": "g", "content": "x"}]
    assert pair_tool_results(messages)[0].to_json() == {"tool_call_id": "b", "name": "g", "content": "x", "paired_by": "name"}


def test_unknown_id_falls_back_to_position() -> None:
    messages = [_assistant(("a", "f")), {"role": "tool", "tool_call_id": "zzz", "content": "x"}]
    result = pair_tool_results(messages)[0]
    assert (result.tool_call_id, result.paired_by) == ("a", "position")


def test_result_without_any_call() -> None:
    result = pair_tool_results([{"role": "user", "content": "q"}, {"role": "tool", "content": "x"}])[0]
    assert (result.tool_call_id, result.call_index, result.paired_by) == (None, None, "position")


def test_each_assistant_turn_starts_a_new_run() -> None:
    messages = [_assistant(("a", "f")), {"role": "tool", "content": "1"},
                _assistant(("b", "f")), {"role": "tool", "content": "2"}]
    assert [r.tool_call_id for r in pair_tool_results(messages)] == ["a", "b"]


def test_missing_ids() -> None:
    assert missing_tool_call_ids([{"role": "tool", "content": "x"}])
    assert not missing_tool_call_ids([{"role": "tool", "tool_call_id": "a", "content": "x"}])
