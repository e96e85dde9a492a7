"""The capture store schema: the one module that gateway, probes and scorer share.

Every table is append-only except ``Run.status``, ``WorldState`` (the latest world
state of one task attempt, replaced on every side effect), ``AttemptClaim`` (who runs an
attempt of a distributed run, and how it ended) and the ``superseded`` mark an attempt's
exchanges and probe calls get when the attempt is run again after its worker was lost. Timestamps are aware UTC datetimes.
JSON columns hold plain dicts and lists so a row round-trips through SQLite and
PostgreSQL unchanged.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, LargeBinary, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel
from ulid import ULID

_JSON = JSON().with_variant(JSONB(), "postgresql")


def utcnow() -> datetime:
    """Now as an aware UTC datetime (the store's only time zone)."""
    return datetime.now(UTC)


def new_id() -> str:
    """A new ULID string: unique and sortable by creation time."""
    return str(ULID())


def _json(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=Column(_JSON, nullable=nullable))


class Run(SQLModel, table=True):
    """One evaluation run: a task set driven through one harness against one model."""

    id: str = Field(primary_key=True)
    created_at: datetime = Field(default_factory=utcnow)
    task_set: str | None = None
    harness: str | None = None
    model: str | None = None
    upstream: str | None = None
    params: dict[str, Any] | None = _json()
    status: str = "created"  # created | running | done | interrupted | failed
    finished_at: datetime | None = None
    probegate_version: str | None = None


class Exchange(SQLModel, table=True):
    """One HTTP exchange between an agent and its model server, as the gateway saw it.

    ``response_raw`` holds the body bytes exactly as the upstream sent them (still
    compressed when the upstream compressed them); ``chunks`` gives the arrival offset
    (ms since the request arrived) and size (bytes) of every piece, so a replay can
    keep the recorded pacing. ``sse_events`` are the decoded stream events with their
    offsets; ``completion`` is the reassembled assistant turn (see
    :mod:`probegate.wire.reassemble`) and ``flags`` its wire anomalies.
    """

    __table_args__ = (Index("ix_exchange_attempt", "run_id", "task_id", "attempt", "seq"),)

    id: str = Field(primary_key=True, default_factory=new_id)
    run_id: str = Field(index=True)
    task_id: str = Field(index=True)
    attempt: int = 0
    seq: int = 0
    started_at: datetime = Field(default_factory=utcnow)
    ended_at: datetime | None = None
    ttft_ms: float | None = None
    latency_ms: float | None = None
    overhead_ms: float | None = None
    method: str = "POST"
    path: str = ""
    query: str = ""
    request_headers: dict[str, str] | None = _json()
    request_body: Any = _json()
    request_raw: bytes | None = Field(default=None, sa_column=Column(LargeBinary))
    status_code: int | None = None
    response_headers: dict[str, str] | None = _json()
    response_body: Any = _json()
    response_raw: bytes | None = Field(default=None, sa_column=Column(LargeBinary))
    stream: bool = False
    stream_format: str | None = None  # sse | ndjson
    sse_events: list[dict[str, Any]] | None = _json()
    chunks: list[list[float]] | None = _json()
    completion: dict[str, Any] | None = _json()
    flags: list[str] | None = _json()
    error: str | None = Field(default=None, sa_column=Column(Text))
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    truncated: bool = False
    compat: list[dict[str, Any]] | None = _json()
    request_original: Any = _json()
    superseded: bool = False  # the attempt ran again after its worker was lost: the scorer skips this row


class ProbeCall(SQLModel, table=True):
    """One tool call that reached a probe, blocked ones included.

    ``door`` is how the call came in: ``rest`` (``POST .../tools/{tool}``), ``mcp``
    (``tools/call`` at ``.../mcp``) or ``mitm`` (the intercepting proxy). ``via`` is
    the older, coarser field (``direct`` for rest and mcp, ``mitm``), kept for stores
    and readers that predate ``door``.
    """

    __table_args__ = (Index("ix_probecall_attempt", "run_id", "task_id", "attempt", "seq"),)

    id: str = Field(primary_key=True, default_factory=new_id)
    run_id: str = Field(index=True)
    task_id: str = Field(index=True)
    attempt: int = 0
    seq: int = 0
    at: datetime = Field(default_factory=utcnow)
    tool: str = ""
    raw_args: str | None = Field(default=None, sa_column=Column(Text))
    args: Any = _json()
    missing: list[str] | None = _json()
    invalid: dict[str, str] | None = _json()
    status: str = "ok"  # ok | blocked | error
    result: Any = _json()
    feedback: str = "actionable"  # plain | actionable
    latency_ms: float | None = None
    via: str = "direct"  # direct | mitm
    superseded: bool = False  # as Exchange.superseded
    door: str = "rest"  # rest | mcp | mitm


class WorldState(SQLModel, table=True):
    """The latest world state of one task attempt, written after every side effect."""

    run_id: str = Field(primary_key=True)
    task_id: str = Field(primary_key=True)
    attempt: int = Field(default=0, primary_key=True)
    updated_at: datetime = Field(default_factory=utcnow)
    world: str | None = None  # the fixture name the state was reset from
    state: dict[str, Any] | None = _json()


class AttemptClaim(SQLModel, table=True):
    """One attempt of a distributed run: the delivery that runs it now, and how it ended.

    A worker claims the attempt before running it (``generation`` counts the
    deliveries; a later one marks the earlier ones' exchanges and probe calls
    superseded) and writes ``outcome`` (``AttemptOutcome.to_json`` without the
    verdict) when it ends; only the claim's current generation may finish it.
    """

    run_id: str = Field(primary_key=True)
    task_id: str = Field(primary_key=True)
    attempt: int = Field(default=0, primary_key=True)
    generation: int = 1
    worker: str | None = None
    status: str = "running"  # running | done | error
    outcome: dict[str, Any] | None = _json()
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
