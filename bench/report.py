"""Markdown for the gateway benchmark's results, and its verdicts against the targets. Pure.

Added latency is a quantile through the proxy minus the same quantile direct; ratios
compare added latencies (how many times probegate's a peer adds).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.procs import machine_line

#: Issue #8's gateway targets.
P50_TARGET_MS = 0.5
LITELLM_FACTOR = 4.0
TTFC_TARGET_MS = 1.0
#: Gaps count as preserved when the proxy moves the median gap by at most this much
#: and the client still sees at least this share of the reads it sees direct.
GAP_TOLERANCE_MS = 0.5
READS_SHARE = 0.98


@dataclass(frozen=True)
class Verdict:
    """One target: what was measured, whether it is met, by how much it is missed."""

    target: str
    measured: str
    met: bool | None  # None: could not be judged in this run
    miss: str = ""


def added(t: dict[str, Any], name: str, key: str, q: str) -> float:
    """``t[name][key][q]`` minus the same figure direct (ms)."""
    return float(t[name][key][q] - t["direct"][key][q])


def gaps_preserved(t: dict[str, Any], name: str, key: str = "stream4", direct_key: str | None = None) -> bool:
    """Median gap within :data:`GAP_TOLERANCE_MS` of direct's and reads not merged
    (``direct_key``: the direct measurement to compare with, default ``key``)."""
    s, d = t[name][key], t["direct"][direct_key or key]
    return abs(s["gap_p50"] - d["gap_p50"]) <= GAP_TOLERANCE_MS and s["chunks_per_stream"] >= READS_SHARE * d["chunks_per_stream"]


def verdicts(results: dict[str, Any]) -> list[Verdict]:
    """probegate against issue #8's gateway targets."""
    t = results["targets"]
    p50 = added(t, "probegate", "lat1", "p50")
    ttfc = added(t, "probegate", "ttfc", "p50")
    out = [
        Verdict(f"added p50 at c=1 <= {P50_TARGET_MS} ms", f"{p50:.3f} ms", p50 <= P50_TARGET_MS,
                f"+{p50 - P50_TARGET_MS:.3f} ms ({p50 / P50_TARGET_MS:.2f}x the target)" if p50 > P50_TARGET_MS else ""),
    ]
    if "LiteLLM" in t:
        lite = added(t, "LiteLLM", "lat1", "p50")
        factor = lite / p50 if p50 > 0 else float("inf")
        out.append(Verdict(f"LiteLLM adds >= {LITELLM_FACTOR:g}x probegate's p50 (c=1)", f"{factor:.1f}x",
                           factor >= LITELLM_FACTOR, "" if factor >= LITELLM_FACTOR else f"{LITELLM_FACTOR - factor:.1f}x short"))
    else:
        out.append(Verdict(f"LiteLLM adds >= {LITELLM_FACTOR:g}x probegate's p50 (c=1)", "LiteLLM not measured", None))
    out.append(Verdict(f"added time to first chunk <= {TTFC_TARGET_MS} ms", f"{ttfc:.3f} ms", ttfc <= TTFC_TARGET_MS,
                       f"+{ttfc - TTFC_TARGET_MS:.3f} ms" if ttfc > TTFC_TARGET_MS else ""))
    kept = gaps_preserved(t, "probegate", "stream1") and gaps_preserved(t, "probegate", "stream4")
    out.append(Verdict("inter-chunk gaps preserved (quiet proxy)", _gap_text(t, "probegate", "stream4"), kept))
    burst = gaps_preserved(t, "probegate", "after_burst", "stream1")
    burst_s = results.get("sizes", {}).get("seconds", 10)
    out.append(Verdict(f"inter-chunk gaps preserved right after a {burst_s:g} s burst", _gap_text(t, "probegate", "after_burst", "stream1"),
                       burst, "" if burst else f"longest gap {t['probegate']['after_burst']['gap_max']:.0f} ms"))
    pg = t["probegate"]
    lost = pg["requests_sent"] - pg["captures_written"]
    out.append(Verdict("zero captures lost", f"{pg['captures_written']} of {pg['requests_sent']}", lost == 0,
                       f"{lost} lost" if lost else ""))
    return out


def _gap_text(t: dict[str, Any], name: str, key: str, direct_key: str | None = None) -> str:
    s, d = t[name][key], t["direct"][direct_key or key]
    return (f"gap p50 {s['gap_p50']:.2f} vs {d['gap_p50']:.2f} ms direct; "
            f"{s['chunks_per_stream']:.0f} vs {d['chunks_per_stream']:.0f} reads per stream")


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if b > 0 else "–"


