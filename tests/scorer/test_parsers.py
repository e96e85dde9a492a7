"""Text-protocol parsers: ReAct, fenced/bare JSON, key=value, code. Each says what it repaired."""

from __future__ import annotations

import pytest

from probegate.scorer.rebuild.parsers import (
    parse_action_input,
    parse_code_calls,
    parse_json_blocks,
    parse_kv,
    parse_react,
)

TOOLS = ("get_weather", "send_email", "search")

REACT_CASES = [
    # text, tool, args, notes, final
    ("Thought: need weather\nAction: get_weather\nAction Input: {\"city\": \"Paris\"}", "get_weather", {"city": "Paris"}, (), None),
    ("Action: get_weather\nAction Input: {'city': 'Paris'}", "get_weather", {"city": "Paris"}, ("python_literal",), None),
    ("Action: `get_weather`\nAction Input: {\"city\": \"Paris\"}", "get_weather", {"city": "Paris"}, ("name_decorated",), None),
    ("**Action:** get_weather\n**Action Input:** {\"city\": \"Paris\"}", "get_weather", {"city": "Paris"}, (), None),
    ("Action: Get_Weather\nAction Input: {\"city\": \"Paris\"}", "get_weather", {"city": "Paris"}, ("name_case",), None),
    ("Action: get_weather\nAction Input: city=\"New York\", units=metric", "get_weather", {"city": "New York", "units": "metric"}, ("key_value",), None),
    ("Action: search\nAction Input: best pizza in Rome", "search", {"input": "best pizza in Rome"}, ("input_text",), None),
    ("Action: search\nAction Input: \"best pizza\"", "search", {"input": "best pizza"}, ("input_string",), None),
    ("Action: get_weather\nAction Input:\n```json\n{\"city\": \"Oslo\"}\n```", "get_weather", {"city": "Oslo"}, ("fence_removed",), None),
    ("Action: search[pizza]", "search", {"input": "pizza"}, ("bracket_input",), None),
    ("Action: get_weather(city=\"Rome\")", "get_weather", {"city": "Rome"}, ("python_call",), None),
    ("Action: get_weather", "get_weather", {}, ("no_action_input",), None),
    (
        "Action: get_weather\nAction Input: {\"city\": \"Rome\"}\nObservation: sunny\nFinal Answer: sunny",
        "get_weather",
        {"city": "Rome"},
        ("hallucinated_observation", "final_answer_after_action_ignored"),
        None,
    ),
    ("Thought: done\nFinal Answer: It is 8 degrees.", None, None, (), "It is 8 degrees."),
]


@pytest.mark.parametrize(("text", "tool", "args", "notes", "final"), REACT_CASES)
def test_react(text: str, tool: str | None, args: dict | None, notes: tuple, final: str | None) -> None:
    parsed = parse_react(text, TOOLS)
    assert parsed is not None
    if tool is None:
        assert parsed.call is None and parsed.final_answer == final
        return
    assert parsed.call is not None
    assert (parsed.call.name, parsed.call.arguments) == (tool, args)
    assert parsed.call.notes == notes
    assert parsed.call.status == ("repaired" if notes else "ok")


def test_react_thought_and_no_markers() -> None:
    parsed = parse_react("Thought: I should look it up.\nAction: search\nAction Input: {\"q\": 1}", TOOLS)
    assert parsed is not None and parsed.thought == "I should look it up."
    assert parse_react("Just an answer.", TOOLS) is None


def test_react_empty_action_fails() -> None:
    parsed = parse_react("Thought: hmm\nAction: \nAction Input: {}", TOOLS)
    assert parsed is not None and parsed.failed and parsed.call is None


def test_react_unknown_tool_is_kept_as_written() -> None:
    parsed = parse_react("Action: teleport\nAction Input: {}", TOOLS)
    assert parsed is not None and parsed.call is not None and parsed.call.name == "teleport"


KV_CASES = [
    ('city="New York", days=3', {"city": "New York", "days": 3}),
    ("a=1\nb=2.5\nc=true\nd=null", {"a": 1, "b": 2.5, "c": True, "d": None}),
    ("q='it''s'", {"q": "it''s"}),
    ("name='O\\'Brien'", {"name": "O'Brien"}),
    ("no pairs here", None),
    ("x=1 and then prose", {"x": "1 and then prose"}),
]


@pytest.mark.parametrize(("text", "value"), KV_CASES)
def test_kv(text: str, value: dict | None) -> None:
    assert parse_kv(text) == value


JSON_CASES = [
    ('```json\n{"action": "search", "action_input": {"q": "x"}}\n```', [("search", {"q": "x"}, ())], None),
    ('```json\n{"action": "Final Answer", "action_input": "42"}\n```', [], "42"),
    ('```\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```', [("get_weather", {"city": "Oslo"}, ())], None),
    ('{"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}', [("get_weather", {"city": "Oslo"}, ("bare_json", "arguments_string"))], None),
    ('{"name": "unknown_tool", "arguments": {}}', [], None),
    ('```json\n[{"name": "search", "arguments": {"q": 1}}, {"name": "search", "arguments": {"q": 2}}]\n```', [("search", {"q": 1}, ()), ("search", {"q": 2}, ())], None),
    ('```json\n{"action": "search", "action_input": "pizza"}\n```', [("search", {"input": "pizza"}, ("input_string",))], None),
]


@pytest.mark.parametrize(("text", "calls", "final"), JSON_CASES)
def test_json_blocks(text: str, calls: list, final: str | None) -> None:
    found, answer = parse_json_blocks(text, TOOLS)
    assert [(c.name, c.arguments, c.notes) for c in found] == calls
    assert answer == final


def test_code_calls_in_source_order_with_notes() -> None:
    code = 'w = get_weather(city="Paris")\nfor c in cities:\n    get_weather(city=c)\nsend_email("a@b.example", subject="x")'
    calls = parse_code_calls(code, TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "c"}),
        ("send_email", {"_0": "a@b.example", "subject": "x"}),
    ]
    assert calls[1].notes == ("non_literal_argument",)
    assert calls[2].notes == ("positional_arguments",)
    assert parse_code_calls("print(1)", TOOLS) == []
    assert parse_code_calls("def broken(:", TOOLS) == []


def test_action_input_unreadable_json_falls_back_to_text() -> None:
    args, notes = parse_action_input('{"city": "Pa')
    assert args == {"input": '{"city": "Pa'} and notes == ("input_text",)
