"""Distributed runs: attempts per hour with 1, 2, 4 ``probegate worker`` processes.

    python -m bench.distributed [--workers 1,2,4] [--attempts 24] [--latency-ms 500]
                                [--broker redis://127.0.0.1:6379/0] [--postgres URL] [--json F]

A scripted model (:class:`probegate.testing.ScriptedUpstream`) answers every request
after a fixed latency, so the model is the bottleneck, as it is with a real one. Each
attempt of the ``fc`` harness on ``bench/distributed_tasks`` makes 3 model calls and
2 probe calls. For each worker count the workers are started, then one run of
``--attempts`` attempts goes through ``probegate run --executor celery``; the rate is
attempts over the time from the first attempt's claim to the last one's end, read
from the store (worker start-up is left out). Each worker runs one attempt at a time.
Then the store's ingest rate: exchange rows of a real call's size committed in batches of
50 from 1 and 4 connections at once (``--ingest``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.procs import loadavg, machine, machine_line
from bench.stores import PG_DEFAULT, temp_store
from probegate.runner.claims import claims
from probegate.runner.execute import RunConfig, execute
from probegate.store import open_store
from probegate.testing import ReceivedRequest, Reply, RunningServer, ScriptedUpstream, Turn, serve_in_thread

TASKS = Path(__file__).resolve().parent / "distributed_tasks"
BROKER = "redis://127.0.0.1:6379/0"
MODEL = "bench-model"


def stock_agent(latency_s: float = 0.0) -> Callable[[ReceivedRequest], Reply]:
    """A scripted model that solves the ``stock-*`` tasks from the conversation alone (so
    attempts may run anywhere, in any order), answering after ``latency_s`` seconds."""

    def handler(request: ReceivedRequest) -> Reply:
        last = request.json()["messages"][-1]
        if last["role"] == "user":
            turn = Turn(tool_calls=[{"name": "search_products", "arguments": {"query": "office chair"}}])
        else:
            result = json.loads(last["content"])
            if "products" in result:
                turn = Turn(tool_calls=[{"name": "check_stock", "arguments": {"sku": result["products"][0]["sku"]}}])
            else:
                turn = Turn(f"We have {result['in_stock']} chairs in stock.")
        reply = turn.reply_for(request)
        reply.delay_s = latency_s
        return reply

    return handler


@contextlib.contextmanager
def scripted_model(latency_s: float) -> Iterator[RunningServer]:
    """The scripted model on a loopback port for the ``with`` block."""
    server = serve_in_thread(ScriptedUpstream(handler=stock_agent(latency_s)))
    try:
        yield server
    finally:
        server.stop()


def worker_args(broker: str, store: str, queue: str, *, model_endpoint: str | None = None,
                visibility_timeout: float = 900.0, concurrency: int = 1) -> list[str]:
    """The command line of one ``probegate worker``."""
    args = [sys.executable, "-m", "probegate", "worker", "--broker", broker, "--store", store, "--queue", queue,
            "--concurrency", str(concurrency), "--visibility-timeout", str(visibility_timeout)]
    return args + (["--model-endpoint", model_endpoint] if model_endpoint else [])


def stop_workers(procs: list[subprocess.Popen[bytes]], timeout: float = 20.0) -> None:
    """SIGTERM (Celery's warm shutdown) every worker still running, then SIGKILL what remains."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for proc in procs:
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def workers(n: int, broker: str, store: str, queue: str, log_dir: Path | None = None,
            **options: Any) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``n`` worker processes for the ``with`` block, all stopped at its end."""
    procs: list[subprocess.Popen[bytes]] = []
    with contextlib.ExitStack() as logs:
        try:
            for i in range(n):
                log: Any = logs.enter_context((log_dir / f"worker-{i}.log").open("wb")) if log_dir else subprocess.DEVNULL
                procs.append(subprocess.Popen(worker_args(broker, store, queue, **options), stdout=log,
                                              stderr=subprocess.STDOUT))
            yield procs
        finally:
            stop_workers(procs)


def purge_queue(broker: str, queue: str) -> None:
    """Delete the queue with its pending jobs (a test's or a bench run's leftovers) and, on
    Redis, kombu's binding keys for it."""
    from probegate.runner.executors.celery import make_app

    app = make_app(broker)
    with app.connection_for_write() as conn:
        with contextlib.suppress(Exception):
            conn.default_channel.queue_delete(queue)
    app.close()
    if broker.startswith("redis://"):
        import redis

        client = redis.Redis.from_url(broker)
        client.delete(f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
        client.close()


@dataclass(frozen=True)
class Measurement:
    """One worker count's result."""

    workers: int
    attempts: int
    seconds: float
    attempts_per_hour: float
    per_worker_per_hour: float
    passed: int
    rows_per_attempt: float
    store_bytes_per_attempt: float


def busy_seconds(store: str, run_id: str) -> float:
    """Seconds from the run's first claim to its last attempt's end (from the store)."""
    engine = open_store(store)
    rows = claims(engine, run_id)
    engine.dispose()
    start = min(r.started_at for r in rows)
    end = max(r.finished_at or r.started_at for r in rows)
    return (end - start).total_seconds()


def store_footprint(store: str) -> tuple[int, int]:
    """``(rows, bytes)`` of exchanges, probe calls, world states and claims in the store
    (PostgreSQL: the rows' stored size, ``pg_column_size``; indexes and page slack not included)."""
    from sqlalchemy import text

    engine = open_store(store)
    tables = ("exchange", "probecall", "worldstate", "attemptclaim")
    with engine.connect() as conn:
        rows = sum(conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one() for t in tables)
        size = sum(conn.execute(text(f"SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM {t} t")).scalar_one()
                   for t in tables)
    engine.dispose()
    return rows, size


def pg_ingest(store: str, writers: int, rows: int = 4000, batch: int = 50) -> tuple[float, float]:
    """How fast the store takes exchange rows from ``writers`` concurrent connections, each
    committing ``batch`` rows at a time (as a worker's capture writer does): ``(rows/s, MB/s)``.

    The rows are the size of a real model call's (a 6 KB request with its raw bytes, a
    1 KB completion); building them is done before the clock starts."""
    import threading

    from sqlalchemy import insert

    from probegate.store import Exchange

    body = {"model": MODEL, "messages": [{"role": "user", "content": "x" * 3000}], "tools": [{"n": "y" * 500}]}
    raw = json.dumps(body).encode()
    row = {"run_id": "ingest", "task_id": "t", "path": "/v1/chat/completions", "request_body": body,
           "request_raw": raw, "response_body": {"choices": [{"message": {"content": "z" * 1000}}]},
           "response_raw": b"z" * 1200, "status_code": 200}
    per = rows // writers
    chunks = [[{**row, "id": f"{w}-{i}", "attempt": w, "seq": i} for i in range(per)] for w in range(writers)]
    engine = open_store(store)
    size = len(json.dumps({k: v for k, v in row.items() if not isinstance(v, bytes)})) + len(raw) + 1200

    def write(mine: list[dict[str, Any]]) -> None:
        for start in range(0, len(mine), batch):
            with engine.begin() as conn:
                conn.execute(insert(Exchange), mine[start:start + batch])

    threads = [threading.Thread(target=write, args=(c,)) for c in chunks]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - began
    engine.dispose()
    return per * writers / seconds, per * writers * size / seconds / 1e6


def measure(n: int, attempts: int, latency_s: float, broker: str, store: str, out: Path) -> Measurement:
    """One distributed run of ``attempts`` attempts with ``n`` workers."""
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    run_id = f"bench-dist-{n}w-{uuid.uuid4().hex[:6]}"
    repeats = math.ceil(attempts / 3)
    with scripted_model(latency_s) as model, workers(n, broker, store, queue):
        config = RunConfig(task_set=str(TASKS), harness="fc", model=MODEL, model_endpoint=model.url, store=store,
                           repeats=repeats, run_id=run_id, output_dir=out, executor="celery", broker=broker,
                           queue=queue, task_timeout=120)
        report = execute(config)
    purge_queue(broker, queue)
    seconds = busy_seconds(store, run_id)
    done = len(report.outcomes)
    rate = done / seconds * 3600
    rows, size = store_footprint(store)
    return Measurement(n, done, round(seconds, 2), round(rate), round(rate / n),
                       sum(bool(o.passed) for o in report.outcomes), round(rows / done, 1), round(size / done))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated")
    parser.add_argument("--attempts", type=int, default=24, help="attempts per run (a multiple of 3)")
    parser.add_argument("--latency-ms", type=float, default=500.0, help="the scripted model's latency per call")
    parser.add_argument("--broker", default=BROKER)
    parser.add_argument("--postgres", default=PG_DEFAULT, help="the PostgreSQL server (a fresh schema per worker count)")
    parser.add_argument("--out", type=Path, default=Path("runs"), help="where the runs' reports go")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--ingest", default="1,4", help="concurrent writers for the store ingest measurement ('' skips)")
    args = parser.parse_args(argv)
    facts = machine_line(machine())
    print(facts, f"load {loadavg()}", file=sys.stderr)
    results = []
    for n in (int(x) for x in args.workers.split(",")):
        with temp_store("postgres", args.postgres) as store:
            m = measure(n, args.attempts, args.latency_ms / 1000, args.broker, store, args.out)
        results.append(m)
        print(f"{m.workers} worker(s): {m.attempts} attempts in {m.seconds:.1f} s = {m.attempts_per_hour:,.0f}/h "
              f"({m.per_worker_per_hour:,.0f}/h per worker), {m.passed} passed, {m.rows_per_attempt} rows and "
              f"{m.store_bytes_per_attempt:,.0f} store bytes per attempt", file=sys.stderr)
    base = results[0].attempts_per_hour / results[0].workers
    print("| workers | attempts | seconds | attempts/hour | per worker | speed-up |")
    print("|---:|---:|---:|---:|---:|---:|")
    for m in results:
        print(f"| {m.workers} | {m.attempts} | {m.seconds:.1f} | {m.attempts_per_hour:,.0f} | "
              f"{m.per_worker_per_hour:,.0f} | {m.attempts_per_hour / base:.2f}x |")
    ingest = {}
    for w in (int(x) for x in args.ingest.split(",") if x):
        with temp_store("postgres", args.postgres) as store:
            per_s, mb_s = pg_ingest(store, w)
        ingest[w] = {"rows_per_s": round(per_s), "mb_per_s": round(mb_s, 1)}
        print(f"store ingest, {w} writer(s): {per_s:,.0f} exchange rows/s ({mb_s:.1f} MB/s)")
    if args.json:
        args.json.write_text(json.dumps({"machine": facts, "load_after": loadavg(), "latency_ms": args.latency_ms,
                                         "results": [m.__dict__ for m in results], "ingest": ingest}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
