"""Reading whole assistant turns: structured calls first, then the text protocols in order."""

from __future__ import annotations

import pytest

from probegate.scorer.rebuild.turns import every_parse, parse_completion, parse_text, split_think

TOOLS = ("get_weather", "send_email")


def completion(content: str | None = None, calls: list[dict] | None = None, reasoning: str | None = None) -> dict:
    return {"assistant": {"content": content, "reasoning": reasoning, "tool_calls": calls or [], "finish_reason": "stop"}, "usage": None, "flags": []}


TEXT_CASES = [
    # text, kind, status, calls [(name, args)], answer
    ('<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>', "markup", "ok", [("get_weather", {"city": "Oslo"})], None),
    ("<tool_call><function=get_weather><parameter=city>Oslo</parameter></function></tool_call>", "markup", "ok", [("get_weather", {"city": "Oslo"})], None),
    ("<tool_call>garbage</tool_call>", "markup", "failed", [], None),
    ('Action: get_weather\nAction Input: {"city": "Oslo"}', "react", "ok", [("get_weather", {"city": "Oslo"})], None),
    ("Final Answer: 8 degrees", "react", "ok", [], "8 degrees"),
    ('```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```', "json", "ok", [("get_weather", {"city": "Oslo"})], None),
    ('get_weather(city="Oslo")', "python", "ok", [("get_weather", {"city": "Oslo"})], None),
    ('I will check.\n```python\nprint(get_weather(city="Oslo"))\n```', "code", "ok", [("get_weather", {"city": "Oslo"})], None),
    ('```python\nfinal_answer("It is 8 degrees")\n```', "code", "ok", [], "It is 8 degrees"),
    ("It is 8 degrees in Oslo.", "text", "ok", [], "It is 8 degrees in Oslo."),
    ("", "none", "failed", [], None),
    ('I want {"name": "get_weather", "arguments": {"city": broken}}', "json", "failed", [], None),
]


@pytest.mark.parametrize(("text", "kind", "status", "calls", "answer"), TEXT_CASES)
def test_parse_text(text: str, kind: str, status: str, calls: list, answer: str | None) -> None:
    turn = parse_text(text, TOOLS)
    assert turn.kind == kind
    assert turn.status == status
    assert [(c.name, c.arguments) for c in turn.calls] == calls
    assert turn.answer == answer


def test_think_tags_become_the_thought() -> None:
    body, thinking = split_think("<think>plan it</think>Final Answer: 3")
    assert (body, thinking) == ("Final Answer: 3", "plan it")
    turn = parse_text("<think>plan it</think>It is 3.", TOOLS)
    assert turn.thought == "plan it" and turn.answer == "It is 3." and "think_tags_removed" in turn.notes


def test_structured_calls_win_and_keep_their_ids() -> None:
    calls = [
        {"id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}, "arguments_raw": '{"city": "Oslo"}', "repaired": False},
        {"id": "c2", "name": "get_weather", "arguments": {"city": "Rome"}, "arguments_raw": "{'city': 'Rome'}", "repaired": True},
    ]
    turn = parse_completion(completion("Checking both.", calls), TOOLS, offered=True)
    assert turn.kind == "fc" and turn.thought == "Checking both."
    assert [(c.call_id, c.status) for c in turn.calls] == [("c1", "ok"), ("c2", "repaired")]
    assert turn.calls[1].notes == ("python_literal",)
    assert turn.status == "repaired"


def test_unparseable_structured_arguments_fail() -> None:
    call = {"id": "c1", "name": "get_weather", "arguments": None, "arguments_raw": '{"city": "Os', "repaired": False}
    turn = parse_completion(completion(None, [call]), TOOLS, offered=True)
    assert turn.status == "failed" and turn.calls[0].arguments is None
    assert "arguments_unparseable" in turn.calls[0].notes


def test_call_written_as_text_when_tools_were_offered_is_noted() -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    offered = parse_completion(completion(text), TOOLS, offered=True)
    assert "call_in_content" in offered.calls[0].notes
    own_protocol = parse_completion(completion(text), TOOLS, offered=False)
    assert "call_in_content" not in own_protocol.calls[0].notes


def test_reasoning_field_is_the_thought_and_empty_turn_fails() -> None:
    turn = parse_completion(completion(None, None, reasoning="thinking..."), TOOLS)
    assert turn.status == "failed" and turn.thought == "thinking..." and "empty_turn" in turn.notes


def test_every_parse_shows_each_parser() -> None:
    found = every_parse('Action: get_weather\nAction Input: {"city": "Oslo"}', TOOLS)
    assert found["chosen"]["kind"] == "react"
    assert found["parsers"]["react"]["call"]["arguments"] == {"city": "Oslo"}
    assert found["parsers"]["markup"] == [] and found["parsers"]["python"] == []
