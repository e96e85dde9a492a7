"""Tool calls written as text: detected, parsed, never promoted."""

from __future__ import annotations

import pytest

from probegate.wire.content_calls import (
    coerce,
    detect_content_calls,
    find_json_calls,
    find_markup_calls,
    find_python_calls,
    has_tool_markup,
    tool_schemas,
)

SCHEMAS = {"get_forecast": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
           "check_stock": {"type": "object", "properties": {"sku": {"type": "string"}}}}
REQUEST = {"tools": [{"type": "function", "function": {"name": n, "parameters": p}} for n, p in SCHEMAS.items()]}


def test_tool_schemas_reads_tools_and_functions() -> None:
    request = {**REQUEST, "functions": [{"name": "legacy", "parameters": {"type": "object"}}]}
    assert set(tool_schemas(request)) == {"get_forecast", "check_stock", "legacy"}
    assert tool_schemas("nope") == {}


@pytest.mark.parametrize(
    ("text", "name", "args"),
    [
        ("<tool_call>\n<function=get_forecast>\n<parameter=city>\nGraz\n</parameter>\n<parameter=days>\n5\n</parameter>\n</function>\n</tool_call>",
         "get_forecast", {"city": "Graz", "days": 5}),
        ('<tool_call>{"name": "check_stock", "arguments": {"sku": "HX-1"}}</tool_call>', "check_stock", {"sku": "HX-1"}),
        ('<function=check_stock>{"sku": "HX-2"}</function>', "check_stock", {"sku": "HX-2"}),
    ],
)
def test_markup(text: str, name: str, args: dict) -> None:
    calls = find_markup_calls(text, SCHEMAS)
    assert [(c.name, c.arguments, c.kind) for c in calls] == [(name, args, "markup")]
    assert has_tool_markup(text)


def test_json_calls_back_to_back_and_in_prose() -> None:
    text = 'Sure! {"name": "check_stock", "arguments": {"sku": "A"}}\n{"name": "check_stock", "parameters": {"sku": "B"}} done'
    assert [c.arguments for c in find_json_calls(text, SCHEMAS)] == [{"sku": "A"}, {"sku": "B"}]


def test_json_calls_need_a_known_tool() -> None:
    assert find_json_calls('{"name": "rm_rf", "arguments": {}}', SCHEMAS) == []


@pytest.mark.parametrize(
    ("text", "count"),
    [('[get_forecast(city="Graz", days=2)]', 1), ('check_stock(sku="A")', 1),
     ("call get_forecast() later", 0), ('[os.system("x")]', 0), ('get_forecast("Graz")', 0)],
)
def test_python_calls(text: str, count: int) -> None:
    assert len(find_python_calls(text, SCHEMAS)) == count


@pytest.mark.parametrize(
    ("value", "schema", "expected"),
    [("5", {"type": "integer"}, 5), ("2.5", {"type": "number"}, 2.5), ("true", {"type": "boolean"}, True),
     ('["a"]', {"type": "array"}, ["a"]), (" x ", {"type": "string"}, " x "), ("five", {"type": "integer"}, "five")],
)
def test_coerce(value: str, schema: dict, expected: object) -> None:
    assert coerce(value, schema)[0] == expected


def test_detect_flags() -> None:
    assert detect_content_calls("The weather is fine.", REQUEST) == ([], [])
    assert detect_content_calls('<tool_call>{"name":"check_stock","arguments":{}}</tool_call>', REQUEST)[1] == [
        "tool_call_markup_in_content"]
    assert detect_content_calls('{"name":"check_stock","arguments":{"sku":"A"}}', REQUEST)[1] == ["tool_call_in_content"]
    assert detect_content_calls(None, REQUEST) == ([], [])
