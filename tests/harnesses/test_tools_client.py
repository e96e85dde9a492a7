"""The probes client against the real probes mounted in a real gateway."""

from __future__ import annotations

import pytest

from probegate.runner.local_gateway import wait_drained
from probegate.harnesses.tools_client import (
    Observation,
    ProbesError,
    ToolsClient,
    attempt_urls,
    reset_attempt,
)


def test_attempt_urls() -> None:
    assert attempt_urls("http://g:1/", "r", "t", 3) == ("http://g:1/r/r/t/3/v1", "http://g:1/r/r/t/3/tools")


def test_reset_list_and_call(rig) -> None:
    url = rig.gateway.url
    offered = reset_attempt(url, run="r", task="t", attempt=1, tools=["check_stock", "get_price"], feedback="plain")
    assert [t["function"]["name"] for t in offered] == ["check_stock", "get_price"]
    with ToolsClient(attempt_urls(url, "r", "t", 1)[1]) as tools:
        assert [t["function"]["name"] for t in tools.list_tools()] == ["check_stock", "get_price"]
        ok = tools.call("check_stock", {"sku": "SKU-1001"})
        blocked = tools.call("check_stock", '{"sku": ')  # raw text as the model wrote it
        error = tools.call("check_stock", {"sku": "SKU-0000"})
        unknown = tools.call("send_email", {})
    assert (ok.ok, ok.status, ok.body["in_stock"]) == (True, 200, 25)
    assert (blocked.status, blocked.body["error"]) == (422, "invalid_params")
    assert (error.status, error.body["error"], "hint" in error.body) == (400, "not_found", False)  # plain feedback
    assert (unknown.status, unknown.body["error"]) == (404, "unknown_tool")
    assert wait_drained(url)
    rig.gateway.writer.flush()
    calls = rig.probe_calls("r")
    assert [(c.attempt, c.tool, c.status, c.raw_args) for c in calls] == [
        (1, "check_stock", "ok", '{"sku": "SKU-1001"}'),
        (1, "check_stock", "blocked", '{"sku": '),
        (1, "check_stock", "error", '{"sku": "SKU-0000"}'),
        (1, "send_email", "error", "{}"),
    ]


def test_refusals_and_unreachable_probes(rig) -> None:
    with pytest.raises(ProbesError, match=r"reset of r/t/0 refused \(400\)"):
        reset_attempt(rig.gateway.url, run="r", task="t", attempt=0, tools=["no_such_tool"])
    with pytest.raises(ProbesError, match="cannot reach the probes"):
        reset_attempt("http://127.0.0.1:9", run="r", task="t", attempt=0)
    with ToolsClient("http://127.0.0.1:9/r/r/t/0/tools") as tools:
        observation = tools.call("check_stock", {})
        with pytest.raises(ProbesError, match="cannot reach the probes"):
            tools.list_tools()
    assert (observation.status, observation.body["error"]) == (0, "unreachable")
    assert not wait_drained("http://127.0.0.1:9")


def test_observation_text() -> None:
    assert Observation("t", 200, {"a": "ü", "b": [1, 2]}).text() == '{"a": "ü", "b": [1, 2]}'
