"""The ReAct parser: tolerant, pure, and honest about repairs."""

from __future__ import annotations

from typing import Any

import pytest

from probegate.harnesses.react_parser import match_tool, parse_action_input, read_react_reply

STOCK = {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}
EMAIL = {
    "type": "object",
    "properties": {"to": {"type": "string"}, "subject": {"type": "string"}, "qty": {"type": "integer"}},
    "required": ["to", "subject"],
}
SCHEMAS = {"check_stock": STOCK, "send_email": EMAIL}


@pytest.mark.parametrize(
    ("text", "tool", "args", "repaired"),
    [
        ('Thought: I need stock.\nAction: check_stock\nAction Input: {"sku": "A1"}',
         "check_stock", {"sku": "A1"}, False),
        # markdown chatter, fenced input, an invented observation and answer after the action
        ('Sure!\n**Action:** `check_stock`\n**Action Input:** ```json\n{"sku": "A1"}\n```\n'
         "Observation: 5\nFinal Answer: 5",
         "check_stock", {"sku": "A1"}, False),
        ("Action: check_stock\nAction Input: {'sku': 'A1',}", "check_stock", {"sku": "A1"}, True),
        ("Action: check_stock\nAction Input: A1", "check_stock", {"sku": "A1"}, True),
        ('Action: check_stock\nAction Input: "A1"', "check_stock", {"sku": "A1"}, True),
        ('Action: send_email\nAction Input: to=a@b.com, subject="Q3 report", qty=3', "send_email",
         {"to": "a@b.com", "subject": "Q3 report", "qty": 3}, True),
        ('Action: check_stock(sku="A1")', "check_stock", {"sku": "A1"}, True),
        ("Action: check_stock('A1')", "check_stock", {"sku": "A1"}, True),
        ('Action: {"action": "check_stock", "action_input": {"sku": "A1"}}', "check_stock", {"sku": "A1"}, True),
        ('Action: {"action": "check_stock",\n "action_input": "A1"}', "check_stock", {"sku": "A1"}, True),
        ('Action: Check_Stock\nAction Input: {"sku": "A1"}', "check_stock", {"sku": "A1"}, True),
        ('Action: use the check_stock tool\nAction Input: {"sku": "A1"}', "check_stock", {"sku": "A1"}, True),
        ('<tool_call>{"name": "check_stock", "arguments": {"sku": "A1"}}</tool_call>',
         "check_stock", {"sku": "A1"}, True),
        ('I will call {"name": "check_stock", "arguments": {"sku": "A1"}} now.', "check_stock", {"sku": "A1"}, True),
        ("Action: check_stock\nAction Input:", "check_stock", {}, False),
        # an unknown tool is kept as written: the probe answers unknown_tool
        ('Action: nosuch\nAction Input: {"a": 1}', "nosuch", {"a": 1}, True),
    ],
)
def test_actions(text: str, tool: str, args: dict[str, Any], repaired: bool) -> None:
    parsed = read_react_reply(text, SCHEMAS)
    assert (parsed.kind, parsed.tool, parsed.arguments, parsed.repaired) == ("action", tool, args, repaired)


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("Thought: done\nFinal Answer: There are 5 units.", "There are 5 units."),
        ("Final Answer: 42\nObservation: ignored", "42"),
        ("<think>Action: x</think>Final Answer: 42", "42"),
        ("Thought: ok\n**Final Answer:** multi\nline", "multi\nline"),
        ("Answer: 7", "7"),
        # the final answer comes first: a later Action is ignored
        ("Final Answer: 5\nAction: check_stock", "5"),
    ],
)
def test_final_answers(text: str, answer: str) -> None:
    parsed = read_react_reply(text, SCHEMAS)
    assert (parsed.kind, parsed.answer) == ("final", answer)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "the reply was empty"),
        ("I think the answer is 5.", "the reply has neither an Action nor a Final Answer"),
        ("Thought: hmm\nAction: send_email\nAction Input: hello there", "cannot read the Action Input for send_email"),
        ("Action: ???\nAction Input: {}", "the Action line names no tool"),
        ("Final Answer:   ", "the Final Answer was empty"),
    ],
)
def test_nothing_parses(text: str, problem: str) -> None:
    parsed = read_react_reply(text, SCHEMAS)
    assert (parsed.kind, parsed.problem) == ("none", problem)


def test_thought_is_kept() -> None:
    parsed = read_react_reply('Thought: look it up\nAction: check_stock\nAction Input: {"sku": "B2"}', SCHEMAS)
    assert parsed.thought == "look it up"


@pytest.mark.parametrize(
    ("line", "expected"),
    [("check_stock", ("check_stock", True)), ("CHECK_STOCK", ("check_stock", False)),
     ("`send_email`", ("send_email", True)), ("I'll use send_email now", ("send_email", False)),
     ("lookup", ("lookup", False))],
)
def test_match_tool(line: str, expected: tuple[str, bool]) -> None:
    assert match_tool(line, SCHEMAS) == expected


@pytest.mark.parametrize(
    ("raw", "schema", "expected"),
    [
        ('{"sku": "A1"}', STOCK, ({"sku": "A1"}, False)),
        ("{'sku': 'A1'}", STOCK, ({"sku": "A1"}, True)),
        ("sku: A1", STOCK, ({"sku": "A1"}, True)),
        ("A1", STOCK, ({"sku": "A1"}, True)),
        ("```\n{\"sku\": \"A1\"}\n```", STOCK, ({"sku": "A1"}, False)),
        ("qty=3, to='x@y.z', subject='Hi'", EMAIL, ({"qty": 3, "to": "x@y.z", "subject": "Hi"}, True)),
        ("just words", EMAIL, (None, False)),
        ("[1, 2]", EMAIL, (None, False)),
    ],
)
def test_parse_action_input(raw: str, schema: dict[str, Any], expected: tuple[Any, bool]) -> None:
    assert parse_action_input(raw, schema) == expected
