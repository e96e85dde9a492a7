"""The proxies measured side by side: probegate, mitmproxy (reverse mode) and LiteLLM proxy.

Each ``start_*`` launches the proxy as its own process in front of ``upstream`` and
returns a :class:`Target` once it answers a request, or ``None`` (with the reason)
when the proxy is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import load
from bench.procs import BIN, ROOT, spawn, wait_http
from probegate.testing.server import free_port

#: Where ``bench.gateway`` looks for LiteLLM when neither ``--litellm`` nor the
#: environment names it: the separate venv the docs install it into.
BENCH_VENV = ROOT / ".venv-bench"
LITELLM_ENV = "PROBEGATE_BENCH_LITELLM"


@dataclass
class Target:
    """One way of reaching the upstream."""

    name: str
    base: str  # URL prefix up to and excluding /chat/completions
    proc: subprocess.Popen[bytes] | None = None
    health: str | None = None  # probegate's /probegate/health (queue depth, pending captures)
    sent: int = 0
    results: dict[str, Any] = field(default_factory=dict)


def _ready(target: Target, timeout: float = 90.0) -> Target:
    wait_http(f"{target.base}/chat/completions", load.BODY, load.HEADERS, target.proc, timeout)
    target.sent += 1  # the readiness request is a request too (probegate records it)
    return target


def start_probegate(upstream: str, store: str, log: Path | None = None, transport: str | None = None,
                    no_spool: bool = False) -> Target:
    """``probegate serve`` on ``store`` with its defaults (aiohttp transport, batched
    writer, capture spool), or with ``--transport TRANSPORT`` (then named ``probegate
    (TRANSPORT)``), or with ``--no-spool`` (then named ``probegate (no spool)``)."""
    port = free_port()
    extra = ["--transport", transport] if transport else []
    extra += ["--no-spool"] if no_spool else []
    proc = spawn([str(BIN / "probegate"), "serve", "--upstream", upstream, "--port", str(port),
                  "--store", store, *extra], log=log)
    name = f"probegate ({transport})" if transport else "probegate (no spool)" if no_spool else "probegate"
    return _ready(Target(name, f"http://127.0.0.1:{port}/r/bench/t/0/v1", proc,
                         health=f"http://127.0.0.1:{port}/probegate/health"))


def start_mitmproxy(upstream: str, confdir: Path, log: Path | None = None) -> Target | None:
    """``mitmdump --mode reverse:UPSTREAM`` with an addon that streams every response."""
    mitmdump = BIN / "mitmdump"
    if not mitmdump.exists():
        return None
    port = free_port()
    proc = spawn([str(mitmdump), "--mode", f"reverse:{upstream}", "--listen-host", "127.0.0.1",
                  "--listen-port", str(port), "-s", str(ROOT / "bench" / "mitm_stream.py"), "-q",
                  "--set", f"confdir={confdir}"], log=log)
    return _ready(Target("mitmproxy", f"http://127.0.0.1:{port}/v1", proc))


def find_litellm(explicit: str | None = None) -> str | None:
    """The ``litellm`` executable: ``explicit``, else ``$PROBEGATE_BENCH_LITELLM``, else
    ``.venv-bench/bin/litellm``, else next to this Python, else on ``PATH``."""
    named = explicit or os.environ.get(LITELLM_ENV)
    if named:
        return named if Path(named).exists() else None
    for path in (BENCH_VENV / "bin" / "litellm", BIN / "litellm"):
        if path.exists():
            return str(path)
    return shutil.which("litellm")


def litellm_config(upstream: str) -> str:
    """The leanest LiteLLM proxy config for a fair comparison: one model routed to
    ``upstream`` as an OpenAI-compatible server; no database, no master key (so no
    auth lookup), no callbacks, no spend or error logs, telemetry off."""
    return (
        "model_list:\n"
        "  - model_name: bench\n"
        "    litellm_params:\n"
        "      model: openai/bench\n"
        f"      api_base: {upstream}/v1\n"
        "      api_key: bench\n"
        "litellm_settings:\n"
        "  telemetry: false\n"
        "  set_verbose: false\n"
        "  request_timeout: 600\n"
        "  callbacks: []\n"
        "  success_callback: []\n"
        "  failure_callback: []\n"
        "general_settings:\n"
        "  dangerously_permit_weak_or_unset_master_key: true\n"
        "  disable_spend_logs: true\n"
        "  disable_error_logs: true\n"
    )


LITELLM_ENV_VARS = {
    "LITELLM_LOG": "ERROR",
    "LITELLM_MODE": "PRODUCTION",  # do not read a .env file
    "LITELLM_TELEMETRY": "False",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of the model cost map at start
}


def start_litellm(upstream: str, workdir: Path, executable: str, log: Path | None = None) -> Target:
    """``litellm --config ... --num_workers 1`` with :func:`litellm_config`.

    Raises:
        RuntimeError: the proxy exited or did not answer within 180 s (its log is in ``log``).
    """
    config = workdir / "litellm.yaml"
    config.write_text(litellm_config(upstream))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_HOST", "REDIS_URL")}
    env.update(LITELLM_ENV_VARS)
    proc = subprocess.Popen(
        [executable, "--config", str(config), "--host", "127.0.0.1", "--port", str(port), "--num_workers", "1"],
        stdout=log.open("wb") if log else subprocess.DEVNULL, stderr=subprocess.STDOUT, cwd=workdir, env=env,
    )
    return _ready(Target("LiteLLM", f"http://127.0.0.1:{port}/v1", proc), timeout=180)
