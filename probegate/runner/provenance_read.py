"""Reading a run's provenance: the server queries, installed versions, the GGUF checksum.

:func:`read_server` asks a model server what it is (short timeouts; a server that
answers nothing costs at most one timeout, since the rest is skipped when
``GET /v1/models`` gets no answer at all); :func:`run_provenance` adds the installed
framework versions and the embedded launcher's facts and merges them
(:func:`probegate.runner.provenance.merge_provenance`). :func:`file_sha256` hashes a
GGUF once and caches the digest by (path, size, mtime), so a run does not re-read the
file every time (94 MiB: about 0.15 s warm, more from a cold disk).

The requests carry ``User-Agent: probegate-provenance/VERSION`` (a scripted test
server, :class:`probegate.testing.ScriptedUpstream`, answers them apart from its
script) and the run's API key as a bearer token, as the gateway would send it; the
key and the request headers are never part of the result.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import httpx

from probegate.runner.provenance import (
    FRAMEWORKS,
    MODELS,
    OLLAMA_SHOW,
    OLLAMA_VERSION,
    PROPS,
    QUERIES,
    VLLM_VERSION,
    Answer,
    merge_provenance,
)

#: User-Agent prefix of the provenance requests.
USER_AGENT = "probegate-provenance"
#: Seconds each server query may take.
QUERY_TIMEOUT_S = 3.0


def server_root(url: str) -> str:
    """The server's root URL: ``http://h:8080/v1/`` -> ``http://h:8080`` (pure)."""
    url = url.rstrip("/")
    return url[:-3] if url.endswith("/v1") else url


def _ask(client: httpx.Client, method: str, url: str, body: Any = None) -> Answer:
    try:
        response = client.request(method, url, json=body)
    except httpx.HTTPError as exc:
        return Answer(error=type(exc).__name__)
    try:
        parsed = response.json()
    except (ValueError, UnicodeDecodeError):
        parsed = None
    return Answer(response.status_code, parsed, {k.lower(): v for k, v in response.headers.items()})


def read_server(url: str, model: str | None, api_key: str | None = None,
                timeout_s: float = QUERY_TIMEOUT_S) -> dict[str, Answer]:
    """Ask the server at ``url`` (with or without ``/v1``) what it is.

    Sends :data:`probegate.runner.provenance.QUERIES` in order; ``POST /api/show``
    only when ``GET /api/version`` answered (an Ollama server), and nothing after a
    ``GET /v1/models`` that got no HTTP answer (each later query would wait as long).

    Returns:
        Each query's :class:`Answer` (``asked=False`` with the reason for the ones skipped).
        Never raises for a server that does not answer.
    """
    from probegate import __version__

    root = server_root(url)
    headers = {"user-agent": f"{USER_AGENT}/{__version__}"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    answers: dict[str, Answer] = {}
    with httpx.Client(headers=headers, timeout=timeout_s, follow_redirects=False) as client:
        answers[MODELS] = _ask(client, "GET", f"{root}/v1/models")
        if answers[MODELS].status is None:
            skipped = Answer(error="GET /v1/models got no answer", asked=False)
            return {**answers, **{q: skipped for q in QUERIES if q != MODELS}}
        answers[PROPS] = _ask(client, "GET", f"{root}/props")
        answers[OLLAMA_VERSION] = _ask(client, "GET", f"{root}/api/version")
        if answers[OLLAMA_VERSION].ok:
            answers[OLLAMA_SHOW] = _ask(client, "POST", f"{root}/api/show", {"model": model})
        else:
            answers[OLLAMA_SHOW] = Answer(error="not an Ollama server (GET /api/version)", asked=False)
        answers[VLLM_VERSION] = _ask(client, "GET", f"{root}/version")
    return answers


def read_gateway(url: str, api_key: str | None = None, timeout_s: float = QUERY_TIMEOUT_S) -> dict[str, Any] | None:
    """What a probegate gateway (``probegate serve``) says about its model answers:
    ``GET /probegate/provenance`` -> ``{"upstream", "compat", "replay", "provenance"}``
    (``provenance``: the replayed run's recorded one). ``None`` when it does not answer
    that (another kind of gateway, an older probegate, no connection)."""
    from probegate import __version__

    headers = {"user-agent": f"{USER_AGENT}/{__version__}"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    try:
        response = httpx.get(f"{server_root(url)}/probegate/provenance", headers=headers, timeout=timeout_s)
        body = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    return body if isinstance(body, dict) else None


def framework_versions(names: tuple[str, ...] = FRAMEWORKS) -> dict[str, str | None]:
    """Installed versions of ``names`` (``None`` for a package not installed)."""
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def default_cache() -> Path:
    """Where checksums are cached: ``$XDG_CACHE_HOME/probegate/sha256.json``
    (``~/.cache/probegate/sha256.json``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "probegate" / "sha256.json"


def file_sha256(path: str | Path, cache: Path | None = None) -> str:
    """sha256 (hex) of a file, cached by (absolute path, size, mtime in ns).

    The cache is a small JSON file (``cache``, default :func:`default_cache`); a
    file whose size or mtime changed is hashed again. A cache that cannot be read or
    written is ignored (the digest is still returned).

    Raises:
        OSError: the file cannot be read.
    """
    path = Path(path).resolve()
    stat = path.stat()
    key = f"{path}|{stat.st_size}|{stat.st_mtime_ns}"
    cache = cache or default_cache()
    entries: dict[str, str] = {}
    with contextlib.suppress(OSError, ValueError):
        loaded = json.loads(cache.read_text())
        entries = {k: v for k, v in loaded.items() if isinstance(v, str)} if isinstance(loaded, dict) else {}
    if key in entries:
        return entries[key]
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    entries = {k: v for k, v in entries.items() if not k.startswith(f"{path}|")}
    entries[key] = digest.hexdigest()
    with contextlib.suppress(OSError):
        cache.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=cache.parent, delete=False, suffix=".tmp") as out:
            json.dump(entries, out, indent=1, sort_keys=True)
        os.replace(out.name, cache)
    return entries[key]


def run_provenance(
    *,
    upstream: str | None,
    model: str | None,
    api_key: str | None = None,
    launcher: dict[str, Any] | None = None,
    temperature: float | None = None,
    shims: list[str] | None = None,
    not_queried: str | None = None,
    timeout_s: float = QUERY_TIMEOUT_S,
) -> dict[str, Any]:
    """The provenance of a run about to start (see :mod:`probegate.runner.provenance`).

    Args:
        upstream: the model server's URL; ``None`` when the run goes through an external
            gateway (nothing is asked; ``not_queried`` says why).
        model: the model name the run sends.
        api_key: sent as the bearer token, never stored.
        launcher: the embedded launcher's facts, ``None`` for any other server.
        temperature: the run's temperature.
        shims: the run's ``--compat`` rules.
        not_queried: why the server is not asked.
        timeout_s: seconds each query may take.
    """
    from probegate import __version__

    answers = read_server(upstream, model, api_key, timeout_s) if upstream and not not_queried else {}
    if not upstream and not not_queried:
        not_queried = "no model server URL"
    return merge_provenance(model=model, answers=answers, launcher=launcher, temperature=temperature,
                            shims=shims, probegate_version=__version__, frameworks=framework_versions(),
                            not_queried=not_queried)
