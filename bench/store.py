"""Capture store write speed: exchanges per second through the real ``CaptureWriter``.

    python -m bench.store [--smoke] [--plain N] [--streams N] [--postgres URL | --no-postgres]
                          [--json F] [--markdown F]

The captures are :class:`probegate.gateway.capture.RecordedExchange` objects as the gateway's
hot path leaves them (raw request bytes, response pieces with their offsets), so the
writer thread does what it does in a live run: decode, split the stream into events,
reassemble the turn, redact, then commit in batches. Two shapes: a 1 KB request with
a 1 KB completion, and the same request answered by a 200-chunk SSE stream. The
producer submits as fast as the queue takes them (back-pressure included); the rate
is captures over the time from the first submit until ``flush`` returns, and the
drain is the time from the last submit until then.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, select

from bench.procs import loadavg, machine, machine_line
from bench.report import add_output_options, emit
from bench.stores import PG_DEFAULT, pg_unavailable, temp_store
from bench.upstream import CHUNKS, COMPLETION
from probegate.gateway.capture import RecordedExchange
from probegate.store import CaptureWriter, Exchange, new_id, open_store, utcnow

SYSTEM = ("You are a support agent for a logistics company. Answer briefly, use the tools to look "
          "up orders and tickets before you answer, never invent an order number. ") * 3
REQUEST = json.dumps({
    "model": "bench",
    "messages": [{"role": "system", "content": SYSTEM},
                 {"role": "user", "content": "Where is order ORD-5003 and when will it arrive in Hamburg?"}],
    "tools": [{"type": "function", "function": {"name": "get_order", "description": "Look up one order by its id: status, lines, totals, shipping address and tracking number.",
               "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                              "required": ["order_id"]}}}],
    "temperature": 0,
    "max_tokens": 512,
}).encode()
STREAM_REQUEST = REQUEST[:-1] + b', "stream": true}'
REQUEST_HEADERS = [(b"host", b"127.0.0.1:8700"), (b"content-type", b"application/json"),
                   (b"authorization", b"Bearer sk-bench-0123456789"), (b"user-agent", b"OpenAI/Python 2.54.0"),
                   (b"accept", b"application/json"), (b"content-length", str(len(REQUEST)).encode())]


def recording(shape: str, seq: int) -> RecordedExchange:
    """One exchange as the pass-through records it: ``plain`` (1 KB JSON answer) or
    ``stream`` (201 SSE pieces, 5 ms apart)."""
    stream = shape == "stream"
    pieces = [(1.0 + 5.0 * i, chunk) for i, chunk in enumerate(CHUNKS)] if stream else [(1.0, COMPLETION)]
    content_type = b"text/event-stream" if stream else b"application/json"
    now = utcnow()
    return RecordedExchange(
        id=new_id(), run_id="bench", task_id=f"task-{seq % 50}", attempt=0, seq=seq, started_at=now,
        method="POST", path="/v1/chat/completions", query="", request_headers=list(REQUEST_HEADERS),
        request_body=STREAM_REQUEST if stream else REQUEST, status_code=200,
        response_headers=[(b"content-type", content_type)], pieces=pieces, ended_at=now,
        ttft_ms=1.0, latency_ms=pieces[-1][0], overhead_ms=0.3,
    )


@dataclass
class WriteResult:
    """One store x shape measurement."""

    store: str
    shape: str
    captures: int
    seconds: float
    per_second: float
    drain_s: float
    written: int
    spilled: int
    writer_errors: int


def measure(url: str, store: str, shape: str, n: int) -> WriteResult:
    """Submit ``n`` captures of ``shape`` to a writer on ``url`` and time until committed."""
    records = [recording(shape, i) for i in range(n)]
    engine = open_store(url)
    writer = CaptureWriter(engine).start()
    try:
        t0 = time.perf_counter()
        for rec in records:
            # RecordedExchange is a Capture; mypy rejects it only because Capture.to_rows
            # is declared as list[SQLModel] (invariant) and it returns list[Exchange]
            writer.submit_blocking(rec)  # type: ignore[arg-type]
        submitted = time.perf_counter()
        writer.flush()
        done = time.perf_counter()
    finally:
        writer.close()
    with Session(engine) as session:
        written = session.exec(select(func.count()).select_from(Exchange)).one()
    engine.dispose()
    seconds = done - t0
    return WriteResult(store, shape, n, round(seconds, 3), round(n / seconds, 1), round(done - submitted, 3),
                       written, writer.stats.spilled, writer.stats.errors)


def run(plain: int, streams: int, pg_url: str | None) -> dict[str, Any]:
    """Every store x shape; PostgreSQL is skipped with a note when ``pg_url`` is ``None``
    or the server does not answer."""
    info = machine()
    kinds = ["sqlite"]
    notes: list[str] = []
    if pg_url is None:
        notes.append("PostgreSQL skipped (--no-postgres)")
    elif (why := pg_unavailable(pg_url)) is not None:
        notes.append(why)
    else:
        kinds.append("postgres")
    results = []
    for kind in kinds:
        for shape, n in (("plain", plain), ("stream", streams)):
            with temp_store(kind, pg_url or PG_DEFAULT) as url:
                results.append(measure(url, kind, shape, n))
    info["loadavg_at_end"] = loadavg()
    return {"machine": info, "results": [asdict(r) for r in results], "notes": notes}


def markdown(data: dict[str, Any]) -> str:
    """The results as a Markdown table."""
    m = data["machine"]
    lines = [machine_line(m), "",
             "| store | capture | captures | exchanges written / s | total s | drain after last submit s | written | spilled | writer errors |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in data["results"]:
        shape = "1 KB JSON answer" if r["shape"] == "plain" else "200-chunk SSE stream"
        lines.append(f"| {r['store']} | {shape} | {r['captures']} | {r['per_second']:.0f} | {r['seconds']:.2f} | "
                     f"{r['drain_s']:.2f} | {r['written']} | {r['spilled']} | {r['writer_errors']} |")
    lines += [f"- note: {n}" for n in data["notes"]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny counts, to check the bench runs")
    parser.add_argument("--plain", type=int, default=20_000, help="captures with a 1 KB JSON answer")
    parser.add_argument("--streams", type=int, default=4_000, help="captures with a 200-chunk stream")
    parser.add_argument("--postgres", default=PG_DEFAULT, help="PostgreSQL server URL (a schema is made and dropped)")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    add_output_options(parser)
    args = parser.parse_args()
    plain, streams = (50, 10) if args.smoke else (args.plain, args.streams)
    data = run(plain, streams, None if args.no_postgres else args.postgres)
    text = markdown(data)
    emit(args, data, text)


if __name__ == "__main__":
    main()
