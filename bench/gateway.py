"""Gateway overhead against peers, side by side, in one run on loopback.

    python -m bench.gateway [--smoke] [--json out.json] [--markdown out.md]

Starts a fast local upstream (``bench.upstream``), then measures it directly, through
``probegate serve``, through mitmproxy in reverse mode (streaming on), and through
LiteLLM proxy when the ``bench`` extra is installed (skipped with a note otherwise):
latency p50/p90/p99 at concurrency 1 and 32, the maximum sustained rate, time to first
chunk and inter-chunk gaps of 200-chunk streams, peak RSS of each proxy, and (for
probegate) captures written against requests sent. Every process is separate, so the
client, the proxy and the upstream share the machine's cores as they would in use.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench import load
from probegate.testing.server import free_port

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Sizes:
    """How much load each measurement sends."""

    lat1: int = 2000
    lat32: int = 6000
    seconds: float = 10.0
    streams: int = 24
    warmup: int = 100

    @classmethod
    def smoke(cls) -> Sizes:
        return cls(lat1=40, lat32=64, seconds=1.0, streams=2, warmup=5)


@dataclass
class Target:
    """One way of reaching the upstream."""

    name: str
    base: str  # URL prefix up to and excluding /chat/completions
    proc: subprocess.Popen[bytes] | None = None
    sent: int = 0
    results: dict[str, Any] = field(default_factory=dict)


def _wait_http(url: str, proc: subprocess.Popen[bytes] | None, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited with {proc.returncode}")
        try:
            httpx.post(url, content=load.BODY, headers=load.HEADERS, timeout=5)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


def _spawn(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
                            env={**os.environ, **(env or {})})


def peak_rss_mib(pid: int) -> float | None:
    """Peak resident set size (VmHWM) of a process and its children, MiB."""
    total = 0.0
    found = False
    for candidate in [pid, *_children(pid)]:
        try:
            for line in Path(f"/proc/{candidate}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1]) / 1024
                    found = True
        except OSError:
            continue
    return round(total, 1) if found else None


def _children(pid: int) -> list[int]:
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    out = [int(k) for k in kids]
    for kid in list(out):
        out.extend(_children(kid))
    return out


def start_probegate(upstream: str, store: str) -> Target:
    port = free_port()
    proc = _spawn([str(BIN / "probegate"), "serve", "--upstream", upstream, "--port", str(port),
                   "--store", store])
    target = Target("probegate", f"http://127.0.0.1:{port}/r/bench/t/0/v1", proc)
    _wait_http(f"{target.base}/chat/completions", proc)
    target.sent += 1
    return target


def start_mitmproxy(upstream: str, confdir: str) -> Target | None:
    mitmdump = BIN / "mitmdump"
    if not mitmdump.exists():
        return None
    port = free_port()
    proc = _spawn([str(mitmdump), "--mode", f"reverse:{upstream}", "--listen-host", "127.0.0.1",
                   "--listen-port", str(port), "-s", str(ROOT / "bench" / "mitm_stream.py"), "-q",
                   "--set", f"confdir={confdir}"])
    target = Target("mitmproxy (reverse, stream on)", f"http://127.0.0.1:{port}/v1", proc)
    _wait_http(f"{target.base}/chat/completions", proc)
    return target


def start_litellm(upstream: str, workdir: Path) -> Target | None:
    litellm = shutil.which("litellm", path=str(BIN)) or shutil.which("litellm")
    if litellm is None:
        return None
    config = workdir / "litellm.yaml"
    config.write_text(
        "model_list:\n  - model_name: bench\n    litellm_params:\n"
        f"      model: openai/bench\n      api_base: {upstream}/v1\n      api_key: bench\n"
        "litellm_settings:\n  telemetry: false\n"
    )
    port = free_port()
    proc = _spawn([litellm, "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
                  env={"LITELLM_LOG": "ERROR", "LITELLM_TELEMETRY": "False"})
    target = Target("LiteLLM proxy", f"http://127.0.0.1:{port}/v1", proc)
    _wait_http(f"{target.base}/chat/completions", proc, timeout=180)
    return target


async def measure(target: Target, sizes: Sizes) -> None:
    url = f"{target.base}/chat/completions"
    r = target.results
    lat1 = await load.latency(url, sizes.lat1, 1, warmup=sizes.warmup)
    lat32 = await load.latency(url, sizes.lat32, 32, warmup=sizes.warmup)
    rps, ok, errors = await load.throughput(url, sizes.seconds, 64)
    prof = await load.streams(url, sizes.streams)
    target.sent += sizes.lat1 + sizes.lat32 + 2 * sizes.warmup + ok + errors + sizes.streams
    r["lat1"], r["lat32"] = asdict(lat1), asdict(lat32)
    r["rps"], r["rps_errors"] = round(rps, 1), errors
    r["stream"] = asdict(prof)
    if target.proc is not None:
        r["peak_rss_mib"] = peak_rss_mib(target.proc.pid)


def stop(target: Target) -> None:
    if target.proc is None:
        return
    target.proc.send_signal(signal.SIGTERM)
    try:
        target.proc.wait(60)
    except subprocess.TimeoutExpired:
        target.proc.kill()


def count_captures(store: str) -> int:
    from sqlalchemy import func
    from sqlmodel import Session, select

    from probegate.store import Exchange, open_store

    with Session(open_store(store)) as session:
        return session.exec(select(func.count()).select_from(Exchange)).one()


def run(sizes: Sizes, with_litellm: bool = True) -> dict[str, Any]:
    """Run every measurement; returns a JSON-able result."""
    work = Path(tempfile.mkdtemp(prefix="probegate-bench-"))
    up_port = free_port()
    upstream_url = f"http://127.0.0.1:{up_port}"
    upstream = _spawn([sys.executable, "-m", "bench.upstream", "--port", str(up_port), "--gap-ms", "5"])
    targets: list[Target] = []
    notes: list[str] = []
    store = f"sqlite:///{work / 'bench.db'}"
    try:
        _wait_http(f"{upstream_url}/v1/chat/completions", upstream)
        targets.append(Target("direct", f"{upstream_url}/v1"))
        targets.append(start_probegate(upstream_url, store))
        mitm = start_mitmproxy(upstream_url, str(work / "mitm"))
        if mitm:
            targets.append(mitm)
        else:
            notes.append("mitmproxy skipped: mitmdump not found")
        if with_litellm:
            lite = start_litellm(upstream_url, work)
            if lite:
                targets.append(lite)
            else:
                notes.append("LiteLLM skipped: install the bench extra (pip install 'probegate[bench]')")
        else:
            notes.append("LiteLLM skipped (--no-litellm)")
        for target in targets:
            asyncio.run(measure(target, sizes))
    finally:
        for target in targets:
            stop(target)
        upstream.send_signal(signal.SIGTERM)
        upstream.wait(30)
    pg = next(t for t in targets if t.name == "probegate")
    pg.results["captures_written"] = count_captures(store)
    pg.results["requests_sent"] = pg.sent
    return {
        "machine": machine(),
        "sizes": asdict(sizes),
        "targets": {t.name: t.results for t in targets},
        "notes": notes,
    }


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "platform": platform.platform()}


def added(results: dict[str, Any], name: str, key: str, q: str) -> float:
    return results["targets"][name][key][q] - results["targets"]["direct"][key][q]


def markdown(results: dict[str, Any]) -> str:
    """The results as Markdown tables (added latency, throughput, streams, memory)."""
    t = results["targets"]
    peers = [n for n in t if n != "direct"]
    lines = ["| | p50 c=1 | p90 c=1 | p99 c=1 | p50 c=32 | p99 c=32 | max req/s (c=64) | errors | peak RSS MiB |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name in t:
        r = t[name]
        lines.append(f"| {name} (ms, absolute) | {r['lat1']['p50']:.2f} | {r['lat1']['p90']:.2f} | "
                     f"{r['lat1']['p99']:.2f} | {r['lat32']['p50']:.2f} | {r['lat32']['p99']:.2f} | "
                     f"{r['rps']:.0f} | {r['lat1']['errors'] + r['lat32']['errors'] + r['rps_errors']} | "
                     f"{r.get('peak_rss_mib', '–')} |")
    lines += ["", "Added latency over direct (ms):", "",
              "| proxy | p50 c=1 | p90 c=1 | p99 c=1 | p50 c=32 | p99 c=32 | throughput vs direct |",
              "|---|---|---|---|---|---|---|"]
    for name in peers:
        lines.append(f"| {name} | {added(results, name, 'lat1', 'p50'):.2f} | {added(results, name, 'lat1', 'p90'):.2f} | "
                     f"{added(results, name, 'lat1', 'p99'):.2f} | {added(results, name, 'lat32', 'p50'):.2f} | "
                     f"{added(results, name, 'lat32', 'p99'):.2f} | {t[name]['rps'] / t['direct']['rps']:.2f}x |")
    lines += ["", "Streams (200 chunks, 5 ms apart at the upstream):", "",
              "| | time to first chunk p50 (ms) | added | gap p50 (ms) | gap p99 (ms) | chunks seen per stream |",
              "|---|---|---|---|---|---|"]
    for name in t:
        s = t[name]["stream"]
        extra = s["ttfc_p50"] - t["direct"]["stream"]["ttfc_p50"]
        lines.append(f"| {name} | {s['ttfc_p50']:.2f} | {extra:+.2f} | {s['gap_p50']:.2f} | {s['gap_p99']:.2f} | "
                     f"{s['chunks_per_stream']:.0f} |")
    pg = t["probegate"]
    lines += ["", f"probegate captures written: {pg['captures_written']} of {pg['requests_sent']} requests sent."]
    pg_added = added(results, "probegate", "lat1", "p50")
    for name in peers:
        if name != "probegate" and pg_added > 0:
            lines.append(f"- {name} adds {added(results, name, 'lat1', 'p50') / pg_added:.1f}x probegate's p50 (c=1).")
    lines += [f"- note: {n}" for n in results["notes"]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny loads, to check the bench runs")
    parser.add_argument("--no-litellm", action="store_true", help="skip LiteLLM even when installed")
    parser.add_argument("--json", type=Path, help="write the raw results here")
    parser.add_argument("--markdown", type=Path, help="write the tables here")
    args = parser.parse_args()
    sizes = Sizes.smoke() if args.smoke else Sizes()
    results = run(sizes, with_litellm=not args.no_litellm)
    text = markdown(results)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    if args.markdown:
        args.markdown.write_text(text + "\n")


if __name__ == "__main__":
    main()
