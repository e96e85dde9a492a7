"""Opt-in shims: each rewrites exactly what it names, logs it, and is off by default."""

from __future__ import annotations

import json

import httpx
import pytest
from sqlmodel import Session, select

from probegate.gateway.compat import apply_rules, parse_rules
from probegate.errors import UsageError
from probegate.store import Exchange

CREW_FOLLOW_UP = {
    "model": "m",
    "tools": [{"type": "function", "function": {"name": "w", "parameters": {"type": "object"}}}],
    "parallel_tool_calls": False,
    "max_completion_tokens": 64,
    "messages": [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": {"city": "Oslo"}}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ],
}


def test_parse_rules() -> None:
    rules = parse_rules(["null-content,drop-params=parallel_tool_calls,max_completion_tokens", "args-as-string"])
    assert "null-content" in rules and "args-as-string" in rules and "max-tokens-alias" not in rules
    assert rules.value("drop-params") == ("parallel_tool_calls", "max_completion_tokens")
    assert rules.names == ("args-as-string", "null-content", "drop-params=parallel_tool_calls+max_completion_tokens")
    assert not parse_rules(None) and not parse_rules([])
    with pytest.raises(UsageError, match="unknown --compat rule 'bogus'"):
        parse_rules("bogus")


@pytest.mark.parametrize(
    ("spec", "paths"),
    [
        ("null-content", ["messages[1].content"]),
        ("args-as-string", ["messages[1].tool_calls[0].function.arguments"]),
        ("drop-params=parallel_tool_calls", ["parallel_tool_calls"]),
        ("max-tokens-alias", ["max_completion_tokens"]),
        ("tool-choice-auto", ["tool_choice"]),
    ],
)
def test_each_rule_changes_only_what_it_names(spec: str, paths: list[str]) -> None:
    body = json.dumps(CREW_FOLLOW_UP).encode()
    new, changes = apply_rules(parse_rules(spec), body)
    assert [c["path"] for c in changes] == paths
    before, after = CREW_FOLLOW_UP, json.loads(new)
    untouched = {k: v for k, v in before.items()
                 if k not in ("messages", "parallel_tool_calls", "max_completion_tokens", "tool_choice")}
    assert {k: after[k] for k in untouched} == untouched
    if spec != "null-content":
        assert after["messages"][1]["content"] is None
    if spec != "args-as-string":
        assert after["messages"][1]["tool_calls"][0]["function"]["arguments"] == {"city": "Oslo"}


def test_cap_max_length_drops_only_long_limits() -> None:
    tools = [{"type": "function", "function": {"name": "send_email", "parameters": {"type": "object", "properties": {
        "subject": {"type": "string", "maxLength": 300},
        "body": {"type": "string", "maxLength": 20000},
        "cc": {"type": "array", "items": {"type": "string", "maxLength": 5000}}}}}}]
    new, changes = apply_rules(parse_rules("cap-max-length"), json.dumps({"model": "m", "tools": tools}).encode())
    props = json.loads(new)["tools"][0]["function"]["parameters"]["properties"]
    assert props["subject"]["maxLength"] == 300 and "maxLength" not in props["body"]
    assert "maxLength" not in props["cc"]["items"]
    assert [(c["path"], c["from"]) for c in changes] == [
        ("tools[0].function.parameters.properties.body.maxLength", 20000),
        ("tools[0].function.parameters.properties.cc.items.maxLength", 5000)]
    assert apply_rules(parse_rules("cap-max-length=100"), json.dumps({"tools": tools}).encode())[1][0]["from"] == 300
    with pytest.raises(UsageError, match="give a positive number of characters"):
        parse_rules("cap-max-length=lots")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, 1024),
        ({"model": "m", "messages": [], "max_tokens": None}, 1024),
        ({"model": "m", "prompt": "Once upon"}, 1024),
        ({"model": "m", "messages": [], "max_tokens": 16}, 16),
        ({"model": "m", "messages": [], "max_completion_tokens": 32}, None),
        ({"model": "m", "input": "embed me"}, None),
    ],
)
def test_default_max_tokens_fills_only_a_missing_limit(body: dict, expected: int | None) -> None:
    new, changes = apply_rules(parse_rules("default-max-tokens"), json.dumps(body).encode())
    after = json.loads(new)
    assert after.get("max_tokens") == expected
    assert after.get("max_completion_tokens") == body.get("max_completion_tokens")
    filled = "max_tokens" not in body or body["max_tokens"] is None
    assert changes == ([{"rule": "default-max-tokens", "path": "max_tokens", "from": None, "to": 1024}]
                       if filled and expected else [])


