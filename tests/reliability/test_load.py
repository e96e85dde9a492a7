"""Load with injected faults: every client gets an answer, every request is stored once."""

from __future__ import annotations

import asyncio
from collections import Counter

import aiohttp
from sqlmodel import Session, select

from probegate.store import Exchange, open_store
from probegate.testing import serve_in_thread
from probegate.testing.faults import FAULTS, FaultyUpstream

REQUESTS = 10_000
CONCURRENCY = 100


async def _drive(url: str) -> list[tuple[int, str | None, str]]:
    """Send every request; returns (status, exchange id, outcome) per request."""
    results: list[tuple[int, str | None, str]] = []
    connector = aiohttp.TCPConnector(limit=CONCURRENCY)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        queue = list(range(REQUESTS))

        async def worker() -> None:
            while queue:
                i = queue.pop()
                body = {"model": "m", "stream": i % 2 == 0, "messages": [{"role": "user", "content": str(i)}]}
                status, xid, outcome = 0, None, "ok"
                try:
                    async with session.post(url, json=body) as response:
                        status, xid = response.status, response.headers.get("x-probegate-exchange-id")
                        try:
                            await response.read()
                        except aiohttp.ClientPayloadError:
                            outcome = "broken_body"  # the upstream's reset, passed on faithfully
                except aiohttp.ClientError as exc:
                    outcome = f"client_error:{type(exc).__name__}"
                results.append((status, xid, outcome))

        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return results


def test_10k_requests_with_faults_store_exactly_one_exchange_each(store_url: str, serve) -> None:
    # a wide margin between the timeout and the slow replies: a busy CI machine must not
    # turn a normal reply into a 504
    upstream = FaultyUpstream(every=10, slow_s=8.0, oversized_bytes=300_000)
    upstream_server = serve_in_thread(upstream)
    try:
        gateway = serve(["--upstream", upstream_server.url, "--store", store_url,
                         "--upstream-timeout", "4", "--payload-cap", "256KiB"])
        results = asyncio.run(_drive(f"{gateway.url}/r/load/t/0/v1/chat/completions"))
        assert gateway.terminate() in (0, -15)
    finally:
        upstream_server.stop()

    assert len(results) == REQUESTS
    ids = [xid for _, xid, _ in results]
    unanswered = Counter(outcome for _, xid, outcome in results if xid is None)
    assert not unanswered, f"every client got an answer with its exchange id; without one: {dict(unanswered)}"
    assert len(set(ids)) == REQUESTS
    statuses = Counter(status for status, _, _ in results)
    assert statuses[504] == upstream.fault_counts()["slow"]
    assert statuses[500] == upstream.fault_counts()["http_500"]
    assert sum(1 for _, _, outcome in results if outcome == "broken_body") == upstream.fault_counts()["reset_mid_stream"]
    assert set(upstream.fault_counts()) == set(FAULTS)

    engine = open_store(store_url)
    with Session(engine) as session:
        rows = session.exec(select(Exchange.id, Exchange.error, Exchange.flags, Exchange.truncated)).all()
    engine.dispose()
    assert len(rows) == REQUESTS
    assert {row[0] for row in rows} == set(ids)
    errors = Counter((row[1] or "").split(":")[0].split(" ")[0] for row in rows)
    assert errors["upstream_timeout"] == upstream.fault_counts()["slow"]
    assert errors["upstream_unreachable"] >= upstream.fault_counts()["reset_mid_stream"]
    assert sum(1 for row in rows if "malformed_event" in (row[2] or [])) == upstream.fault_counts()["malformed_sse"]
    assert sum(1 for row in rows if row[3]) == upstream.fault_counts()["oversized"]
