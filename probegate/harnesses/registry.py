"""Harness names -> harnesses: ``fc``, ``react``, ``plan``, ``code``, ``langchain``,
``crewai``, ``openai-agents``, ``openai-agents-chat``, the MCP variants ``langchain-mcp`` and
``crewai-mcp``, ``ollama`` (Ollama's native ``/api/chat``), and ``cmd:"COMMAND"``.

Framework harnesses are imported only when named, and checked right away, so a
missing ``frameworks`` extra is one clear line before the run starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from probegate.harnesses.ablation import MEMORIES, PROTOCOLS, REFERENCE_HARNESSES, Ablation
from probegate.harnesses.base import Harness
from probegate.errors import UsageError


@dataclass(frozen=True)
class HarnessOptions:
    """Run-wide settings a harness factory may use.

    Attributes:
        unsafe_no_sandbox: let the ``code`` harness run model-written code without
            OS isolation (bubblewrap) when it is missing: ``--unsafe-no-sandbox``.
        protocol: ``--protocol``: ``off`` or ``steps`` (step k/N before each model call,
            a completion check before the final answer); reference harnesses only.
        memory: ``--memory``: ``off`` or ``digest`` (a digest of earlier tool results in
            each request); reference harnesses only.
    """

    unsafe_no_sandbox: bool = False
    protocol: str = "off"
    memory: str = "off"

    def ablation(self) -> Ablation:
        """The ablation variables the reference harnesses take.

        Raises:
            UsageError: a value that is not one of :data:`PROTOCOLS` / :data:`MEMORIES`.
        """
        if self.protocol not in PROTOCOLS:
            raise UsageError(f"--protocol must be {' or '.join(PROTOCOLS)}, got {self.protocol!r}")
        if self.memory not in MEMORIES:
            raise UsageError(f"--memory must be {' or '.join(MEMORIES)}, got {self.memory!r}")
        return Ablation(self.protocol, self.memory)

    def refuse_ablation(self, name: str) -> None:
        """Refuse ``--protocol`` / ``--memory`` for a harness that cannot honour them.

        Raises:
            UsageError: one line naming the harness, the options and the harnesses that take them.
        """
        asked = [f"--{opt} {value}" for opt, value in (("protocol", self.protocol), ("memory", self.memory))
                 if value != "off"]
        if asked:
            raise UsageError(f"{' and '.join(asked)}: the {name} harness does not implement it; these options are "
                             f"for the reference harnesses ({', '.join(REFERENCE_HARNESSES)})")


def _fc(options: HarnessOptions) -> Harness:
    from probegate.harnesses.fc import FcHarness

    return FcHarness(ablation=options.ablation())


def _react(options: HarnessOptions) -> Harness:
    from probegate.harnesses.react import ReactHarness

    return ReactHarness(ablation=options.ablation())


def _plan(options: HarnessOptions) -> Harness:
    from probegate.harnesses.plan import PlanHarness

    return PlanHarness(ablation=options.ablation())


def _code(options: HarnessOptions) -> Harness:
    from probegate.harnesses.code import CodeHarness

    return CodeHarness(isolated=not options.unsafe_no_sandbox, ablation=options.ablation())


def _langchain(options: HarnessOptions) -> Harness:
    from probegate.harnesses.langchain_agent import LangChainHarness

    return LangChainHarness()


def _crewai(options: HarnessOptions) -> Harness:
    from probegate.harnesses.crewai_agent import CrewAIHarness

    return CrewAIHarness()


def _openai_agents(options: HarnessOptions) -> Harness:
    from probegate.harnesses.openai_agents import OpenAIAgentsHarness

    return OpenAIAgentsHarness("responses")


def _openai_agents_chat(options: HarnessOptions) -> Harness:
    from probegate.harnesses.openai_agents import OpenAIAgentsHarness

    return OpenAIAgentsHarness("chat")


def _langchain_mcp(options: HarnessOptions) -> Harness:
    from probegate.harnesses.langchain_mcp import LangChainMcpHarness

    return LangChainMcpHarness()


def _crewai_mcp(options: HarnessOptions) -> Harness:
    from probegate.harnesses.crewai_mcp import CrewAIMcpHarness

    return CrewAIMcpHarness()


def _ollama(options: HarnessOptions) -> Harness:
    from probegate.harnesses.ollama_chat import OllamaHarness

    return OllamaHarness()


#: Built-in harness names -> a factory. Framework harnesses import their framework
#: inside the factory, so a missing extra costs nothing until the harness is named.
HARNESSES: dict[str, Callable[[HarnessOptions], Harness]] = {
    "fc": _fc,
    "react": _react,
    "plan": _plan,
    "code": _code,
    "langchain": _langchain,
    "crewai": _crewai,
    "openai-agents": _openai_agents,
    "openai-agents-chat": _openai_agents_chat,
    "langchain-mcp": _langchain_mcp,
    "crewai-mcp": _crewai_mcp,
    "ollama": _ollama,
}

CMD_PREFIX = "cmd:"


#: What ``--harness all`` runs: every built-in style but the variants, which run only
#: when named: the MCP variants (the same styles over another tool transport),
#: ``openai-agents-chat`` (the ``openai-agents`` agent over chat completions: a whole
#: extra leg of the run, as long as ``langchain``'s, for an API comparison) and
#: ``ollama`` (it needs an Ollama server; the embedded server has no ``/api/chat``).
ALL = "all"
MCP_VARIANTS = ("langchain-mcp", "crewai-mcp")
#: Harnesses the embedded model server cannot answer -> why (a run refuses them without
#: ``--model-endpoint`` or ``--gateway``).
NEEDS_ENDPOINT = {"ollama": "it calls Ollama's native /api/chat, which the embedded model server lacks"}
NAMED_ONLY = (*MCP_VARIANTS, "openai-agents-chat", *NEEDS_ENDPOINT)


def expand_harnesses(spec: str, options: HarnessOptions | None = None) -> tuple[list[str], list[str]]:
    """``--harness`` value -> harness names to run, and notes on what was left out.

    ``all`` is every built-in style whose dependencies are installed (a framework
    style without its extra, or one that cannot honour ``--protocol`` / ``--memory``, is
    left out with a note; the variants in :data:`NAMED_ONLY` are left out); ``fc,react`` is a list; a
    ``cmd:`` value is one harness even when its command holds commas.

    Raises:
        UsageError: an empty value.
    """
    spec = spec.strip()
    if not spec:
        raise UsageError(
            "--harness needs a value: fc, react, plan, code, langchain, crewai, openai-agents, openai-agents-chat, "
            "langchain-mcp, crewai-mcp, ollama, all, "
            "or cmd:\"COMMAND\""
        )
    if spec.startswith(CMD_PREFIX):
        return [spec], []
    if spec != ALL:
        return [name.strip() for name in spec.split(",") if name.strip()], []
    names, notes = [], []
    for name in (n for n in HARNESSES if n not in NAMED_ONLY):
        try:
            get_harness(name, options)
        except UsageError as exc:
            notes.append(f"{name} left out: {exc}")
            continue
        names.append(name)
    return names, notes


def harness_names() -> list[str]:
    """Every name :func:`get_harness` accepts (``cmd:`` stands for any command)."""
    return [*HARNESSES, 'cmd:"COMMAND"']


def get_harness(name: str, options: HarnessOptions | None = None) -> Harness:
    """The harness called ``name``, ready to run.

    Args:
        name: a built-in name, or ``cmd:COMMAND`` (the command may be quoted).
        options: run-wide settings (default: :class:`HarnessOptions`).

    Raises:
        UsageError: unknown name, empty command, a framework harness whose extra
            is not installed, ``code`` without bubblewrap (and without
            ``unsafe_no_sandbox``), or ``protocol`` / ``memory`` on a harness other
            than the reference ones.
    """
    options = options or HarnessOptions()
    options.ablation()  # a bad value is named before anything else
    if name.startswith(CMD_PREFIX):
        from probegate.harnesses.cmd import CmdHarness

        options.refuse_ablation("cmd:")
        command = name[len(CMD_PREFIX) :].strip()
        try:
            return CmdHarness(command)
        except ValueError as exc:
            raise UsageError(f'--harness cmd: needs a command, e.g. cmd:"python my_agent.py" ({exc})') from exc
    factory = HARNESSES.get(name)
    if factory is None:
        raise UsageError(f"unknown harness {name!r}: choose one of {', '.join(harness_names())}")
    if name not in REFERENCE_HARNESSES:
        options.refuse_ablation(name)
    harness = factory(options)
    check = getattr(harness, "check", None)
    if check is not None:
        check()
    return harness  # type: ignore[no-any-return]