def test_default_max_tokens_takes_a_limit_and_runs_after_the_alias() -> None:
    rules = parse_rules("max-tokens-alias,default-max-tokens=256,cap-max-length")
    assert rules.names == ("cap-max-length=1000", "default-max-tokens=256", "max-tokens-alias")
    new, changes = apply_rules(rules, json.dumps({"messages": [], "max_completion_tokens": 64}).encode())
    assert json.loads(new) == {"messages": [], "max_tokens": 64}
    assert [c["rule"] for c in changes] == ["max-tokens-alias"]
    assert json.loads(apply_rules(rules, b'{"messages": []}')[0])["max_tokens"] == 256
    for bad in ("default-max-tokens=0", "default-max-tokens=-5", "default-max-tokens=many"):
        with pytest.raises(UsageError, match="give a positive number of tokens"):
            parse_rules(bad)


def test_tool_choice_auto_respects_a_given_choice() -> None:
    body = json.dumps({**CREW_FOLLOW_UP, "tool_choice": "none"}).encode()
    assert apply_rules(parse_rules("tool-choice-auto"), body) == (body, [])


def test_nothing_to_do_keeps_bytes_identical() -> None:
    body = b'{"model": "m",  "messages": []}'
    assert apply_rules(parse_rules("null-content,max-tokens-alias"), body) == (body, [])
    assert apply_rules(parse_rules("null-content"), b"not json") == (b"not json", [])
    odd = b'{"messages": [{"role": "assistant", "tool_calls": 1}]}'  # a number where the call list belongs
    assert apply_rules(parse_rules("args-as-string"), odd) == (odd, [])


