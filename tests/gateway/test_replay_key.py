"""The replay key: what matters for matching, what never does (pure)."""

from __future__ import annotations

import json

import pytest

from probegate.gateway.replay_key import distance, first_difference, normalize_request, request_key

BASE = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0,
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]}


def test_key_order_whitespace_and_number_form_never_matter() -> None:
    shuffled = json.loads(json.dumps({k: BASE[k] for k in reversed(list(BASE))}, indent=4))
    shuffled["temperature"] = 0
    assert request_key("/v1/chat/completions", BASE) == request_key("/v1/chat/completions", shuffled)


@pytest.mark.parametrize("extra", [{"user": "u1"}, {"metadata": {"a": 1}}, {"stream_options": {"include_usage": True}},
                                   {"x_vendor": 1}])
def test_non_decisive_fields_are_ignored(extra: dict) -> None:
    assert request_key("/p", BASE) == request_key("/p", {**BASE, **extra})


@pytest.mark.parametrize("change", [{"temperature": 0.7}, {"messages": []}, {"tool_choice": "none"}, {"stream": True},
                                    {"model": "other"}, {"seed": 1}])
def test_decisive_fields_change_the_key(change: dict) -> None:
    assert request_key("/p", BASE) != request_key("/p", {**BASE, **change})


def test_route_is_part_of_the_key_and_model_can_be_ignored() -> None:
    assert request_key("/v1/chat/completions", BASE) != request_key("/v1/completions", BASE)
    assert request_key("/p", BASE, ignore_model=True) == request_key("/p", {**BASE, "model": "x"}, ignore_model=True)


def test_stream_false_equals_absent() -> None:
    assert normalize_request({"model": "m"}) == normalize_request({"model": "m", "stream": False})


@pytest.mark.parametrize(
    ("a", "b", "where"),
    [
        ({"messages": [{"content": "a"}]}, {"messages": [{"content": "b"}]}, "messages[0].content"),
        ({"messages": [1]}, {"messages": [1, 2]}, "messages[1]"),
        ({"a": 1}, {"a": 1, "b": 2}, "b"),
        ({"a": 1}, {"a": 1}, None),
        (1, 2, "(body)"),
    ],
)
def test_first_difference(a, b, where) -> None:
    assert first_difference(a, b) == where


def test_distance_ranks_nearer_requests_lower() -> None:
    near = {**BASE, "temperature": 0.1}
    far = {"model": "z", "messages": [], "temperature": 1}
    assert distance(BASE, near) < distance(BASE, far)


CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "check_stock", "arguments": {"sku": "A"}}}


@pytest.mark.parametrize(
    ("other", "same"),
    [
        ({**CALL, "params": {**CALL["params"], "_meta": {"progressToken": 7}}}, True),  # progress tokens vary
        ({**CALL, "params": {**CALL["params"], "arguments": {"sku": "B"}}}, False),
        ({**CALL, "id": 4}, False),  # the recorded answer carries the id
        ({**CALL, "method": "tools/list"}, False),
        ([CALL], False),  # a batch is not the message
    ],
)
def test_json_rpc_messages_keep_method_id_and_params(other: object, same: bool) -> None:
    assert (request_key("/mcp/shop", CALL) == request_key("/mcp/shop", other)) is same
