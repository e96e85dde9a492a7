"""Gateway overhead against peers, side by side, in one run on loopback.

    python -m bench.gateway [--smoke] [--no-litellm] [--litellm PATH] [--json F] [--markdown F]
                            [--py-spy DIR] [--httpx-transport]

Starts a fast local upstream (``bench.upstream``), then measures it directly, through
``probegate serve``, through mitmproxy in reverse mode (streaming on), and through
LiteLLM proxy when it is installed (``--litellm PATH``, ``$PROBEGATE_BENCH_LITELLM``,
``.venv-bench/bin/litellm`` or ``PATH``; skipped with a note otherwise):

- latency p50/p90/p99 at concurrency 1 and 32, in interleaved rounds (every target
  gets a slice of each round, so a drift in machine load hits all of them alike);
- the maximum sustained rate (closed loop, 64 clients);
- streams: time to first chunk of short streams read one at a time; inter-chunk gaps
  of 200-chunk streams paced 5 ms apart, one at a time and four at a time, on a quiet
  proxy, and one at a time right after the throughput burst (while probegate's writer
  still drains the burst's captures: the backlog and its drain time are reported);
- peak RSS of each proxy, and for probegate captures written against requests sent.

Every process is separate, so client, proxy and upstream share the machine's cores as
they would in use. ``--py-spy DIR`` records the probegate process with py-spy while it
is measured (the numbers of such a run are perturbed by the sampling).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from bench import load, peers, report
from bench.peers import Target
from bench.procs import BIN, loadavg, machine, peak_rss_mib, spawn, stop, wait_http
from probegate.testing.server import free_port

GAP_MS = 5.0


@dataclass
class Sizes:
    """How much load each measurement sends."""

    lat1: int = 4000
    lat32: int = 8000
    rounds: int = 4
    seconds: float = 10.0
    ttfc: int = 400
    streams1: int = 10
    streams4: int = 24
    after_burst: int = 4
    warmup: int = 50

    @classmethod
    def smoke(cls) -> Sizes:
        """Tiny loads: checks the code runs, measures nothing."""
        return cls(lat1=40, lat32=64, rounds=2, seconds=1.0, ttfc=10, streams1=2, streams4=4, after_burst=1, warmup=5)


async def _interleaved(targets: list[Target], n: int, concurrency: int, sizes: Sizes) -> None:
    """Latency at ``concurrency`` for every target, in ``sizes.rounds`` interleaved slices."""
    key = f"lat{concurrency}"
    samples: dict[str, list[float]] = {t.name: [] for t in targets}
    errors = dict.fromkeys(samples, 0)
    per_round = max(1, n // sizes.rounds)
    for _ in range(sizes.rounds):
        for target in targets:
            got, bad = await load.latency_samples(f"{target.base}/chat/completions", per_round, concurrency,
                                                  warmup=sizes.warmup)
            samples[target.name] += got
            errors[target.name] += bad
            target.sent += per_round + sizes.warmup
    for target in targets:
        target.results[key] = asdict(load.Latency.of(samples[target.name], concurrency, errors[target.name]))


async def _drain(target: Target, key: str = "pending", timeout: float = 300.0) -> dict[str, Any] | None:
    """Wait until probegate's health figure ``key`` is 0; returns it at the start and the wait (s).

    ``queue_depth`` counts captures waiting for the writer; ``pending`` also counts the
    batch being written and the exchanges in flight (streams being read).
    """
    if target.health is None:
        return None
    t0 = time.perf_counter()
    async with httpx.AsyncClient(timeout=10) as client:
        first = (await client.get(target.health)).json()
        left = first[key]
        while left > 0 and time.perf_counter() - t0 < timeout:
            await asyncio.sleep(0.02)
            left = (await client.get(target.health)).json()[key]
    return {"backlog": first[key], "drain_s": round(time.perf_counter() - t0, 2), "left": left}


async def _each(target: Target, sizes: Sizes) -> None:
    """Throughput, streams while probegate drains the burst's backlog, then quiet streams."""
    url = f"{target.base}/chat/completions"
    rps, ok, errors = await load.throughput(url, sizes.seconds, 64)
    after, drain = await asyncio.gather(load.streams(url, sizes.after_burst, concurrency=1),
                                        _drain(target, "queue_depth"))
    await _drain(target, "pending")
    ttfc = await load.first_chunk(url, sizes.ttfc, warmup=sizes.warmup)
    one = await load.streams(url, sizes.streams1, concurrency=1)
    four = await load.streams(url, sizes.streams4, concurrency=4, stagger_ms=GAP_MS * 50)
    target.sent += (ok + errors + sizes.after_burst + sizes.ttfc + sizes.warmup + sizes.streams1 + sizes.streams4
                    + 3)  # + one warm-up stream per streams() call
    target.results.update(rps=round(rps, 1), rps_errors=errors, after_burst=asdict(after), drain=drain,
                          ttfc=asdict(ttfc), stream1=asdict(one), stream4=asdict(four))


async def measure(targets: list[Target], sizes: Sizes) -> None:
    """Run every measurement on every target; results land in ``target.results``."""
    await _interleaved(targets, sizes.lat1, 1, sizes)
    await _interleaved(targets, sizes.lat32, 32, sizes)
    for target in targets:
        await _each(target, sizes)
        if target.proc is not None:
            target.results["peak_rss_mib"] = peak_rss_mib(target.proc.pid)


