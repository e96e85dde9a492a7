"""Replay: answering model requests from a recorded run instead of the upstream.

Replay is an httpx transport (the gateway's upstream seam), so everything else stays
the same: the replayed exchange is relayed piece by piece and recorded like any other
(its ``compat`` names the source exchange). Modes:

- ``none``: a request with no recording gets an OpenAI-shaped 404 naming the nearest
  recorded request and the first field that differs;
- ``new_episodes``: a request with no recording goes to the upstream (and is recorded);
- ``all``: everything goes to the upstream: the run is re-recorded.

Timing ``recorded`` keeps each piece's recorded arrival offset; ``fast`` sends at once.
Identical requests within one attempt are answered in recorded order.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict, deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

import httpx
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from probegate.urls import Target
from probegate.gateway.compat import responses_via_chat as rvc
from probegate.gateway.headers import HOP_BY_HOP
from probegate.gateway.replay_key import distance, first_difference, normalize_request, request_key
from probegate.errors import UsageError
from probegate.store.models import Exchange

Mode = Literal["none", "new_episodes", "all"]
Timing = Literal["recorded", "fast"]
TARGET_EXTENSION = "probegate_target"
REPLAY_EXTENSION = "probegate_replay"


@dataclass(frozen=True)
class ReplaySettings:
    """``probegate serve --replay RUN`` options."""

    run: str
    mode: Mode = "none"
    timing: Timing = "fast"
    ignore_model: bool = False


class ReplayIndex:
    """Recorded exchanges of one run, by (task, attempt, route + normalized request)."""

    def __init__(self, exchanges: list[Exchange], *, ignore_model: bool = False) -> None:
        self.ignore_model = ignore_model
        self._queues: dict[tuple[str, int, str], deque[Exchange]] = defaultdict(deque)
        self._by_task: dict[str, list[Exchange]] = defaultdict(list)
        for ex in sorted(exchanges, key=lambda e: (e.task_id, e.attempt, e.seq, e.started_at)):
            if ex.request_body is None or ex.status_code is None or ex.error == "replay_miss":
                continue
            key = request_key(ex.path, ex.request_body, ignore_model=ignore_model)
            self._queues[(ex.task_id, ex.attempt, key)].append(ex)
            self._by_task[ex.task_id].append(ex)

    def __len__(self) -> int:
        return sum(len(q) for q in self._queues.values())

    def take(self, task: str, attempt: int, path: str, body: Any) -> Exchange | None:
        """The next recorded answer to this exact request, or ``None``."""
        queue = self._queues.get((task, attempt, request_key(path, body, ignore_model=self.ignore_model)))
        return queue.popleft() if queue else None

    def nearest(self, task: str, attempt: int, path: str, body: Any) -> tuple[Exchange, str | None] | None:
        """The closest recorded request of the task (its attempt first) and the first
        field where it differs from ``body``."""
        candidates = [e for e in self._by_task.get(task, []) if e.path == path] or self._by_task.get(task, [])
        if not candidates:
            return None
        want = normalize_request(body, ignore_model=self.ignore_model)

        def rank(ex: Exchange) -> tuple[int, int]:
            got = normalize_request(ex.request_body, ignore_model=self.ignore_model)
            return (0 if ex.attempt == attempt else 1, distance(want, got))

        best = min(candidates, key=rank)
        return best, first_difference(normalize_request(best.request_body, ignore_model=self.ignore_model), want)


def load_index(engine: Engine, settings: ReplaySettings) -> ReplayIndex:
    """Read a run's exchanges from the store.

    Raises:
        UsageError: the run has no recorded exchanges.
    """
    with Session(engine) as session:
        rows = list(session.exec(select(Exchange).where(Exchange.run_id == settings.run)).all())
    index = ReplayIndex(rows, ignore_model=settings.ignore_model)
    if not len(index):
        raise UsageError(f"--replay {settings.run}: the store holds no replayable exchange of that run")
    return index


def recorded_pieces(ex: Exchange) -> list[tuple[float, bytes]]:
    """The recorded body split back into its arrival pieces ``(offset ms, bytes)``."""
    raw = ex.response_raw or b""
    sizes = [int(size) for _, size in ex.chunks or []]
    if not sizes or sum(sizes) != len(raw):
        return [(float(ex.ttft_ms or 0.0), raw)] if raw else []
    pieces, pos = [], 0
    for (t, _), size in zip(ex.chunks or [], sizes):
        pieces.append((float(t), raw[pos : pos + size]))
        pos += size
    return pieces


class PacedStream(httpx.AsyncByteStream):
    """Yields recorded pieces, at their recorded offsets or at once."""

    def __init__(self, pieces: list[tuple[float, bytes]], timing: Timing) -> None:
        self.pieces = pieces
        self.timing = timing

    async def __aiter__(self) -> AsyncIterator[bytes]:
        start = time.perf_counter()
        for t_ms, data in self.pieces:
            if self.timing == "recorded":
                delay = t_ms / 1000.0 - (time.perf_counter() - start)
                if delay > 0:
                    await asyncio.sleep(delay)
            yield data


def _miss_response(target: Target | None, near: tuple[Exchange, str | None] | None) -> httpx.Response:
    where = f"task {target.task} attempt {target.attempt}" if target else "this request"
    if near is None:
        message = f"replay: nothing was recorded for {where}"
    else:
        ex, field = near
        message = (f"replay: no recorded request matches for {where}; nearest is exchange {ex.id} "
                   f"(task {ex.task_id} attempt {ex.attempt} seq {ex.seq}), first difference at {field!r}")
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error", "code": "replay_miss"}}).encode()
    return httpx.Response(
        404,
        headers=[("content-type", "application/json"), ("content-length", str(len(body)))],
        stream=httpx.ByteStream(body),  # unread, so the forwarder can relay it like any body
        extensions={REPLAY_EXTENSION: {"rule": "replay", "miss": True}},
    )


def _translated(ex: Exchange) -> dict[str, Any]:
    """``{"translated": rule}`` when the recorded answer is a translation the client received
    (``responses-via-chat``): the forwarder relays it as it is instead of translating it again."""
    for change in ex.compat or []:
        if isinstance(change, dict) and change.get("rule") == rvc.NAME and change.get("path") == "(answer)" \
                and change.get("to") in (*rvc.TRANSLATED, rvc.REPLAYED):
            return {"translated": rvc.NAME}
    return {}


class ReplayTransport(httpx.AsyncBaseTransport):
    """Answers from a :class:`ReplayIndex`; falls through to ``upstream`` as the mode says."""

    def __init__(self, index: ReplayIndex, settings: ReplaySettings, upstream: httpx.AsyncBaseTransport | None) -> None:
        if settings.mode != "none" and upstream is None:
            raise UsageError(f"--replay-mode {settings.mode} needs --upstream")
        self.index = index
        self.settings = settings
        self.upstream = upstream

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.settings.mode == "all" and self.upstream is not None:
            return await self.upstream.handle_async_request(request)
        target: Target | None = request.extensions.get(TARGET_EXTENSION)
        try:
            body = json.loads(request.content or b"null")
        except ValueError:
            body = None
        task, attempt = (target.task, target.attempt) if target else ("-", 0)
        hit = self.index.take(task, attempt, request.url.path if target is None else target.rest, body)
        if hit is not None:
            return self._answer(hit)
        if self.settings.mode == "new_episodes" and self.upstream is not None:
            return await self.upstream.handle_async_request(request)
        return _miss_response(target, self.index.nearest(task, attempt, target.rest if target else "", body))

    def _answer(self, ex: Exchange) -> httpx.Response:
        headers = [(k, v) for k, v in (ex.response_headers or {}).items() if k not in HOP_BY_HOP]
        raw = ex.response_raw or b""
        if ex.truncated or any(k == "content-length" and v.strip() != str(len(raw)) for k, v in headers):
            headers = [(k, v) for k, v in headers if k != "content-length"]  # redacted or cut
        if {"raw_decoded_for_redaction", "raw_rebuilt_for_redaction"} & set(ex.flags or []):
            headers = [(k, v) for k, v in headers if k != "content-encoding"]  # stored decoded
        return httpx.Response(
            ex.status_code or 200,
            headers=headers,
            stream=PacedStream(recorded_pieces(ex), self.settings.timing),
            extensions={REPLAY_EXTENSION: {"rule": "replay", "source": ex.id, **_translated(ex)}},
        )

    async def aclose(self) -> None:
        if self.upstream is not None:
            await self.upstream.aclose()
