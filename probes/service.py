"""The probe service: world state per (run, task, attempt), validated and logged tool calls.

:class:`ProbeService` is synchronous and cheap (no network, no database waits), so
an ASGI route may call it directly; only ``delegate`` (which waits for a sub-agent)
must run off the event loop (see :meth:`ProbeService.is_blocking`). Every call,
blocked ones included, becomes a ``ProbeCall`` row, and every reset or side effect
replaces the attempt's ``WorldState`` row; both go through the
:class:`~probegate.store.writer.CaptureWriter` queue.

An attempt nobody reset is reset lazily on its first call, from the ``default``
world with every tool and the service's default feedback.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from probegate.store.models import ProbeCall, WorldState, utcnow
from probegate.store.writer import CaptureWriter, Upsert
from probegate.probes.catalog import CATALOG, openai_tools, tool_names, unknown_tools
from probegate.probes.faults import fire_fault
from probegate.probes.tool import Feedback, SubAgentRunner, Tool, ToolContext, ToolError
from probegate.probes.validate import blocked_body, validate_args
from probegate.probes.verify import CheckResult, run_check
from probegate.probes.worlds import WorldError, load_world

log = logging.getLogger("probegate.probes")

AttemptKey = tuple[str, str, int]
FEEDBACKS = ("plain", "actionable")
#: How a call reached the probes: the REST door, the MCP door, the intercepting proxy.
Door = Literal["rest", "mcp", "mitm"]
DOORS: tuple[Door, ...] = ("rest", "mcp", "mitm")


class _Answer(NamedTuple):
    """What one call came to, before it is logged."""

    status: int
    body: dict[str, Any]
    args: Any = None
    missing: tuple[str, ...] = ()
    invalid: dict[str, str] | None = None
    changed: bool = False


class ProbeOutcome(NamedTuple):
    """The answer to one tool call: HTTP status, JSON body, and the logged row."""

    status_code: int
    body: dict[str, Any]
    probe_call_row: ProbeCall


@dataclass
class Attempt:
    """The live state of one task attempt."""

    world: str
    state: dict[str, Any]
    tools: tuple[str, ...]
    feedback: Feedback
    seq: int = 0
    lock: threading.RLock = field(default_factory=threading.RLock)


class ProbeService:
    """Holds attempt worlds and answers tool calls.

    Args:
        writer: where rows go; ``None`` keeps nothing (pure use by a scorer or a test).
        subagent: the runner ``delegate`` hands sub-tasks to; ``None`` makes
            ``delegate`` answer with a tool error.
        default_feedback: feedback of lazily reset attempts.
        max_attempts: attempts kept in memory; the oldest are dropped beyond this
            (their state stays in the store).
    """

    def __init__(
        self,
        writer: CaptureWriter | None = None,
        *,
        subagent: SubAgentRunner | None = None,
        default_feedback: Feedback = "actionable",
        max_attempts: int = 10_000,
    ) -> None:
        self.writer = writer
        self.subagent = subagent
        self.default_feedback: Feedback = default_feedback
        self.max_attempts = max_attempts
        self._attempts: OrderedDict[AttemptKey, Attempt] = OrderedDict()
        self._lock = threading.Lock()

    # -- attempts ------------------------------------------------------------------------
    def reset(
        self,
        run: str,
        task: str,
        attempt: int = 0,
        world: str = "default",
        world_patch: dict[str, Any] | None = None,
        tools: list[str] | tuple[str, ...] | None = None,
        feedback: Feedback | None = None,
    ) -> list[dict[str, Any]]:
        """Start (or restart) an attempt from a world fixture.

        Args:
            run, task, attempt: the attempt.
            world: fixture name or path; ``world_patch`` is deep-merged into it.
            tools: the tools offered (``None``: the whole catalogue).
            feedback: ``plain`` or ``actionable`` (``None``: the service default).

        Returns:
            The offered tools in OpenAI format.

        Raises:
            WorldError: the world cannot be loaded.
            ValueError: an unknown tool name or feedback style.
        """
        fresh = self._new_attempt(world, world_patch, tools, feedback)
        key = (run, task, attempt)
        with self._lock:
            old = self._attempts.pop(key, None)
            fresh.seq = old.seq if old else 0
            self._attempts[key] = fresh
            self._evict()
        self._save_state(key, fresh)
        return openai_tools(fresh.tools)

    def _new_attempt(
        self,
        world: str,
        world_patch: dict[str, Any] | None,
        tools: list[str] | tuple[str, ...] | None,
        feedback: Feedback | None,
    ) -> Attempt:
        offered = tuple(tool_names() if tools is None else tools)
        if unknown_tools(offered):
            raise ValueError(f"unknown tool(s): {', '.join(unknown_tools(offered))}")
        style = feedback or self.default_feedback
        if style not in FEEDBACKS:
            raise ValueError(f"feedback must be plain or actionable, got {style!r}")
        state = load_world(world, world_patch)
        self._check_faults(state)
        return Attempt(world, state, offered, style)

    def _check_faults(self, state: dict[str, Any]) -> None:
        bad = [f["tool"] for f in state.get("faults", []) if f["tool"] not in CATALOG]
        if bad:
            raise WorldError(f"faults name unknown tool(s): {', '.join(bad)}")

    def _evict(self) -> None:
        while len(self._attempts) > self.max_attempts:
            self._attempts.popitem(last=False)

    def _attempt(self, key: AttemptKey) -> Attempt:
        with self._lock:
            found = self._attempts.get(key)
            if found is not None:
                self._attempts.move_to_end(key)
                return found
        fresh = self._new_attempt("default", None, None, None)
        with self._lock:  # two first calls may race: the first one's world wins
            found = self._attempts.setdefault(key, fresh)
            self._evict()
        if found is fresh:
            self._save_state(key, fresh)
        return found

    def tools_for(self, run: str, task: str, attempt: int = 0) -> list[dict[str, Any]]:
        """The tools offered to an attempt (after a reset), else the whole catalogue."""
        found = self._attempts.get((run, task, attempt))
        return openai_tools(found.tools if found else None)

    def state(self, run: str, task: str, attempt: int = 0) -> tuple[str, dict[str, Any]] | None:
        """``(world name, a copy of the state)`` of a live attempt, else ``None``."""
        found = self._attempts.get((run, task, attempt))
        if found is None:
            return None
        with found.lock:
            return found.world, copy.deepcopy(found.state)

    def is_blocking(self, tool: str) -> bool:
        """Whether calling ``tool`` may wait a long time (run it off the event loop)."""
        return tool in CATALOG and CATALOG[tool].blocking

    def verify(self, run: str, task: str, attempt: int, checks: list[dict[str, Any]]) -> list[CheckResult]:
        """Answer outcome checks from the attempt's live state (a fresh default world if none).

        Raises:
            ValueError: an unknown check or invalid parameters.
        """
        found = self.state(run, task, attempt)
        state = found[1] if found else load_world("default")
        return [run_check(state, check) for check in checks]

    # -- calls ---------------------------------------------------------------------------
    def call(
        self, run: str, task: str, attempt: int, tool: str, raw_body: bytes, door: Door = "rest"
    ) -> ProbeOutcome:
        """Validate, run and log one tool call.

        Args:
            run, task, attempt: the attempt (reset lazily when unknown).
            tool: the tool name from the URL.
            raw_body: the request body exactly as sent (JSON object of arguments).
            door: ``rest`` (HTTP), ``mcp`` (the MCP door) or ``mitm`` (the
                intercepting proxy); logged with the call, nothing else depends on it.

        Returns:
            200 and the tool's result; 422 blocked (invalid arguments, not run);
            400 tool error; 404 unknown tool; 500 only for a bug in a tool.

        Raises:
            ValueError: an unknown ``door``.
        """
        if door not in DOORS:
            raise ValueError(f"door must be one of {', '.join(DOORS)}, got {door!r}")
        t0 = time.perf_counter()
        key = (run, task, attempt)
        current = self._attempt(key)
        with current.lock:
            current.seq += 1
            seq = current.seq
        answer = self._execute(key, current, seq, tool, raw_body)
        row = ProbeCall(
            run_id=run,
            task_id=task,
            attempt=attempt,
            seq=seq,
            at=utcnow(),
            tool=tool,
            raw_args=raw_body.decode("utf-8", errors="replace"),
            args=answer.args,
            missing=list(answer.missing),
            invalid=dict(answer.invalid or {}),
            status="ok" if answer.status == 200 else "blocked" if answer.status == 422 else "error",
            result=answer.body,
            feedback=current.feedback,
            latency_ms=(time.perf_counter() - t0) * 1000.0,
            via="mitm" if door == "mitm" else "direct",
            door=door,
        )
        self._emit(row)
        if answer.changed:
            self._save_state(key, current)
        return ProbeOutcome(answer.status, answer.body, row)

    def _execute(self, key: AttemptKey, current: Attempt, seq: int, name: str, raw: bytes) -> _Answer:
        if name not in current.tools:
            known = list(current.tools)
            return _Answer(404, {"error": "unknown_tool", "message": f"no tool {name!r} is offered here", "known": known})
        tool = CATALOG[name]
        verdict = validate_args(tool.parameters, raw)
        if not verdict.ok or verdict.args is None:
            # the row has no `unknown` column: unknown keys are logged as invalid
            invalid = dict(verdict.invalid, **{k: "unknown parameter" for k in verdict.unknown})
            body = blocked_body(name, tool.parameters, verdict, current.feedback)
            return _Answer(422, body, verdict.args, tuple(verdict.missing), invalid)
        ctx = ToolContext(current.state, *key, seq=seq, offered=current.tools, feedback=current.feedback,
                          subagent=self.subagent)
        status, body = self._run(tool, ctx, current, verdict.args)
        return _Answer(status, body, verdict.args, changed=ctx.changed)

    def _run(self, tool: Tool, ctx: ToolContext, current: Attempt, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        try:
            with current.lock:
                fault = fire_fault(current.state, tool.name, args)
                if fault is not None:
                    ctx.changed = True
                    raise fault
                if not tool.blocking:
                    return 200, tool.run(ctx, args)
            # blocking tools (delegate) run without the lock: the sub-agent calls tools of this attempt
            return 200, tool.run(ctx, args)
        except ToolError as exc:
            return 400, exc.body(current.feedback)
        except Exception as exc:  # a bug in a tool: answer and log it, never lose the call
            log.exception("probe tool %s failed", tool.name)
            return 500, {"error": "internal", "message": f"{tool.name} failed: {type(exc).__name__}"}

    # -- store ---------------------------------------------------------------------------
    def _emit(self, item: ProbeCall | Upsert) -> None:
        if self.writer is None:
            return
        if not self.writer.submit_nowait(item):
            self.writer.submit_blocking(item)  # back-pressure: the store is behind

    def _save_state(self, key: AttemptKey, current: Attempt) -> None:
        if self.writer is None:
            return
        with current.lock:
            snapshot = copy.deepcopy(current.state)
        row = WorldState(run_id=key[0], task_id=key[1], attempt=key[2], updated_at=utcnow(),
                         world=current.world, state=snapshot)
        self._emit(Upsert(row))
