"""What the audit agents share: the ``cmd:`` harness environment, the tools and the model
over plain HTTP (stdlib only, so each attempt starts fast), and values harvested from
the prompt. Scripts in this folder are run by path (``python <script>``), which puts this
folder first on ``sys.path``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

TIMEOUT_S = 30.0


def env(name: str, default: str = "") -> str:
    """A variable the ``cmd:`` harness sets (``PROBEGATE_TASK_PROMPT``, ...)."""
    return os.environ.get(name, default)


def _request(method: str, url: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"content-type": "application/json", "authorization": f"Bearer {env('OPENAI_API_KEY', 'x')}"}
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    try:
        return status, json.loads(raw or b"null")
    except ValueError:
        return status, raw.decode("utf-8", "replace")


def tools() -> list[dict[str, Any]]:
    """The offered tools' function schemas (``{"name", "parameters", ...}``)."""
    _, body = _request("GET", env("PROBEGATE_TOOLS_URL"))
    listed = body.get("tools", []) if isinstance(body, dict) else []
    return [t.get("function", t) for t in listed]


def call(tool: str, args: dict[str, Any]) -> tuple[int, Any]:
    """Call a tool through the probes: ``(status, body)``."""
    return _request("POST", f"{env('PROBEGATE_TOOLS_URL').rstrip('/')}/{tool}", args)


def chat(messages: list[dict[str, Any]]) -> tuple[int, Any]:
    """One chat completion through the gateway: ``(status, body)``."""
    body = {"model": env("OPENAI_MODEL", "model"), "messages": messages}
    return _request("POST", f"{env('OPENAI_BASE_URL').rstrip('/')}/chat/completions", body)


def harvest(prompt: str) -> dict[str, list[str]]:
    """Values written in the prompt, by kind: ids, emails, dates, times, numbers, names."""
    return {
        "id": list(dict.fromkeys(re.findall(r"\b[A-Z]{2,6}-\d{2,}\b", prompt))),
        "email": list(dict.fromkeys(re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", prompt))),
        "date": list(dict.fromkeys(re.findall(r"\b\d{4}-\d{2}-\d{2}\b", prompt))),
        "time": list(dict.fromkeys(re.findall(r"\b\d{1,2}:\d{2}\b", prompt))),
        "number": list(dict.fromkeys(re.findall(r"\b\d+(?:\.\d+)?\b", prompt))),
        "name": list(dict.fromkeys(re.findall(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*\b", prompt))),
    }


def task(task_set: str) -> dict[str, Any]:
    """The current task's YAML (the knowing agents read it from ``--task-set``'s folder).

    Raises:
        SystemExit: the task is not in the folder.
    """
    import yaml  # the probegate venv has it; only the agents that read tasks need it

    want = env("PROBEGATE_TASK")
    for path in sorted(Path(task_set).glob("*.y*ml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("id") == want:
            return json.loads(json.dumps(data, default=str))  # YAML dates as ISO text
    sys.exit(f"task {want} not found in {task_set}")


def task_set_arg() -> str:
    """The ``--task-set FOLDER`` argument of a knowing agent."""
    args = sys.argv[1:]
    if "--task-set" not in args or args.index("--task-set") + 1 >= len(args):
        sys.exit("usage: python AGENT.py --task-set FOLDER")
    return args[args.index("--task-set") + 1]


def spam() -> str:
    """An answer that lists every candidate: numbers, dates, times, ids and common words."""
    numbers = " ".join(str(n) for n in range(2001))
    dates = " ".join(f"2025-{m:02d}-{d:02d}" for m in range(1, 7) for d in range(1, 29))
    times = " ".join(f"{h:02d}:{m:02d}" for h in range(24) for m in (0, 30))
    ids = " ".join(f"{p}-{n}" for p, base in (("ORD", 5000), ("TCK", 3000), ("SKU", 1000), ("CUST", 1000), ("DOC", 300))
                   for n in range(base, base + 13))
    words = ("done sent created booked shipped processing not shipped delivered cloudy overcast sunny rain "
             "International domestic high low normal urgent yes no")
    return f"{words} {numbers} {dates} {times} {ids} {env('PROBEGATE_TASK_PROMPT')}"