def test_gateway_applies_and_records_shims(upstream, gateway_factory) -> None:
    script, server = upstream
    gw = gateway_factory(server.url, compat=["null-content", "args-as-string"])
    httpx.post(f"{gw.base('r', 'crew')}/chat/completions", json=CREW_FOLLOW_UP)
    sent = script.requests[-1].json()
    assert sent["messages"][1]["content"] == ""
    assert sent["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"city": "Oslo"}'
    gw.flush()
    with Session(gw.engine) as session:
        row = session.exec(select(Exchange).where(Exchange.task_id == "crew")).one()
    assert [c["rule"] for c in row.compat] == ["null-content", "args-as-string"]
    assert row.request_original["messages"][1]["content"] is None
    assert row.request_body["messages"][1]["content"] == ""
    assert httpx.get(f"{gw.url}/probegate/health").json()["compat"] == ["args-as-string", "null-content"]


def test_without_shims_the_fault_passes_untouched(upstream, gateway) -> None:
    script, _ = upstream
    body = json.dumps(CREW_FOLLOW_UP).encode()
    httpx.post(f"{gateway.base()}/chat/completions", content=body, headers={"content-type": "application/json"})
    assert script.requests[-1].body == body
    gateway.flush()
    with Session(gateway.engine) as session:
        row = session.exec(select(Exchange)).one()
    assert row.compat is None and row.request_original is None


def test_system_for_tools_adds_an_empty_system_message_only_when_needed() -> None:
    new, changes = apply_rules(parse_rules("system-for-tools"), json.dumps(CREW_FOLLOW_UP).encode())
    after = json.loads(new)
    assert after["messages"][0] == {"role": "system", "content": ""}
    assert after["messages"][1:] == CREW_FOLLOW_UP["messages"]
    assert changes == [{"rule": "system-for-tools", "path": "messages[0]", "from": None,
                        "to": {"role": "system", "content": ""}}]
    with_system = json.dumps({**CREW_FOLLOW_UP, "messages": [{"role": "system", "content": "s"},
                                                             *CREW_FOLLOW_UP["messages"]]}).encode()
    assert apply_rules(parse_rules("system-for-tools"), with_system) == (with_system, [])
    no_tools = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    assert apply_rules(parse_rules("system-for-tools"), no_tools) == (no_tools, [])



def test_bound_strings_bounds_only_free_strings() -> None:
    params = {"type": "object", "properties": {
        "subject": {"type": "string", "maxLength": 300},
        "body": {"type": "string", "maxLength": 20000},
        "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
        "priority": {"type": "string", "enum": ["low", "high"]},
        "note": {"type": ["string", "null"]},
        "type": {"type": "string"},
        "to": {"type": "array", "items": {"type": "string", "format": "email"}},
        "tags": {"type": "array", "items": {"type": "string"}},
        "count": {"type": "integer"}}}
    body = {"model": "m", "tools": [{"type": "function", "function": {"name": "send_email", "parameters": params}}],
            "functions": [{"name": "legacy", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}]}
    new, changes = apply_rules(parse_rules("cap-max-length,bound-strings=500"), json.dumps(body).encode())
    after = json.loads(new)
    props = after["tools"][0]["function"]["parameters"]["properties"]
    bounded = {name: p.get("maxLength", p.get("items", {}).get("maxLength")) for name, p in props.items()}
    assert bounded == {"subject": 300, "body": 500, "date": None, "priority": None, "note": 500, "type": 500,
                       "to": None, "tags": 500, "count": None}
    assert after["functions"][0]["parameters"]["properties"]["q"]["maxLength"] == 500
    base = "tools[0].function.parameters.properties"
    assert [(c["rule"], c["path"]) for c in changes] == [
        ("cap-max-length", f"{base}.body.maxLength"),
        ("bound-strings", f"{base}.body.maxLength"), ("bound-strings", f"{base}.note.maxLength"),
        ("bound-strings", f"{base}.type.maxLength"), ("bound-strings", f"{base}.tags.items.maxLength"),
        ("bound-strings", "functions[0].parameters.properties.q.maxLength")]
    assert parse_rules("bound-strings").value("bound-strings") == 1000
    assert apply_rules(parse_rules("bound-strings"), b'{"tools": 3, "messages": []}') == (b'{"tools": 3, "messages": []}', [])


@pytest.mark.parametrize(("message", "content"), [
    ({"role": "tool", "tool_call_id": "c1", "content": "sunny"}, "Result of w (call c1):\nsunny"),
    ({"role": "tool", "tool_call_id": "c1", "name": "x", "content": [{"type": "text", "text": "a"}]}, "Result of x (call c1):\na"),
    ({"role": "tool", "tool_call_id": "zz", "content": None}, "Result of (call zz):\n"),
    ({"role": "function", "name": "w", "content": "1"}, "Result of w:\n1"),
    ({"role": "tool", "content": "?"}, "Tool result:\n?"),
])
def test_tool_results_as_user_names_the_call(message: dict, content: str) -> None:
    body = {**CREW_FOLLOW_UP, "messages": [*CREW_FOLLOW_UP["messages"][:2], message]}
    new, changes = apply_rules(parse_rules("tool-results-as-user"), json.dumps(body).encode())
    after = json.loads(new)
    assert after["messages"][2] == {"role": "user", "content": content}
    assert after["messages"][:2] == body["messages"][:2]
    assert changes == [{"rule": "tool-results-as-user", "path": "messages[2]",
                        "from": {"role": message["role"], "tool_call_id": message.get("tool_call_id")},
                        "to": {"role": "user", "header": content.split("\n")[0]}}]


def test_every_rule_module_is_registered_once() -> None:
    """A rule module that is not in the registry's ORDER would be dead code."""
    import pkgutil

    from probegate.gateway import compat

    modules = {m.name for m in pkgutil.iter_modules(compat.__path__)} - {"registry", "rule"}
    assert sorted(rule.name.replace("-", "_") for rule in compat.ORDER) == sorted(modules)
    assert len(compat.RULES) == len(compat.ORDER)
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ([{"type": "text", "text": '{"t": 1}'}], '{"t": 1}'),  # an MCP tool result, as the MCP clients pass it on
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "a\nb"),
        ("already text", "already text"),
        ([{"type": "image", "data": "..."}], [{"type": "image", "data": "..."}]),  # not only text: left alone
        ([], []),
    ],
)
def test_tool_content_text_joins_text_parts_of_tool_messages(content: object, expected: object) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]},
                                       {"role": "tool", "tool_call_id": "c1", "content": content}]}
    new, changes = apply_rules(parse_rules("tool-content-text"), json.dumps(body).encode())
    after = json.loads(new)
    assert after["messages"][1]["content"] == expected
    assert after["messages"][0]["content"] == [{"type": "text", "text": "hi"}]  # only tool messages
    assert [c["path"] for c in changes] == (["messages[1].content"] if expected != content else [])
