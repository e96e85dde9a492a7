"""The replay matching key: which recorded exchange answers a new request (pure).

Two requests match when they go to the same route of the same (task, attempt) and
their *normalized* bodies are equal. Normalization keeps only what decides the
model's answer: ``model`` (unless ignored), the conversation (``messages``, ``prompt``,
``input``, ``instructions``, ``system``), the tools (``tools``, ``tool_choice``,
``functions``, ``function_call``, ``parallel_tool_calls``), the sampling parameters
and ``stream``; it drops everything else (``user``, ``metadata``, ``stream_options``,
vendor fields). A JSON-RPC message (MCP, through ``--mcp-upstream``) keeps its
``method``, ``id`` and ``params`` (minus ``params._meta``, progress tokens and the
like). Key order and JSON whitespace never matter (canonical JSON with
sorted keys); ``1`` and ``1.0`` are the same number.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

DECISIVE = (
    "model",
    "messages",
    "prompt",
    "input",
    "instructions",
    "system",
    "tools",
    "tool_choice",
    "functions",
    "function_call",
    "parallel_tool_calls",
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "max_tokens",
    "max_completion_tokens",
    "max_output_tokens",
    "stop",
    "seed",
    "n",
    "presence_penalty",
    "frequency_penalty",
    "repeat_penalty",
    "logit_bias",
    "response_format",
    "format",
    "options",
    "stream",
)


def _numbers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    return value


def _json_rpc(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    keep = {k: _numbers(message[k]) for k in ("jsonrpc", "id", "method", "params") if k in message}
    if isinstance(keep.get("params"), dict):
        keep["params"] = {k: v for k, v in keep["params"].items() if k != "_meta"}
    return keep


def normalize_request(body: Any, *, ignore_model: bool = False) -> Any:
    """The parts of a request body that decide the answer (see module docstring)."""
    if isinstance(body, list) and body and all(isinstance(m, dict) and "jsonrpc" in m for m in body):
        return [_json_rpc(m) for m in body]
    if isinstance(body, dict) and "jsonrpc" in body:
        return _json_rpc(body)
    if not isinstance(body, dict):
        return body
    keep = {k: _numbers(body[k]) for k in DECISIVE if k in body}
    if ignore_model:
        keep.pop("model", None)
    keep["stream"] = bool(keep.get("stream", False))
    return keep


def canonical(value: Any) -> str:
    """Canonical JSON: sorted keys, no whitespace, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(path: str, body: Any, *, ignore_model: bool = False) -> str:
    """A stable hash of route + normalized body (hex sha256)."""
    text = path + "\n" + canonical(normalize_request(body, ignore_model=ignore_model))
    return hashlib.sha256(text.encode()).hexdigest()


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The first field where ``a`` and ``b`` differ, as ``messages[2].content``; ``None`` if equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            sub = f"{path}.{key}" if path else key
            if key not in a or key not in b:
                return sub
            found = first_difference(a[key], b[key], sub)
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return f"{path}[{min(len(a), len(b))}]" if len(a) != len(b) else None
    return None if a == b else (path or "(body)")


def distance(a: Any, b: Any) -> int:
    """How many leaves differ between two JSON values (a rough nearness measure)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return sum(distance(a.get(k), b.get(k)) if k in a and k in b else 1 for k in set(a) | set(b))
    if isinstance(a, list) and isinstance(b, list):
        return sum(distance(x, y) for x, y in zip(a, b)) + abs(len(a) - len(b))
    return 0 if a == b else 1
