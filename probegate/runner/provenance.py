"""A run's provenance: where its numbers came from, merged from what each source told. Pure.

"Record the inference framework and model version or the result cannot be
reproduced." Before its attempts start, a run asks its model server what it is
(:mod:`probegate.runner.provenance_read` does the requests) and, for the embedded
server, takes the launcher's own knowledge; :func:`merge_provenance` turns those
answers into one JSON object, stored as ``Run.params["provenance"]`` and shown in
``summary.json``, the report header, the console and ``probegate compare``.

Sources (every one may be missing; ``sources`` says which answered and which did not,
and a run never fails because a server does not tell):

- the embedded launcher (:func:`probegate.runner.embedded.launcher_facts`): GGUF path,
  size, sha256, context size, chat handler, threads, seed, llama-cpp-python version;
- ``GET /v1/models`` (OpenAI-compatible): the model's ``id`` and ``owned_by``;
  llama.cpp's server adds ``meta`` (``n_ctx_train``, ``n_params``, ``size``), vLLM
  ``max_model_len`` and ``root``;
- llama.cpp's ``GET /props``: ``model_path``, ``build_info``, ``chat_template``,
  ``default_generation_settings`` (``n_ctx``, sampling ``params``);
- Ollama's ``GET /api/version`` (``version``) and ``POST /api/show`` (``details``:
  ``format``, ``family``, ``parameter_size``, ``quantization_level``; ``model_info``:
  ``<arch>.context_length``...); ``/api/show`` is asked only when ``/api/version`` answered;
- vLLM's ``GET /version`` (``version``);
- the ``server`` and ``x-*`` response headers of those answers (credential-like names left out).

Shape (``version`` 1)::

    {"version": 1,
     "server": {"software", "version", "build"},
     "model": {"name", "owned_by", "file", "path", "size_bytes", "sha256", "quantization",
               "format", "family", "parameter_size", "n_params", "context_size", "context_train"},
     "chat": {"handler", "template_sha256"},
     "sampling": {"temperature", "max_tokens", "seed", "server_defaults": {...}},
     "launcher": {...} | null,
     "shims": ["rule", ...], "probegate": "0.1.0",
     "frameworks": {"openai": "2.54.0", "openai-agents": null, ...},
     "headers": {"server": "uvicorn", ...},
     "sources": {"embedded launcher": "answered", "GET /v1/models": "answered",
                 "GET /props": "HTTP 404", "POST /api/show": "not asked: ...", ...}}

A value no source told is ``null``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

#: Version of the provenance object's shape.
PROVENANCE_VERSION = 1
#: The server queries, in the order they are asked.
MODELS, PROPS, OLLAMA_VERSION, OLLAMA_SHOW, VLLM_VERSION = (
    "GET /v1/models", "GET /props", "GET /api/version", "POST /api/show", "GET /version")
QUERIES = (MODELS, PROPS, OLLAMA_VERSION, OLLAMA_SHOW, VLLM_VERSION)
LAUNCHER = "embedded launcher"
#: Installed packages whose versions a run records (``None`` when not installed).
FRAMEWORKS = ("openai", "openai-agents", "langchain", "langchain-core", "langchain-openai", "crewai",
              "llama-cpp-python", "httpx")
#: llama.cpp's quantization types as GGUF file names spell them (longest first).
_QUANT = re.compile(
    r"(?<![A-Za-z0-9])(I?Q[1-8]_[A-Z0-9]+(?:_[A-Z0-9]+)*|Q[1-8]_[0-9]|BF16|F16|F32|FP16|FP32)(?![A-Za-z0-9])",
    re.IGNORECASE)
_HEADER_SECRET = re.compile(r"key|token|secret|auth|passw|credential|session|cookie|signature", re.IGNORECASE)
_SERVER_DEFAULTS = ("temperature", "top_k", "top_p", "min_p", "n_predict", "seed", "repeat_penalty")


@dataclass(frozen=True)
class Answer:
    """What one server query gave.

    Attributes:
        status: HTTP status (``None`` when no HTTP answer came).
        body: the JSON body (``None`` when it was not JSON).
        headers: response headers, names lower-case.
        error: why no answer came (``"ConnectTimeout"``...), or why it was not asked.
        asked: whether the request was sent.
    """

    status: int | None = None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    asked: bool = True

    @property
    def ok(self) -> bool:
        """A 2xx answer with a JSON object body."""
        return self.status is not None and 200 <= self.status < 300 and isinstance(self.body, dict)

    def describe(self) -> str:
        """``answered``, ``HTTP 404``, ``not JSON``, ``no answer: ReadTimeout`` or ``not asked: why``."""
        if not self.asked:
            return f"not asked: {self.error}"
        if self.status is None:
            return f"no answer: {self.error}"
        if not 200 <= self.status < 300:
            return f"HTTP {self.status}"
        return "answered" if isinstance(self.body, dict) else "not JSON"


def quantization_from_name(name: str | None) -> str | None:
    """The quantization a GGUF file name states (``SmolLM2-135M-Instruct.Q4_1.gguf`` -> ``Q4_1``;
    ``model-q4_k_m.gguf`` -> ``Q4_K_M``), upper-case; ``None`` when the name states none."""
    if not name:
        return None
    found = _QUANT.findall(PurePath(name).name)
    return found[-1].upper() if found else None


def text_sha256(text: Any) -> str | None:
    """sha256 (hex) of a text such as a chat template; ``None`` for anything else."""
    return hashlib.sha256(text.encode()).hexdigest() if isinstance(text, str) and text else None


def _get(body: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(body, dict):
            return None
        body = body.get(key)
    return body


def model_entry(body: Any, model: str | None) -> dict[str, Any] | None:
    """The ``/v1/models`` entry whose ``id`` is ``model`` (the first entry when none is,
    and the list has exactly one); ``None`` when the body holds no such entry."""
    data = _get(body, "data")
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, dict)]
    for entry in entries:
        if entry.get("id") == model:
            return entry
    return entries[0] if len(entries) == 1 else None


def _context_length(model_info: Any) -> int | None:
    """``<architecture>.context_length`` from Ollama's ``model_info``."""
    if not isinstance(model_info, dict):
        return None
    arch = model_info.get("general.architecture")
    value = model_info.get(f"{arch}.context_length") if arch else None
    if value is None:
        value = next((v for k, v in model_info.items() if k.endswith(".context_length")), None)
    return value if isinstance(value, int) else None


