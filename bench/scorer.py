"""Scorer speed: rebuild and score a large synthetic run from the store.

    python -m bench.scorer [--smoke] [--attempts N] [--exchanges E] [--postgres]
                           [--pyinstrument FILE] [--json F] [--markdown F]

Builds a run of ``N`` task attempts with about ``E`` exchanges each (default 10,000 x
10 = 100,000 exchanges; see :mod:`bench.synthetic` for their shape) in a fresh store,
then times :func:`scorer.score_run` on it in this process and reports attempts per
second and the peak resident memory of the scoring (``VmHWM``, reset just before it).
``--pyinstrument FILE`` profiles the scoring and writes pyinstrument's text report.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from bench.procs import loadavg, machine, machine_line, reset_peak_rss, self_rss_mib
from bench.report import add_output_options, emit
from bench.stores import PG_DEFAULT, temp_store
from bench.synthetic import build_run
from probegate.store import open_store
from probegate.scorer import score_run

RUN_ID = "bench"
TARGET_PER_S = 2000.0


def _score(url: str, profile: Path | None) -> tuple[int, float, float | None, float | None, int]:
    engine = open_store(url)
    try:
        before = self_rss_mib("VmRSS")
        peak_reset = reset_peak_rss()
        profiler = None
        if profile is not None:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.002)
            profiler.start()
        t0 = time.perf_counter()
        result = score_run(engine, RUN_ID)
        seconds = time.perf_counter() - t0
        if profiler is not None:
            profiler.stop()
            assert profile is not None
            profile.write_text(profiler.output_text(unicode=True, color=False, show_all=False))
        peak = self_rss_mib("VmHWM") if peak_reset else None
        passed = sum(1 for r in result.results if r.score.passed)
        return len(result.results), seconds, before, peak, passed
    finally:
        engine.dispose()


def run(attempts: int, exchanges: int, kind: str, profile: Path | None = None) -> dict[str, Any]:
    """Build the run in a fresh ``kind`` store (``sqlite`` or ``postgres``), then score it."""
    info = machine()
    with temp_store(kind, PG_DEFAULT) as url:
        t0 = time.perf_counter()
        engine = open_store(url)
        built = build_run(engine, attempts, exchanges, run_id=RUN_ID)
        engine.dispose()
        build_s = time.perf_counter() - t0
        scored, seconds, rss_before, peak, passed = _score(url, profile)
    info["loadavg_at_end"] = loadavg()
    per_s = scored / seconds if seconds > 0 else float("inf")
    return {
        "machine": info, "store": kind, "build": built, "build_s": round(build_s, 2),
        "attempts_scored": scored, "passed": passed, "seconds": round(seconds, 3),
        "attempts_per_s": round(per_s, 1), "rss_before_mib": rss_before, "peak_rss_mib": peak,
        "target_per_s": TARGET_PER_S, "met": per_s >= TARGET_PER_S,
    }


def markdown(data: dict[str, Any]) -> str:
    """The result as a Markdown table."""
    m, b = data["machine"], data["build"]
    rows = b["rows"]
    verdict = "met" if data["met"] else f"missed: {data['target_per_s'] / data['attempts_per_s']:.1f}x too slow"
    return "\n".join([
        machine_line(m), "",
        "| store | attempts | exchanges | probe calls | build s | score s | attempts / s | peak RSS MiB (before) | target |",
        "|---|---|---|---|---|---|---|---|---|",
        (f"| {data['store']} | {data['attempts_scored']} | {rows.get('exchange', 0)} | {rows.get('probecall', 0)} | "
         f"{data['build_s']:.1f} | {data['seconds']:.2f} | {data['attempts_per_s']:.0f} | "
         f"{data['peak_rss_mib']} ({data['rss_before_mib']}) | >= {data['target_per_s']:.0f}/s: {verdict} |"),
        "", (f"Templates: {b['templates']} (reference plans and mutations of every task), "
             f"{data['passed']} attempts passed."),
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="60 attempts of 4 exchanges, to check the bench runs")
    parser.add_argument("--attempts", type=int, default=10_000, help="task attempts in the synthetic run")
    parser.add_argument("--exchanges", type=int, default=10, help="exchanges per attempt to aim at")
    parser.add_argument("--postgres", action="store_true", help=f"use a fresh schema on {PG_DEFAULT} ($PROBEGATE_BENCH_PG)")
    parser.add_argument("--pyinstrument", type=Path, help="profile the scoring; write the text report here")
    add_output_options(parser)
    args = parser.parse_args()
    attempts, exchanges = (60, 4) if args.smoke else (args.attempts, args.exchanges)
    data = run(attempts, exchanges, "postgres" if args.postgres else "sqlite", args.pyinstrument)
    text = markdown(data)
    emit(args, data, text)


if __name__ == "__main__":
    main()
