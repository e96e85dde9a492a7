"""The embedded server's prompt format (pure): what the model sees of tools, calls and results."""

from __future__ import annotations

from typing import Any

import pytest

from probegate.runner.chat_handler import resolve_choice
from probegate.runner.chatml_tools import (
    arguments_schema,
    called_name,
    choice_grammar,
    describe_tool,
    next_call_grammar,
    render,
    text_of,
    type_text,
)

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather\n in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name."},
                                                    "unit": {"type": "string", "enum": ["c", "f"], "default": "c"}},
                   "required": ["city"]}}}
CALL = {"id": "call_7", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
ASK = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}]


def test_a_round_trip_renders_the_call_and_the_result_with_its_id_and_name() -> None:
    messages = [*ASK, {"role": "assistant", "content": None, "tool_calls": [CALL]},
                {"role": "tool", "tool_call_id": "call_7", "content": '{"temp_c": 11, "sky": "grey & <low>"}'}]
    prompt = render(messages, [WEATHER])
    assert prompt.startswith("<|im_start|>system\nBe brief.\n\nYou can call these functions:\nfunctions.get_weather:")
    assert prompt.endswith(
        "<|im_start|>user\nWeather in Paris?<|im_end|>\n"
        '<|im_start|>assistant\nfunctions.get_weather:\n{"city": "Paris"}<|im_end|>\n'
        '<|im_start|>tool\nget_weather (call_7) returned:\n{"temp_c": 11, "sky": "grey & <low>"}<|im_end|>\n'
        "<|im_start|>assistant\n")


@pytest.mark.parametrize(("messages", "tools", "expected"), [
    # no tools: plain ChatML, content verbatim (no HTML escaping)
    ([{"role": "user", "content": 'say "hi" <b> & bye'}], None,
     '<|im_start|>user\nsay "hi" <b> & bye<|im_end|>\n<|im_start|>assistant\n'),
    # text parts are joined; developer is a system message
    ([{"role": "developer", "content": "D"}, {"role": "user", "content": [{"type": "text", "text": "a"},
                                                                          {"type": "text", "text": "b"}]}], None,
     "<|im_start|>system\nD<|im_end|>\n<|im_start|>user\nab<|im_end|>\n<|im_start|>assistant\n"),
    # a tool result without a matching call still arrives, with its id
    ([{"role": "tool", "tool_call_id": "x1", "content": "42"}], None,
     "<|im_start|>tool\n(x1) returned:\n42<|im_end|>\n<|im_start|>assistant\n"),
    # the name given on the tool message wins; object arguments become JSON
    ([{"role": "assistant", "content": "", "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": {"k": 1}}}]},
      {"role": "tool", "tool_call_id": "a", "name": "g", "content": None}], None,
     '<|im_start|>assistant\nfunctions.f:\n{"k": 1}<|im_end|>\n<|im_start|>tool\ng (a) returned:\n<|im_end|>\n'
     "<|im_start|>assistant\n"),
])
def test_render(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, expected: str) -> None:
    assert render(messages, tools) == expected


def test_tools_without_a_system_message_get_one_and_assistant_text_says_message() -> None:
    prompt = render([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], [WEATHER])
    assert prompt.startswith("<|im_start|>system\nYou can call these functions:\n")
    assert "<|im_start|>assistant\nmessage:\nhello<|im_end|>\n" in prompt


def test_a_tool_is_one_line_and_one_line_per_parameter() -> None:
    assert describe_tool(WEATHER) == (
        "functions.get_weather: Current weather in a city.\n"
        "  city (string, required): City name.\n"
        '  unit ("c" | "f", default "c")')


@pytest.mark.parametrize(("schema", "text"), [
    ({"type": "string"}, "string"),
    ({"type": "array", "items": {"type": "integer"}}, "array of integer"),
    ({"enum": [1, 2]}, "1 | 2"),
    ({"anyOf": [{"type": "string"}, {"type": "null"}]}, "string | null"),
    ({"type": ["string", "null"]}, "string | null"),
    ({"type": "object", "properties": {"a": {"type": "string"}}}, '{"type":"object","properties":{"a":{"type":"string"}}}'),
    ({}, "any"),
])
def test_type_text(schema: dict[str, Any], text: str) -> None:
    assert type_text(schema) == text


@pytest.mark.parametrize(("content", "text"), [(None, ""), ("x", "x"), ([{"type": "text", "text": "y"}], "y"),
                                               ({"a": 1}, '{"a": 1}')])
def test_text_of(content: Any, text: str) -> None:
    assert text_of(content) == text


def test_grammars_name_every_offered_tool() -> None:
    assert choice_grammar(["a", "b"]) == 'root ::= functions | "message:"\nfunctions ::= "functions.a:" | "functions.b:"\n'
    assert choice_grammar(["a"], allow_message=False) == 'root ::= functions\nfunctions ::= "functions.a:"\n'
    assert next_call_grammar(["a"]).startswith('root ::= ("\\n" functions)?\n')


def test_long_max_length_is_left_out_of_the_grammar_schema() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 20000},
                                               "b": {"type": "string", "maxLength": 50}}}
    assert arguments_schema(schema)["properties"] == {"a": {"type": "string"}, "b": {"type": "string", "maxLength": 50}}
    assert arguments_schema(None) == {"type": "object"}


@pytest.mark.parametrize(("text", "name"), [("functions.get_weather", "get_weather"), ("\nfunctions.f:", "f"),
                                            ("message", None), ("", None), ("functions.", None)])
def test_called_name(text: str, name: str | None) -> None:
    assert called_name(text) == name


@pytest.mark.parametrize(("tool_choice", "function_call", "names", "choice"), [
    (None, None, ["f"], "auto"),  # OpenAI's default with tools
    ("auto", None, ["f"], "auto"),
    ("none", None, ["f"], "none"),
    ("auto", None, [], "none"),
    ("required", None, ["f"], "required"),
    ({"type": "function", "function": {"name": "f"}}, None, ["f"], "call:f"),
    (None, {"name": "f"}, ["f"], "call:f"),
])
def test_resolve_choice(tool_choice: Any, function_call: Any, names: list[str], choice: str) -> None:
    assert resolve_choice(tool_choice, function_call, names) == choice


def test_a_named_tool_that_is_not_offered_is_refused() -> None:
    with pytest.raises(ValueError, match="not among the offered tools"):
        resolve_choice({"type": "function", "function": {"name": "g"}}, None, ["f"])
