"""Attribution from the URL (pure): which run, task and attempt, and which route kind."""

from __future__ import annotations

import pytest

from probegate.urls import Target, parse_path


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/r/run1/t1/3/v1/chat/completions", Target("run1", "t1", 3, "model", "/v1/chat/completions", "/r/run1/t1/3")),
        ("/r/run1/t1/tools/get_weather", Target("run1", "t1", 0, "tools", "get_weather", "/r/run1/t1")),
        ("/r/run1/t1/2/mcp", Target("run1", "t1", 2, "mcp", "/mcp", "/r/run1/t1/2")),
        ("/r/run1/t1/mcp", Target("run1", "t1", 0, "mcp", "/mcp", "/r/run1/t1")),
        ("/r/run1/t1/0/mcp/shop", Target("run1", "t1", 0, "mcp_proxy", "/mcp/shop", "/r/run1/t1/0")),
        ("/mcp", Target("adhoc", "-", 0, "mcp", "/mcp", "")),
        ("/mcp/docs", Target("adhoc", "-", 0, "mcp_proxy", "/mcp/docs", "")),
        ("/r/run1/t1/0/mcp/shop/extra", None),  # one name, no deeper path
        ("/r/run1/t1/0/mcp/bad name", None),
        ("/r/run1/t1/0/mcp/", None),
        ("/r/run1/t1/0/mcpx", None),
    ],
)
def test_parse_path(path: str, expected: Target | None) -> None:
    assert parse_path(path) == expected
