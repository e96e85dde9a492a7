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


@dataclass
class StreamProfile:
    """Streams seen by the client: time to first chunk, gaps between chunks (ms)."""

    streams: int
    ttfc_p50: float
    gap_p50: float
    gap_p99: float
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


async def latency(url: str, n: int, concurrency: int, warmup: int = 50) -> Latency:
    """Send ``n`` non-streamed requests, ``concurrency`` at a time."""
    async with _session(concurrency) as session:
        for _ in range(warmup):
            await _one(session, url)
        queue = list(range(n))
        samples: list[float] = []
        errors = 0

        async def worker() -> None:
            nonlocal errors
            while queue:
                queue.pop()
                ms = await _one(session, url)
                if ms is None:
                    errors += 1
                else:
                    samples.append(ms)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return Latency(n, concurrency, percentile(samples, 0.5), percentile(samples, 0.9),
                   percentile(samples, 0.99), errors)


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


async def streams(url: str, n: int, concurrency: int = 4) -> StreamProfile:
    """Open ``n`` streams; record time to first chunk and every inter-chunk gap."""
    ttfc: list[float] = []
    gaps: list[float] = []
    counts: list[int] = []
    errors = 0
    async with _session(concurrency) as session:
        sem = asyncio.Semaphore(concurrency)

        async def one() -> None:
            nonlocal errors
            async with sem:
                t0 = time.perf_counter()
                last = None
                count = 0
                try:
                    async with session.post(url, data=STREAM_BODY, headers=HEADERS) as response:
                        async for _chunk in response.content.iter_any():
                            now = time.perf_counter()
                            if last is None:
                                ttfc.append((now - t0) * 1000.0)
                            else:
                                gaps.append((now - last) * 1000.0)
                            last = now
                            count += 1
                except aiohttp.ClientError:
                    errors += 1
                    return
                counts.append(count)

        await asyncio.gather(*(one() for _ in range(n)))
    return StreamProfile(n, percentile(ttfc, 0.5), percentile(gaps, 0.5), percentile(gaps, 0.99),
                         statistics.fmean(counts) if counts else 0.0, errors)
