"""Load generation and measurement with aiohttp (httpx tops out near 150 req/s here).

All times are ms, measured on the client with ``time.perf_counter``.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass

import aiohttp

BODY = b'{"model":"bench","messages":[{"role":"user","content":"hello"}]}'
STREAM_BODY = b'{"model":"bench","stream": true,"messages":[{"role":"user","content":"hello"}]}'
#: A 3-chunk stream: time-to-first-chunk samples without waiting for 200 chunks.
SHORT_STREAM_BODY = b'{"model":"bench","stream": true,"max_tokens": 3,"messages":[{"role":"user","content":"hello"}]}'
HEADERS = {"content-type": "application/json", "authorization": "Bearer bench"}


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation; ``nan`` when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@dataclass
class Latency:
    """Latency of ``n`` requests at a concurrency (ms)."""

    n: int
    concurrency: int
    p50: float
    p90: float
    p99: float
    errors: int

    @classmethod
    def of(cls, samples: list[float], concurrency: int, errors: int) -> Latency:
        """Summarise latency samples (ms)."""
        return cls(len(samples), concurrency, percentile(samples, 0.5), percentile(samples, 0.9),
                   percentile(samples, 0.99), errors)


@dataclass
class StreamProfile:
    """Streams seen by the client at a concurrency (ms).

    ``chunks_per_stream`` counts socket reads that brought data: when a proxy holds a
    chunk back and sends it with the next, the client sees fewer, larger reads.
    """

    streams: int
    concurrency: int
    ttfc_p50: float
    ttfc_p90: float
    gap_p50: float
    gap_p90: float
    gap_p99: float
    gap_max: float
    chunks_per_stream: float
    errors: int


def _session(concurrency: int) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(limit=concurrency * 2, force_close=False)
    return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120))


async def _one(session: aiohttp.ClientSession, url: str) -> float | None:
    t0 = time.perf_counter()
    try:
        async with session.post(url, data=BODY, headers=HEADERS) as response:
            await response.read()
            if response.status != 200:
                return None
    except aiohttp.ClientError:
        return None
    return (time.perf_counter() - t0) * 1000.0


async def latency_samples(url: str, n: int, concurrency: int, warmup: int = 50) -> tuple[list[float], int]:
    """Send ``n`` non-streamed requests, ``concurrency`` at a time, after ``warmup``
    sequential ones; returns (latencies in ms, errors)."""
    async with _session(concurrency) as session:
        for _ in range(warmup):
            await _one(session, url)
        remaining = n
        samples: list[float] = []
        errors = 0

        async def worker() -> None:
            nonlocal errors, remaining
            while remaining > 0:
                remaining -= 1
                ms = await _one(session, url)
                if ms is None:
                    errors += 1
                else:
                    samples.append(ms)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return samples, errors


async def latency(url: str, n: int, concurrency: int, warmup: int = 50) -> Latency:
    """:func:`latency_samples`, summarised."""
    samples, errors = await latency_samples(url, n, concurrency, warmup)
    return Latency.of(samples, concurrency, errors)


async def throughput(url: str, seconds: float, concurrency: int) -> tuple[float, int, int]:
    """Closed-loop maximum rate: returns (requests per second, ok, errors)."""
    async with _session(concurrency) as session:
        deadline = time.perf_counter() + seconds
        ok = errors = 0

        async def worker() -> None:
            nonlocal ok, errors
            while time.perf_counter() < deadline:
                if await _one(session, url) is None:
                    errors += 1
                else:
                    ok += 1

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
    return ok / elapsed, ok, errors


async def _read_stream(session: aiohttp.ClientSession, url: str, body: bytes = STREAM_BODY) -> tuple[float, list[float]] | None:
    """One stream: (time to first chunk, gaps between reads), ms; ``None`` on error."""
    t0 = time.perf_counter()
    first: float | None = None
    last = t0
    gaps: list[float] = []
    try:
        async with session.post(url, data=body, headers=HEADERS) as response:
            if response.status != 200:
                return None
            async for _chunk in response.content.iter_any():
                now = time.perf_counter()
                if first is None:
                    first = (now - t0) * 1000.0
                else:
                    gaps.append((now - last) * 1000.0)
                last = now
    except aiohttp.ClientError:
        return None
    return (first, gaps) if first is not None else None


async def streams(url: str, n: int, concurrency: int = 1, stagger_ms: float = 0.0) -> StreamProfile:
    """Read ``n`` streams, ``concurrency`` at a time (new ones start ``stagger_ms``
    apart, so concurrent streams do not all start in the same instant), after one
    uncounted warm-up stream."""
    ttfc: list[float] = []
    gaps: list[float] = []
    counts: list[int] = []
    errors = 0
    async with _session(concurrency) as session:
        await _read_stream(session, url)  # warm-up: open the connection, not counted
        sem = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            nonlocal errors
            await asyncio.sleep(i * stagger_ms / 1000.0 if i < concurrency else 0)
            async with sem:
                seen = await _read_stream(session, url)
            if seen is None:
                errors += 1
                return
            ttfc.append(seen[0])
            gaps.extend(seen[1])
            counts.append(len(seen[1]) + 1)

        await asyncio.gather(*(one(i) for i in range(n)))
    return StreamProfile(n, concurrency, percentile(ttfc, 0.5), percentile(ttfc, 0.9),
                         percentile(gaps, 0.5), percentile(gaps, 0.9), percentile(gaps, 0.99),
                         max(gaps, default=float("nan")), statistics.fmean(counts) if counts else 0.0, errors)


async def first_chunk(url: str, n: int, warmup: int = 20) -> Latency:
    """Time to first chunk of ``n`` short streams read one at a time, after ``warmup``."""
    samples: list[float] = []
    errors = 0
    async with _session(1) as session:
        for i in range(warmup + n):
            seen = await _read_stream(session, url, SHORT_STREAM_BODY)
            if i < warmup:
                continue
            if seen is None:
                errors += 1
            else:
                samples.append(seen[0])
    return Latency.of(samples, 1, errors)
