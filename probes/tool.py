"""What a probe tool is: an OpenAI schema plus a deterministic implementation.

A :class:`Tool` pairs its JSON Schema (``parameters``) with ``run(ctx, args)``, a
function over the attempt's world state. ``run`` only ever sees arguments that passed
validation; it raises :class:`ToolError` for what a real API would refuse (an
unknown SKU, an order that already shipped) and records side effects through
:meth:`ToolContext.side_effect` so outcome checks can find them. Nothing here reads
a clock or a random source: "now" is part of the world.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Literal

from probegate.probes.normalize import norm_id, norm_text

Feedback = Literal["plain", "actionable"]
SideEffect = Literal[
    "email", "reminder", "event", "ticket", "ticket_priority", "ticket_comment", "order", "order_cancel", "file"
]


class ToolError(Exception):
    """A refusal a real API would give (HTTP 400 from the probe).

    Args:
        code: a short machine code (``not_found``, ``conflict``, ``unavailable``...).
        message: what went wrong, in one sentence.
        hint: how to recover; only shown with ``actionable`` feedback.
    """

    def __init__(self, code: str, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint

    def body(self, feedback: Feedback) -> dict[str, Any]:
        """The JSON body the probe answers with."""
        out: dict[str, Any] = {"error": self.code, "message": self.message}
        if feedback == "actionable" and self.hint:
            out["hint"] = self.hint
        return out


@dataclass(frozen=True)
class SubAgentRequest:
    """What the ``delegate`` tool hands to the configured sub-agent runner.

    Attributes:
        run: run id of the delegating attempt.
        task: task id of the delegating attempt.
        attempt: attempt number.
        instruction: the sub-task, as the main agent wrote it.
        tools: tool names the sub-agent may use (never ``delegate`` itself).
        feedback: the attempt's feedback style.
        parent_seq: ``seq`` of the delegate call in the probe log.
    """

    run: str
    task: str
    attempt: int
    instruction: str
    tools: tuple[str, ...]
    feedback: Feedback
    parent_seq: int


SubAgentRunner = Callable[[SubAgentRequest], str]


@dataclass
class ToolContext:
    """One tool call's view of its attempt: the mutable world state and who is calling."""

    state: dict[str, Any]
    run: str = "adhoc"
    task: str = "-"
    attempt: int = 0
    seq: int = 0
    offered: tuple[str, ...] = ()
    feedback: Feedback = "actionable"
    subagent: SubAgentRunner | None = None
    changed: bool = False

    # -- time -------------------------------------------------------------------------
    @property
    def now(self) -> datetime:
        """The world's current local date and time (naive, in ``now.timezone``)."""
        now = self.state["now"]
        return datetime.fromisoformat(f"{now['date']}T{now['time']}")

    @property
    def today(self) -> date:
        """The world's current date."""
        return self.now.date()

    def utc_offset(self) -> timedelta:
        """The world's UTC offset (``now.utc_offset``, e.g. ``+01:00``)."""
        return parse_offset(self.state["now"]["utc_offset"])

    # -- lookups and ids ---------------------------------------------------------------
    def entity(self, collection: str, key: str, label: str, hint: str | None = None) -> dict[str, Any]:
        """The entity ``key`` of ``state[collection]``, looked up case-insensitively.

        Raises:
            ToolError: ``not_found`` when there is no such entity.
        """
        items: dict[str, Any] = self.state.get(collection, {})
        wanted = norm_id(key)
        for item_id, item in items.items():
            if norm_id(item_id) == wanted:
                return dict(item, id=item_id)
        raise ToolError("not_found", f"unknown {label} {key!r}", hint)

    def next_id(self, counter: str, prefix: str) -> str:
        """The next id from the world's counters (``TCK-3008``); deterministic."""
        counters = self.state.setdefault("counters", {})
        counters[counter] = int(counters.get(counter, 0)) + 1
        return f"{prefix}{counters[counter]}"

    def side_effect(self, tool: str, kind: SideEffect, ref: str, args: dict[str, Any]) -> None:
        """Record that this call changed the world (checked by ``probegate.probes.verify``)."""
        self.state.setdefault("side_effects", []).append(
            {"seq": self.seq, "tool": tool, "kind": kind, "ref": ref, "args": args}
        )
        self.changed = True


@dataclass(frozen=True)
class Tool:
    """One probe tool.

    Attributes:
        name: the tool name agents call.
        domain: the business area (``email``, ``orders``...).
        description: what it does and when NOT to use it (shown to the model).
        parameters: JSON Schema of the arguments (an object, ``additionalProperties: false``).
        run: the implementation ``(ctx, args) -> result``.
        side_effect: the kind of world change it makes, ``None`` for read-only tools.
        returns: a one-line summary of the result, for the docs.
        blocking: runs outside the attempt lock and off the event loop (``delegate``).
    """

    name: str
    domain: str
    description: str
    parameters: dict[str, Any]
    run: Callable[[ToolContext, dict[str, Any]], dict[str, Any]] = field(repr=False)
    side_effect: SideEffect | None = None
    returns: str = ""
    blocking: bool = False

    def openai(self) -> dict[str, Any]:
        """The tool in OpenAI ``tools`` format."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


def tool(
    name: str,
    domain: str,
    description: str,
    parameters: dict[str, Any],
    *,
    side_effect: SideEffect | None = None,
    returns: str = "",
    blocking: bool = False,
) -> Callable[[Callable[[ToolContext, dict[str, Any]], dict[str, Any]]], Tool]:
    """Decorator turning an implementation function into a :class:`Tool`."""

    def wrap(run: Callable[[ToolContext, dict[str, Any]], dict[str, Any]]) -> Tool:
        return Tool(name, domain, description, parameters, run, side_effect, returns, blocking)

    return wrap


def parse_offset(text: str) -> timedelta:
    """``+05:30`` -> ``timedelta(hours=5, minutes=30)``.

    Raises:
        ValueError: not a ``±HH:MM`` offset.
    """
    sign = -1 if text.startswith("-") else 1
    hours, _, minutes = text.lstrip("+-").partition(":")
    return sign * timedelta(hours=int(hours), minutes=int(minutes or 0))


def find_by_name(items: dict[str, Any], query: str, *fields: str) -> list[str]:
    """Ids of ``items`` whose ``fields`` contain ``query`` (normalised), in id order."""
    wanted = norm_text(query)
    return [
        item_id
        for item_id, item in sorted(items.items())
        if any(wanted in norm_text(item.get(f, "")) for f in fields)
    ]