def count_captures(store: str) -> int:
    """Exchange rows in ``store``."""
    from sqlalchemy import func
    from sqlmodel import Session, select

    from probegate.store import Exchange, open_store

    engine = open_store(store)
    try:
        with Session(engine) as session:
            return session.exec(select(func.count()).select_from(Exchange)).one()
    finally:
        engine.dispose()


def _start_peers(upstream: str, work: Path, litellm: str | None, use_litellm: bool,
                 httpx_transport: bool = False, no_spool: bool = False) -> tuple[list[Target], list[str]]:
    targets: list[Target] = []
    notes: list[str] = []
    try:
        targets.append(peers.start_probegate(upstream, f"sqlite:///{work / 'bench.db'}", work / "probegate.log"))
        if httpx_transport:
            targets.append(peers.start_probegate(upstream, f"sqlite:///{work / 'bench-httpx.db'}",
                                                 work / "probegate-httpx.log", transport="httpx"))
        if no_spool:
            targets.append(peers.start_probegate(upstream, f"sqlite:///{work / 'bench-nospool.db'}",
                                                 work / "probegate-nospool.log", no_spool=True))
        mitm = peers.start_mitmproxy(upstream, work / "mitm", work / "mitmproxy.log")
        if mitm:
            targets.append(mitm)
        else:
            notes.append("mitmproxy skipped: mitmdump not found next to this Python")
        if not use_litellm:
            notes.append("LiteLLM skipped (--no-litellm)")
            return targets, notes
        executable = peers.find_litellm(litellm)
        if executable is None:
            notes.append("LiteLLM skipped: no litellm executable (see docs/benchmarks.md to install it)")
        else:
            targets.append(peers.start_litellm(upstream, work, executable, work / "litellm.log"))
    except BaseException:
        for target in targets:
            stop(target.proc)
        raise
    return targets, notes


def _py_spy(pid: int, out_dir: Path) -> subprocess.Popen[bytes]:
    out_dir.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([str(BIN / "py-spy"), "record", "--pid", str(pid), "--rate", "500", "--nonblocking", "--threads",
                             "--format", "raw", "-o", str(out_dir / "probegate.txt")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run(sizes: Sizes, use_litellm: bool = True, litellm: str | None = None, py_spy: Path | None = None,
        httpx_transport: bool = False, no_spool: bool = False) -> dict[str, Any]:
    """Run every measurement; returns a JSON-able result (see :mod:`bench.report`)."""
    info = machine()
    work = Path(tempfile.mkdtemp(prefix="probegate-bench-"))
    up_port = free_port()
    upstream_url = f"http://127.0.0.1:{up_port}"
    upstream = spawn([str(BIN / "python"), "-m", "bench.upstream", "--port", str(up_port), "--gap-ms", str(GAP_MS)])
    targets: list[Target] = []
    spy = None
    try:
        wait_http(f"{upstream_url}/v1/chat/completions", load.BODY, load.HEADERS, upstream)
        started, notes = _start_peers(upstream_url, work, litellm, use_litellm, httpx_transport, no_spool)
        targets = [Target("direct", f"{upstream_url}/v1"), *started]
        pg = targets[1]
        if py_spy is not None and pg.proc is not None:
            spy = _py_spy(pg.proc.pid, py_spy)
            notes.append(f"py-spy recorded probegate during this run ({py_spy}): its numbers are perturbed")
        asyncio.run(measure(targets, sizes))
        info["loadavg_at_end"] = loadavg()
    finally:
        for target in targets:
            stop(target.proc)
        if spy is not None:
            spy.wait(60)
        stop(upstream)
    pg.results["captures_written"] = count_captures(f"sqlite:///{work / 'bench.db'}")
    pg.results["requests_sent"] = pg.sent
    for target in targets[2:]:
        stores = {"probegate (httpx)": "bench-httpx.db", "probegate (no spool)": "bench-nospool.db"}
        if target.name in stores:
            target.results["captures_written"] = count_captures(f"sqlite:///{work / stores[target.name]}")
            target.results["requests_sent"] = target.sent
    return {"machine": info, "sizes": asdict(sizes), "gap_ms": GAP_MS, "workdir": str(work),
            "targets": {t.name: t.results for t in targets}, "notes": notes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny loads, to check the bench runs")
    parser.add_argument("--no-litellm", action="store_true", help="skip LiteLLM even when installed")
    parser.add_argument("--litellm", help=f"the litellm executable (default: ${peers.LITELLM_ENV}, "
                                          ".venv-bench/bin/litellm, then PATH)")
    report.add_output_options(parser)
    parser.add_argument("--py-spy", type=Path, help="record the probegate process with py-spy into this folder")
    parser.add_argument("--httpx-transport", action="store_true",
                        help="also measure probegate with --transport httpx (the transport comparison)")
    parser.add_argument("--no-spool-peer", action="store_true",
                        help="also measure probegate with --no-spool (what the capture spool costs)")
    args = parser.parse_args()
    sizes = Sizes.smoke() if args.smoke else Sizes()
    results = run(sizes, use_litellm=not args.no_litellm, litellm=args.litellm, py_spy=args.py_spy,
                  httpx_transport=args.httpx_transport, no_spool=args.no_spool_peer)
    text = report.gateway_markdown(results)
    report.emit(args, results, text)


if __name__ == "__main__":
    main()
