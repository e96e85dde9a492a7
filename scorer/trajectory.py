"""The trajectory: the scorer's common language (one object per task attempt).

A trajectory is rebuilt from the capture store alone (see :mod:`probegate.scorer.rebuild.build`)
and written to ``traces/<task>-<attempt>.json``. It is versioned: a reader refuses a
newer version with a clear message.

Shape (JSON)::

    {"version": 1, "run_id", "task_id", "attempt", "model", "harness",
     "call_source": "probes" | "steps" | "mcp-proxy",
     "threads": [{"thread", "parent", "exchanges": [seq...], "dropped": [...]}],
     "steps": [{"step_id", "thread", "exchange_seq", "call_index", "thought",
                "tool_name", "tool_args", "tool_call_id", "observation", "raw_output",
                "parse", "parse_kind", "parse_notes", "finish_reason", "latency_ms",
                "prompt_tokens", "completion_tokens", "probe_call"}],
     "final_answer", "loop_detected", "loop", "max_steps_hit",
     "probe_calls": [{"index", "seq", "tool", "args", "raw_args", "status", "missing",
                      "invalid", "result", "latency_ms", "step_id", "joined_by", "door"}],
     "exchanges": [{"seq", "thread", "path", "status_code", "error", "finish_reason",
                    "flags", "prompt_tokens", "completion_tokens", "latency_ms",
                    "context_size"}],
     "usage": {"model_calls", "prompt_tokens", "completion_tokens", "latency_ms"},
     "world_state": {...} | null,
     "warnings": ["exchange 3: completion is a string, not an object", ...]}

``warnings`` (default ``[]``) lists what the capture held that could not be read;
the steps it touches carry the parse note ``corrupt_capture`` (see
:mod:`probegate.scorer.rebuild.capture_checks`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: Version of the trace file format; bumped on every incompatible change.
TRACE_VERSION = 1

ParseStatus = Literal["ok", "repaired", "failed"]
ParseKind = Literal["fc", "markup", "react", "json", "python", "code", "kv", "text", "none"]
#: Where the attempt's actual calls come from: the probe log, the parsed steps (runs
#: without probes), or the ``tools/call`` messages recorded by the MCP proxy.
CallSource = Literal["probes", "steps", "mcp-proxy"]
#: How a call reached its tool: a probe door, or the MCP recording proxy.
Door = Literal["rest", "mcp", "mitm", "mcp-proxy"]
JoinedBy = Literal["call", "time"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Step(_Model):
    """One model decision: a tool call, or a turn without a call (an answer or a thought).

    A turn with several tool calls (parallel calls) gives one step per call, all with
    the same ``exchange_seq``; the exchange's tokens and latency are on its first step
    (``call_index`` 0) only, so sums over steps equal sums over exchanges.
    """

    step_id: int
    thread: int
    exchange_seq: int
    call_index: int = 0
    thought: str | None = None
    tool_name: str | None = None
    tool_args: dict[str, Any] | None = None
    tool_call_id: str | None = None
    observation: Any = None
    raw_output: str | None = None
    parse: ParseStatus = "ok"
    parse_kind: ParseKind = "none"
    parse_notes: list[str] = Field(default_factory=list)
    finish_reason: str | None = None
    latency_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    probe_call: int | None = None


class ProbeCallRecord(_Model):
    """A probe call as the scorer sees it (``index`` is its position in the attempt)."""

    index: int
    seq: int
    tool: str
    args: Any = None
    raw_args: str | None = None
    status: str = "ok"
    missing: list[str] = Field(default_factory=list)
    invalid: dict[str, str] = Field(default_factory=dict)
    result: Any = None
    latency_ms: float | None = None
    step_id: int | None = None
    joined_by: JoinedBy | None = None
    door: Door = "rest"


class ExchangeRecord(_Model):
    """Wire evidence of one exchange (what attribution reads)."""

    seq: int
    thread: int | None = None
    path: str = ""
    status_code: int | None = None
    error: str | None = None
    error_body: Any = None
    finish_reason: str | None = None
    flags: list[str] = Field(default_factory=list)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    context_size: int | None = None
    client: str | None = None
    server: str | None = None
    tools_chars: int = 0
    tool_results: int = 0
    tool_results_chars: int = 0
    messages_chars: int = 0
    shims: list[str] = Field(default_factory=list)


class DroppedMessage(_Model):
    """An early message of a thread missing from a later request of that thread."""

    exchange_seq: int
    role: str
    excerpt: str


class ThreadInfo(_Model):
    """One conversation thread: the main agent (0) or a sub-agent."""

    thread: int
    parent: int | None = None
    exchanges: list[int] = Field(default_factory=list)
    dropped: list[DroppedMessage] = Field(default_factory=list)


class LoopInfo(_Model):
    """Where a loop was found (rule ``repeat_ok`` or ``repeat_failure``)."""

    rule: Literal["repeat_ok", "repeat_failure"]
    tool: str
    call_indexes: list[int]


class Usage(_Model):
    """Totals over the attempt's exchanges (latency in ms)."""

    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0


class Trajectory(_Model):
    """One task attempt rebuilt from the store (see the module docstring for JSON)."""

    version: int = TRACE_VERSION
    run_id: str
    task_id: str
    attempt: int = 0
    model: str | None = None
    harness: str | None = None
    call_source: CallSource = "probes"
    threads: list[ThreadInfo] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)
    final_answer: str | None = None
    answer_source: Literal["wire", "harness"] = "wire"
    loop_detected: bool = False
    loop: LoopInfo | None = None
    max_steps_hit: bool = False
    probe_calls: list[ProbeCallRecord] = Field(default_factory=list)
    exchanges: list[ExchangeRecord] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    world_state: dict[str, Any] | None = None
    warnings: list[str] = Field(default_factory=list)

    def step(self, step_id: int) -> Step:
        """The step with ``step_id``.

        Raises:
            KeyError: no such step.
        """
        for step in self.steps:
            if step.step_id == step_id:
                return step
        raise KeyError(step_id)

    def call_steps(self) -> list[Step]:
        """Steps that carry a tool call, in order."""
        return [s for s in self.steps if s.tool_name]
