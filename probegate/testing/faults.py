"""A fault-injecting upstream: a deterministic share of requests gets a fault.

Request number ``i`` (counted from 0 by the upstream) is faulty when
``i % every == every - 1``; faulty requests cycle through :data:`FAULTS`. Everything
else is a normal turn (streamed when the request asks). Deterministic, so a test can
say exactly which requests must fail and how.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

from probegate.testing.streams import chat_chunk, chat_completion, sse
from probegate.testing.upstream import ReceivedRequest, Reply, ScriptedUpstream, Turn

#: fault kinds, in the order they are handed out
FAULTS = ("http_500", "slow", "reset_mid_stream", "malformed_sse", "invalid_json", "oversized")


def fault_reply(kind: str, *, slow_s: float = 2.0, oversized_bytes: int = 2_000_000) -> Reply:
    """The reply for one fault kind."""
    if kind == "http_500":
        return Reply.json({"error": {"message": "internal error", "type": "server_error"}}, status=500)
    if kind == "slow":
        return Reply.json(chat_completion("too late"), delay_s=slow_s)
    if kind == "reset_mid_stream":
        chunks = [sse([chat_chunk({"content": "partial"})], done=False), b"data: [DONE]\n\n"]
        return Reply(200, [("content-type", "text/event-stream")], chunks=chunks, break_after=1)
    if kind == "malformed_sse":
        chunks = [b'data: {"choices":[{"index":0,"delta":{"content":"ok"}}]}\n\n', b"data: {not json\n\n",
                  sse([chat_chunk({}, "stop")])]
        return Reply(200, [("content-type", "text/event-stream")], chunks=chunks)
    if kind == "invalid_json":
        return Reply(200, [("content-type", "application/json")], body=b'{"choices": [ truncated')
    if kind == "oversized":
        return Reply.json(chat_completion("x" * oversized_bytes))
    raise ValueError(f"unknown fault {kind!r}")


class FaultyUpstream(ScriptedUpstream):
    """A scripted upstream where every ``every``-th request is a fault.

    Attributes:
        planned: request index -> fault kind, for every fault handed out so far.
    """

    def __init__(self, every: int = 10, *, slow_s: float = 2.0, oversized_bytes: int = 2_000_000) -> None:
        super().__init__(handler=self._answer)
        self.every = every
        self.slow_s = slow_s
        self.oversized_bytes = oversized_bytes
        self.planned: dict[int, str] = {}
        self._counter = itertools.count()
        self._kinds = itertools.cycle(FAULTS)
        self._plan_lock = threading.Lock()

    def _answer(self, request: ReceivedRequest) -> Reply | Turn:
        with self._plan_lock:
            i = next(self._counter)
            kind = next(self._kinds) if i % self.every == self.every - 1 else None
            if kind:
                self.planned[i] = kind
        if kind is None:
            return Turn("fine")
        return fault_reply(kind, slow_s=self.slow_s, oversized_bytes=self.oversized_bytes)

    def fault_counts(self) -> dict[str, Any]:
        """How many of each fault were handed out."""
        counts: dict[str, int] = {}
        for kind in self.planned.values():
            counts[kind] = counts.get(kind, 0) + 1
        return counts
