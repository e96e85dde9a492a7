"""The probes' HTTP API (docs/probes-api.md), mounted in the gateway's FastAPI app.

Tool routes exist for both attribution prefixes, ``/r/{run}/{task}/tools...`` and
``/r/{run}/{task}/{attempt}/tools...`` (plus bare ``/tools...``, attributed like a
bare ``/v1``); :func:`probegate.urls.parse_path` reads run, task and attempt
from the path so the probes and the model pass-through agree on attribution. The
service is synchronous and cheap, so tool calls run on the event loop, except the
blocking ``delegate``, which runs in the thread pool (its sub-agent calls back into
this same server). A request may say ``x-probegate-via: mitm`` (the intercepting
proxy does) to be logged as such (door ``mitm``); every other call is door ``rest``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import FastAPI, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from sqlalchemy.engine import Engine

from probegate.errors import UsageError
from probegate.ids import check_id
from probegate.urls import ADHOC_RUN, ADHOC_TASK, Target, parse_path
from probegate.store.writer import CaptureWriter
from probegate.probes.service import ProbeService
from probegate.probes.store import read_world_state
from probegate.probes.verify import run_check
from probegate.probes.worlds import WorldError, load_world

PREFIXES = ("/r/{run}/{task}", "/r/{run}/{task}/{attempt:int}", "")


def _id_rule(kind: str) -> AfterValidator:
    def check(value: str) -> str:
        try:
            return check_id(value, kind)
        except UsageError as exc:  # pydantic wants ValueError
            raise ValueError(str(exc)) from None

    return AfterValidator(check)


RunId = Annotated[str, _id_rule("run")]
TaskId = Annotated[str, _id_rule("task")]


class ResetRequest(BaseModel):
    """Body of ``POST /probegate/attempts/reset``."""

    model_config = ConfigDict(extra="forbid")
    run: RunId
    task: TaskId
    attempt: int = Field(0, ge=0)
    world: str = "default"
    world_patch: dict[str, Any] = Field(default_factory=dict)
    tools: list[str] | None = None
    feedback: Literal["plain", "actionable"] | None = None


class VerifyRequest(BaseModel):
    """Body of ``POST /probegate/verify``."""

    model_config = ConfigDict(extra="forbid")
    run: RunId
    task: TaskId
    attempt: int = Field(0, ge=0)
    checks: list[dict[str, Any]]


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": code, "message": message}, status_code=status)


def _target(request: Request) -> Target:
    run = request.headers.get("x-probegate-run") or ADHOC_RUN
    task = request.headers.get("x-probegate-task") or ADHOC_TASK
    target = parse_path(request.url.path, run=run, task=task)
    if target is None or target.kind != "tools":
        raise HTTPException(404, "not a probe route")
    if target.problem is not None:
        raise HTTPException(400, target.problem)
    return target


def add_routes(api: FastAPI, writer: CaptureWriter, engine: Engine) -> None:
    """Mount the probe routes on ``api``.

    Reuses ``api.state.probes`` when the caller already put a configured
    :class:`ProbeService` there (e.g. with a sub-agent runner); otherwise creates one
    writing through ``writer`` and stores it there.
    """
    service: ProbeService = getattr(api.state, "probes", None) or ProbeService(writer)
    api.state.probes = service
    _add_tool_routes(api, service)
    _add_attempt_routes(api, service, engine)


def _add_tool_routes(api: FastAPI, service: ProbeService) -> None:
    async def list_tools(request: Request) -> dict[str, Any]:
        target = _target(request)
        return {"tools": service.tools_for(target.run, target.task, target.attempt)}

    async def call_tool(request: Request) -> JSONResponse:
        target = _target(request)
        body = await request.body()
        door = "mitm" if request.headers.get("x-probegate-via") == "mitm" else "rest"
        args = (target.run, target.task, target.attempt, target.rest, body, door)
        if service.is_blocking(target.rest):
            outcome = await run_in_threadpool(service.call, *args)
        else:
            outcome = service.call(*args)
        return JSONResponse(outcome.body, status_code=outcome.status_code)

    for prefix in PREFIXES:
        api.add_api_route(prefix + "/tools", list_tools, methods=["GET"], include_in_schema=False)
        api.add_api_route(prefix + "/tools/{tool}", call_tool, methods=["POST"], include_in_schema=False)


def _stored_or_live(service: ProbeService, engine: Engine, run: str, task: str, attempt: int) -> tuple[str, Any] | None:
    live = service.state(run, task, attempt)
    if live is not None:
        return live
    row = read_world_state(engine, run, task, attempt)
    return (row.world or "default", row.state) if row is not None and row.state else None


def _add_attempt_routes(api: FastAPI, service: ProbeService, engine: Engine) -> None:
    @api.post("/probegate/attempts/reset")
    def reset(req: ResetRequest) -> Any:
        """Reset one attempt's world from its fixture; answers the offered tools."""
        try:
            tools = service.reset(req.run, req.task, req.attempt, req.world, req.world_patch, req.tools, req.feedback)
        except (WorldError, ValueError) as exc:
            return _error(400, "bad_reset", str(exc))
        return {"ok": True, "tools": tools}

    @api.get("/probegate/attempts/{run}/{task}/{attempt}/state")
    def state(run: str, task: str, attempt: int) -> Any:
        """The world state of an attempt: live if this server holds it, else from the store."""
        found = _stored_or_live(service, engine, run, task, attempt)
        if found is None:
            return _error(404, "unknown_attempt", f"no world state for {run}/{task}/{attempt}")
        return {"run": run, "task": task, "attempt": attempt, "world": found[0], "state": found[1]}

    @api.post("/probegate/verify")
    def verify(req: VerifyRequest) -> Any:
        """Answer outcome checks from the attempt's world state (a fresh default world if none)."""
        found = _stored_or_live(service, engine, req.run, req.task, req.attempt)
        world_state = found[1] if found is not None else load_world("default")
        try:
            results = [run_check(world_state, check) for check in req.checks]
        except ValueError as exc:
            return _error(400, "bad_check", str(exc))
        answers = [{"check": c.get("check"), "ok": r.ok, "evidence": r.evidence} for c, r in zip(req.checks, results)]
        return {"results": answers}