def _headers(answers: dict[str, Answer]) -> dict[str, str]:
    """``server`` and ``x-*`` headers of the answers (first seen wins); names that look
    like credentials are left out."""
    seen: dict[str, str] = {}
    for answer in answers.values():
        for name, value in answer.headers.items():
            name = name.lower()
            if (name == "server" or name.startswith("x-")) and not _HEADER_SECRET.search(name):
                seen.setdefault(name, value)
    return dict(sorted(seen.items()))


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None and v != ""), None)


def merge_provenance(
    *,
    model: str | None,
    answers: dict[str, Answer] | None = None,
    launcher: dict[str, Any] | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    shims: list[str] | None = None,
    probegate_version: str | None = None,
    frameworks: dict[str, str | None] | None = None,
    not_queried: str | None = None,
) -> dict[str, Any]:
    """Merge what the sources told into the provenance object (see the module docstring).

    Args:
        model: the model name the run sends.
        answers: each server query's :class:`Answer`, keyed by :data:`QUERIES` (a missing
            key: not asked).
        launcher: the embedded launcher's facts (:func:`probegate.runner.embedded.launcher_facts`),
            ``None`` for any other server.
        temperature: the run's sampling temperature.
        max_tokens: the bound the harnesses send (``None``: they send none, the server's
            default applies).
        shims: the run's ``--compat`` rules.
        probegate_version: this probegate's version.
        frameworks: installed package versions (:data:`FRAMEWORKS`).
        not_queried: why the server was not asked at all (an external gateway...).

    Returns:
        The provenance dict: plain JSON values only.
    """
    answers = dict(answers or {})
    launch = launcher or {}
    ok = {name: a.body for name, a in answers.items() if a.ok}
    entry = model_entry(ok.get(MODELS), model) or {}
    meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
    props = ok.get(PROPS) or {}
    settings = props.get("default_generation_settings") if isinstance(props.get("default_generation_settings"), dict) else {}
    props_params = settings.get("params") if isinstance(settings.get("params"), dict) else {}
    show = ok.get(OLLAMA_SHOW) or {}
    details = show.get("details") if isinstance(show.get("details"), dict) else {}
    ollama = _get(ok.get(OLLAMA_VERSION), "version")
    vllm = _get(ok.get(VLLM_VERSION), "version") if ollama is None else None
    build = _first(props.get("build_info"), _get(props, "build", "info"))

    if launch:
        software, version = launch.get("software"), launch.get("software_version")
    elif ollama is not None:
        software, version = "ollama", ollama
    elif vllm is not None or entry.get("owned_by") == "vllm":
        software, version = "vllm", vllm
    elif props or entry.get("owned_by") == "llamacpp":
        software, version = "llama.cpp server", build
    else:
        software, version = None, None

    path = _first(launch.get("model_path"), props.get("model_path"), _get(props, "default_generation_settings", "model"))
    file = PurePath(path).name if isinstance(path, str) else None
    provenance = {
        "version": PROVENANCE_VERSION,
        "server": {"software": software, "version": version, "build": build},
        "model": {
            "name": _first(entry.get("id"), model),
            "owned_by": entry.get("owned_by"),
            "file": file,
            "path": path,
            "size_bytes": _first(launch.get("size_bytes"), meta.get("size")),
            "sha256": launch.get("sha256"),
            "quantization": _first(details.get("quantization_level"), quantization_from_name(file)),
            "format": _first(details.get("format"), "gguf" if file and file.lower().endswith(".gguf") else None),
            "family": details.get("family"),
            "parameter_size": details.get("parameter_size"),
            "n_params": meta.get("n_params"),
            "context_size": _first(launch.get("n_ctx"), settings.get("n_ctx"), entry.get("max_model_len"),
                                   _ollama_num_ctx(show.get("parameters"))),
            "context_train": _first(meta.get("n_ctx_train"), _context_length(show.get("model_info"))),
        },
        "chat": {
            "handler": launch.get("chat_handler"),
            "template_sha256": _first(text_sha256(props.get("chat_template")), text_sha256(show.get("template"))),
        },
        "sampling": {
            "temperature": temperature,
            "max_tokens": max_tokens,
            "seed": _first(launch.get("seed"), props_params.get("seed")),
            "server_defaults": {k: props_params[k] for k in _SERVER_DEFAULTS if k in props_params},
        },
        "launcher": launcher,
        "shims": list(shims or []),
        "probegate": probegate_version,
        "frameworks": dict(frameworks or {}),
        "headers": _headers(answers),
        "sources": _sources(answers, launcher, not_queried),
    }
    return provenance


def _ollama_num_ctx(parameters: Any) -> int | None:
    """``num_ctx`` from Ollama's ``parameters`` text (``"num_ctx 4096\\nstop ..."``)."""
    if not isinstance(parameters, str):
        return None
    found = re.search(r"^\s*num_ctx\s+(\d+)\s*$", parameters, re.MULTILINE)
    return int(found.group(1)) if found else None


def _sources(answers: dict[str, Answer], launcher: dict[str, Any] | None, not_queried: str | None) -> dict[str, str]:
    sources = {LAUNCHER: "answered"} if launcher else {}
    for name in QUERIES:
        if not_queried is not None:
            sources[name] = f"not asked: {not_queried}"
        elif name in answers:
            sources[name] = answers[name].describe()
        else:
            sources[name] = "not asked"
    return sources