def latency_table(t: dict[str, Any]) -> list[str]:
    lines = ["| target | p50 c=1 | p90 c=1 | p99 c=1 | p50 c=32 | p90 c=32 | p99 c=32 | max req/s (c=64) | errors | peak RSS MiB |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in t.items():
        errors = r["lat1"]["errors"] + r["lat32"]["errors"] + r["rps_errors"]
        lines.append(f"| {name} | {r['lat1']['p50']:.2f} | {r['lat1']['p90']:.2f} | {r['lat1']['p99']:.2f} | "
                     f"{r['lat32']['p50']:.2f} | {r['lat32']['p90']:.2f} | {r['lat32']['p99']:.2f} | "
                     f"{r['rps']:.0f} | {errors} | {r.get('peak_rss_mib') or '–'} |")
    return lines


def added_table(t: dict[str, Any]) -> list[str]:
    lines = ["| proxy | p50 c=1 | p90 c=1 | p99 c=1 | p50 c=32 | p99 c=32 | req/s vs direct | p50 c=1 vs probegate |",
             "|---|---|---|---|---|---|---|---|"]
    pg = added(t, "probegate", "lat1", "p50")
    for name in (n for n in t if n != "direct"):
        mine = added(t, name, "lat1", "p50")
        lines.append(f"| {name} | {mine:.3f} | {added(t, name, 'lat1', 'p90'):.3f} | {added(t, name, 'lat1', 'p99'):.3f} | "
                     f"{added(t, name, 'lat32', 'p50'):.2f} | {added(t, name, 'lat32', 'p99'):.2f} | "
                     f"{t[name]['rps'] / t['direct']['rps']:.2f}x | {_ratio(mine, pg)} |")
    return lines


def stream_table(t: dict[str, Any]) -> list[str]:
    lines = ["| target | TTFC p50 | TTFC p90 | added p50 | gap p50 c=1 | gap max c=1 | reads c=1 | gap p50 c=4 | gap p99 c=4 | gap max c=4 | reads c=4 | gaps kept |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in t.items():
        ttfc, one, four = r["ttfc"], r["stream1"], r["stream4"]
        extra = ttfc["p50"] - t["direct"]["ttfc"]["p50"]
        kept = "–" if name == "direct" else ("yes" if gaps_preserved(t, name, "stream1") and gaps_preserved(t, name) else "no")
        lines.append(f"| {name} | {ttfc['p50']:.2f} | {ttfc['p90']:.2f} | {extra:+.2f} | {one['gap_p50']:.2f} | {one['gap_max']:.1f} | "
                     f"{one['chunks_per_stream']:.0f} | {four['gap_p50']:.2f} | {four['gap_p99']:.2f} | {four['gap_max']:.1f} | "
                     f"{four['chunks_per_stream']:.0f} | {kept} |")
    return lines


def burst_table(t: dict[str, Any]) -> list[str]:
    lines = ["| target | gap p50 | gap p99 | gap max | reads/stream | captures queued at burst end | queue empty after s |",
             "|---|---|---|---|---|---|---|"]
    for name, r in t.items():
        a, d = r["after_burst"], r.get("drain") or {}
        lines.append(f"| {name} | {a['gap_p50']:.2f} | {a['gap_p99']:.2f} | {a['gap_max']:.1f} | {a['chunks_per_stream']:.0f} | "
                     f"{d.get('backlog', '–')} | {d.get('drain_s', '–')} |")
    return lines


def gateway_markdown(results: dict[str, Any]) -> str:
    """The results as Markdown: absolute latency, added latency and ratios, streams, verdicts."""
    t = results["targets"]
    m = results["machine"]
    lines = [machine_line(m), "",
             "Absolute latency (ms, client-side, 1 KB completion):", "", *latency_table(t), "",
             "Added over direct (ms) and ratios:", "", *added_table(t), "",
             (f"Streams on a quiet proxy (ms). TTFC: short streams read one at a time. Gaps: 200-chunk streams "
              f"{results.get('gap_ms', 5.0):g} ms apart at the upstream, one (c=1) and four (c=4) at a time; "
              "reads: socket reads that brought data per stream (201 when no chunk was held back):"), "",
             *stream_table(t), "",
             (f"Streams read one at a time right after the {results['sizes']['seconds']:g} s throughput burst "
              "(probegate's writer still committing the burst's captures):"), "", *burst_table(t), "",
             "Targets (probegate):", "", "| target | measured | met | missed by |", "|---|---|---|---|"]
    for v in verdicts(results):
        met = "n/a" if v.met is None else ("yes" if v.met else "no")
        lines.append(f"| {v.target} | {v.measured} | {met} | {v.miss or '–'} |")
    lines += [""] + [f"- note: {n}" for n in results["notes"]]
    return "\n".join(lines)


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """``--json PATH`` (the raw results) and ``--markdown PATH`` (the tables), for every bench."""
    parser.add_argument("--json", type=Path, help="write the raw results here")
    parser.add_argument("--markdown", type=Path, help="write the tables here")


def emit(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    """Print ``text`` (the markdown tables); write ``data`` to ``--json`` and ``text`` to ``--markdown`` when given."""
    print(text)
    if args.json:
        args.json.write_text(json.dumps(data, indent=2))
    if args.markdown:
        args.markdown.write_text(text + "\n")

