"""MCP tool calls read back from recorded JSON-RPC (pure)."""

from __future__ import annotations

import json

import pytest

from probegate.wire.mcp import McpToolCall, messages, stream_messages, tool_calls


def call(id_: object, name: str = "check_stock", arguments: object = None) -> dict:
    params = {"name": name} if arguments is None else {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def result(id_: object, *, structured: object = None, text: str | None = None, error: bool = False) -> dict:
    body: dict = {"content": [{"type": "text", "text": text}] if text is not None else [], "isError": error}
    if structured is not None:
        body["structuredContent"] = structured
    return {"jsonrpc": "2.0", "id": id_, "result": body}


@pytest.mark.parametrize(
    ("request_body", "answers", "expected"),
    [
        (call(1, arguments={"sku": "A"}), [result(1, structured={"in_stock": 3}, text='{"in_stock": 3}')],
         [McpToolCall(1, "check_stock", {"sku": "A"}, '{"sku": "A"}', "ok", {"in_stock": 3})]),
        (call(2, arguments={"sku": "A"}), [result(2, text='{"n": 1}')],  # JSON text is parsed
         [McpToolCall(2, "check_stock", {"sku": "A"}, '{"sku": "A"}', "ok", {"n": 1})]),
        (call(3, arguments={}), [result(3, text="no such sku", error=True)],  # isError
         [McpToolCall(3, "check_stock", {}, "{}", "error", "no such sku")]),
        (call("x", arguments={}), [{"jsonrpc": "2.0", "id": "x", "error": {"code": -32602, "message": "bad"}}],
         [McpToolCall("x", "check_stock", {}, "{}", "error", {"code": -32602, "message": "bad"})]),
        (call(4), [], [McpToolCall(4, "check_stock", None, "null", "error", {"error": "no_answer"})]),  # never answered
        (call(5, arguments=[1]), [result(5, text="ok")], [McpToolCall(5, "check_stock", None, "[1]", "ok", "ok")]),
        ([call(6, "a", {}), {"jsonrpc": "2.0", "method": "notifications/progress"}, call(7, "b", {})],  # a batch
         [result(7, text="1"), result(6, text="2")],
         [McpToolCall(6, "a", {}, "{}", "ok", 2), McpToolCall(7, "b", {}, "{}", "ok", 1)]),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, [result(1, text="x")], []),
        ({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "n"}}, [], []),  # a notification is no call
        ("not json-rpc", [], []),
        (call(1, arguments={}), [result("1", text="a")],  # id 1 and "1" are different ids
         [McpToolCall(1, "check_stock", {}, "{}", "error", {"error": "no_answer"})]),
    ],
)
def test_tool_calls(request_body: object, answers: list[dict], expected: list[McpToolCall]) -> None:
    assert tool_calls(request_body, answers) == expected


def test_messages_of_bodies_and_streams() -> None:
    assert messages({"jsonrpc": "2.0", "id": 1}) == [{"jsonrpc": "2.0", "id": 1}]
    assert messages([{"jsonrpc": "2.0", "id": 1}, {"id": 2}, 3]) == [{"jsonrpc": "2.0", "id": 1}]
    assert messages(None) == [] and messages({"id": 1}) == []
    events = [{"t": 1.0, "data": json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}})}, {"t": 2.0, "data": "{broken"},
              {"t": 3.0, "data": ""}, {"t": 4.0, "data": json.dumps([{"jsonrpc": "2.0", "id": 2, "result": {}}])}]
    assert [m["id"] for m in stream_messages(events)] == [1, 2]
    assert stream_messages(None) == []
