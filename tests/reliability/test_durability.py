"""SIGKILL under load loses no answered exchange: every exchange whose client got its
whole 200 answer is in the store after a restart (the spool, replayed at start), once,
intact. SIGTERM under load loses nothing either (test_serve_cli)."""

from __future__ import annotations

import itertools
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
from sqlalchemy import text
from sqlmodel import Session, select

from probegate.store import Exchange, open_store
from probegate.testing import ScriptedUpstream, Turn, serve_in_thread

TOTAL = 2000  # requests at most (the load is bounded)
CLIENTS = 50
KILL_AFTER = 1000  # answered exchanges; the client that sees this many kills the gateway


def _load(url: str, kill) -> list[str]:  # type: ignore[no-untyped-def]
    """``TOTAL`` requests from ``CLIENTS`` threads, half of them streamed; the client whose
    answer is number ``KILL_AFTER`` SIGKILLs the gateway right then, so the kill falls
    mid-load whatever the machine's speed. Returns the ids of the whole 200 answers."""
    answered: list[str] = []
    numbers = itertools.count()
    lock = threading.Lock()

    def client() -> None:
        with httpx.Client(timeout=60) as http:
            while (n := next(numbers)) < TOTAL:
                try:
                    response = http.post(url, json={"model": "m", "messages": [], "stream": n % 2 == 1})
                except httpx.TransportError:
                    return  # the gateway is gone: this request was not answered
                if response.status_code != 200:
                    continue
                assert "ok" in response.text  # the whole body was read (httpx reads it all)
                with lock:
                    answered.append(response.headers["x-probegate-exchange-id"])
                    if len(answered) == KILL_AFTER:
                        kill()

    with ThreadPoolExecutor(CLIENTS) as pool:
        for future in [pool.submit(client) for _ in range(CLIENTS)]:
            future.result()
    return answered


def test_sigkill_loses_no_answered_exchange(store_url: str, serve, tmp_path) -> None:
    upstream = serve_in_thread(ScriptedUpstream(default=Turn("ok")))
    spool = tmp_path / "spool"
    try:
        args = ["--upstream", upstream.url, "--store", store_url, "--spool", str(spool)]
        gateway = serve(args)
        answered = _load(f"{gateway.url}/r/kill/t/0/v1/chat/completions", gateway.kill)
        assert gateway.proc.returncode == -9, "the gateway was SIGKILLed mid-load"
        assert KILL_AFTER <= len(answered) < TOTAL
        restarted = serve(args)  # replays the spool before it answers its health route
        health = httpx.get(f"{restarted.url}/probegate/health").json()
        after = httpx.post(f"{restarted.url}/r/kill/t/1/v1/chat/completions", json={"model": "m", "messages": []})
        assert after.status_code == 200
        assert restarted.terminate() in (0, -15)
    finally:
        upstream.stop()

    engine = open_store(store_url)
    with Session(engine) as session:
        rows = session.exec(select(Exchange).where(Exchange.attempt == 0)).all()
        if store_url.startswith("sqlite"):
            assert session.exec(text("PRAGMA integrity_check")).one()[0] == "ok"
        assert session.exec(select(Exchange).where(Exchange.attempt == 1)).one()
    engine.dispose()
    stored = {row.id for row in rows}
    missing = set(answered) - stored
    print(f"\nSIGKILL after {len(answered)} answered exchanges: {len(missing)} missing, "
          f"{health['replayed']} replayed from the spool, {len(stored)} stored")
    assert not missing, f"{len(missing)} answered exchanges lost"
    # the replay met rows committed before the kill and skipped them instead of failing
    assert health["replayed"] > 0 and health["spilled"] == 0 and health["writer_errors"] == 0, health
    assert all(row.completion["assistant"]["content"] == "ok" for row in rows), "stored rows are intact"
    # stored but never answered: only requests in flight at the kill
    assert len(stored - set(answered)) <= CLIENTS
    assert not list(spool.glob("*.spool")), "a clean stop leaves an empty spool"
