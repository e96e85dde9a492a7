"""What the agent saw after each call."""

from __future__ import annotations

from probegate.scorer.rebuild.observations import structured_observation, text_observation


def test_structured_result_by_id_then_by_position() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f"}}, {"id": "b", "function": {"name": "g"}}]},
        {"role": "tool", "tool_call_id": "b", "content": "B"},
        {"role": "tool", "tool_call_id": "a", "content": "A"},
    ]
    assert structured_observation(messages, "a", 0, ["f", "g"]) == "A"
    no_ids = [
        {"role": "assistant", "tool_calls": [{"function": {"name": "f"}}, {"function": {"name": "g"}}]},
        {"role": "tool", "content": "first"},
        {"role": "tool", "content": "second"},
    ]
    assert structured_observation(no_ids, None, 1, ["f", "g"]) == "second"
    assert structured_observation(no_ids, "zzz", 0, ["other"]) is None


def test_text_protocol_next_message_and_scratchpad() -> None:
    out = "Thought: x\nAction: get_weather\nAction Input: {}"
    chat = [{"role": "user", "content": "q"}, {"role": "assistant", "content": out}, {"role": "user", "content": "Observation: sunny, 8 C"}]
    assert text_observation(chat, out) == "sunny, 8 C"
    pad = [{"role": "user", "content": f"Question: q\n{out}\nObservation: rain\nThought:"}]
    assert text_observation(pad, out) == "rain"
    assert text_observation(chat, "never said") is None
    assert text_observation(chat, None) is None
