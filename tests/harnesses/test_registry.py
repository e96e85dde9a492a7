"""Harness names."""

from __future__ import annotations

import pytest

from probegate.harnesses.cmd import CmdHarness
from probegate.harnesses.registry import HARNESSES, get_harness, harness_names
from probegate.errors import UsageError


@pytest.mark.parametrize("name", ["fc", "react", "plan", "code", "ollama"])
def test_builtin_harnesses(name: str) -> None:
    assert get_harness(name).name == name


@pytest.mark.frameworks
@pytest.mark.filterwarnings("ignore::ImportWarning")  # importing CrewAI 1.15 warns about its own modules
@pytest.mark.parametrize("name", ["langchain", "crewai", "openai-agents", "openai-agents-chat", "langchain-mcp", "crewai-mcp"])
def test_framework_harnesses(name: str) -> None:
    assert get_harness(name).name == name


def test_cmd_harness_splits_the_command() -> None:
    harness = get_harness('cmd:python "my agent.py" --fast')
    assert isinstance(harness, CmdHarness)
    assert harness.argv == ["python", "my agent.py", "--fast"]


@pytest.mark.parametrize(("name", "message"), [("fcc", "unknown harness 'fcc'"), ("cmd:", "needs a command"),
                                               ("cmd:'unclosed", "needs a command")])
def test_bad_names_are_usage_errors(name: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        get_harness(name)


def test_names_listed() -> None:
    assert harness_names() == [*HARNESSES, 'cmd:"COMMAND"']


@pytest.mark.frameworks
@pytest.mark.filterwarnings("ignore::ImportWarning")  # "all" imports CrewAI when installed: it warns about itself
def test_all_leaves_the_named_only_variants_out() -> None:
    from probegate.harnesses.registry import NAMED_ONLY, expand_harnesses

    names, _ = expand_harnesses("all")
    assert "openai-agents" in names and "langchain" in names
    assert not set(NAMED_ONLY) & set(names)
    assert expand_harnesses("openai-agents,openai-agents-chat")[0] == ["openai-agents", "openai-agents-chat"]
