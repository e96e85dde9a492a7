"""Process helpers for the benchmarks: spawn, wait until answering, peak memory, machine facts."""

from __future__ import annotations

import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def spawn(args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
          log: Path | None = None) -> subprocess.Popen[bytes]:
    """Start ``args`` in its own process; output goes to ``log`` (or nowhere)."""
    out = log.open("wb") if log else subprocess.DEVNULL
    return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
                            cwd=cwd or ROOT, env={**os.environ, **(env or {})})


def wait_http(url: str, body: bytes, headers: dict[str, str], proc: subprocess.Popen[bytes] | None,
              timeout: float = 90.0) -> None:
    """POST ``body`` to ``url`` until it answers 200.

    Raises:
        RuntimeError: the process exited, or no 200 came within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}")
        try:
            response = httpx.post(url, content=body, headers=headers, timeout=5)
            if response.status_code == 200:
                return
            last = f"HTTP {response.status_code}: {response.text[:200]}"
        except httpx.TransportError as exc:
            last = repr(exc)
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer 200 within {timeout} s ({last})")


def _children(pid: int) -> list[int]:
    try:
        kids = [int(k) for k in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
    return kids + [grand for kid in kids for grand in _children(kid)]


def _status_kib(pid: int, field: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def peak_rss_mib(pid: int) -> float | None:
    """Peak resident set size (``VmHWM``) of a process plus its children, MiB."""
    values = [_status_kib(p, "VmHWM") for p in [pid, *_children(pid)]]
    found = [v for v in values if v is not None]
    return round(sum(found) / 1024, 1) if found else None


def reset_peak_rss() -> bool:
    """Reset this process's ``VmHWM`` to its current RSS (Linux ``clear_refs`` 5); ``False`` if refused."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def self_rss_mib(field: str = "VmHWM") -> float | None:
    """This process's ``VmHWM`` (peak) or ``VmRSS`` (now), MiB."""
    kib = _status_kib(os.getpid(), field)
    return round(kib / 1024, 1) if kib is not None else None


def stop(proc: subprocess.Popen[bytes] | None, timeout: float = 60.0) -> None:
    """SIGTERM ``proc`` and wait; SIGKILL when it does not exit within ``timeout`` s."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def loadavg() -> list[float]:
    """The 1/5/15-minute load averages (empty where the platform has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def machine() -> dict[str, Any]:
    """CPU model, core count, Python, platform and the 1/5/15-minute load when measured."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "platform": platform.platform(), "loadavg_at_start": loadavg()}


def machine_line(m: dict[str, Any]) -> str:
    """One Markdown line: CPU, cores, Python, the load averages at start (and end)."""
    def fmt(load: list[float]) -> str:
        return " / ".join(str(x) for x in load) or "unknown"

    end = f", at end {fmt(m['loadavg_at_end'])}" if m.get("loadavg_at_end") else ""
    return (f"Machine: {m['cpu']}, {m['cpus']} cores, Python {m['python']}, {m['platform']}; "
            f"load average (1/5/15 min) at start {fmt(m.get('loadavg_at_start', []))}{end}.")
