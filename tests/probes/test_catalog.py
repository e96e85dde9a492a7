"""The tool catalogue: size, schemas, OpenAI format."""

from __future__ import annotations

import jsonschema
import pytest

from probegate import probes
from probegate.probes.catalog import CATALOG, get_tool, openai_tools, tool_names, unknown_tools

SIDE_EFFECT_TOOLS = {
    "create_event", "create_reminder", "send_email", "place_order", "cancel_order",
    "create_ticket", "set_ticket_priority", "add_ticket_comment", "write_file",
}


def test_catalogue_size_and_domains() -> None:
    assert len(CATALOG) >= 16
    assert len({t.domain for t in CATALOG.values()}) >= 6
    assert {t.name for t in CATALOG.values() if t.side_effect} == SIDE_EFFECT_TOOLS
    assert "delegate" in CATALOG and CATALOG["delegate"].blocking


@pytest.mark.parametrize("name", tool_names())
def test_schema_is_a_closed_valid_object(name: str) -> None:
    tool = get_tool(name)
    jsonschema.Draft202012Validator.check_schema(tool.parameters)
    assert tool.parameters["type"] == "object" and tool.parameters["additionalProperties"] is False
    assert set(tool.parameters["required"]) <= set(tool.parameters["properties"])
    assert all(p.get("description") for p in tool.parameters["properties"].values())
    assert "do not" in tool.description.lower(), "descriptions say when not to use the tool"
    assert tool.returns


def test_openai_format_and_order() -> None:
    tools = openai_tools(["send_email", "get_weather"])
    assert [t["function"]["name"] for t in tools] == ["send_email", "get_weather"]
    assert tools[0]["type"] == "function" and tools[0]["function"]["parameters"] is CATALOG["send_email"].parameters
    assert [t["function"]["name"] for t in openai_tools()] == tool_names()


def test_unknown_names() -> None:
    assert unknown_tools(["get_weather", "fly", "swim"]) == ["fly", "swim"]
    with pytest.raises(ValueError, match="unknown tool"):
        openai_tools(["fly"])
    with pytest.raises(KeyError):
        get_tool("fly")


def test_exported_members() -> None:
    assert probes.__all__ == [
        "CATALOG", "CheckResult", "Feedback", "ProbeOutcome", "ProbeService", "SubAgentRequest", "SubAgentRunner",
        "Tool", "ToolContext", "ToolError", "Validation", "WorldError", "get_tool", "known_checks", "load_world",
        "openai_tools", "run_check", "tool_names", "validate_args", "validate_check",
    ]
    assert all(hasattr(probes, name) for name in probes.__all__)
