"""A run's provenance in words: the rows the report header, the console and ``compare`` show. Pure.

The provenance object is the runner's (``Run.params["provenance"]``, copied into
``summary.json`` as ``provenance``; shape in :mod:`probegate.runner.provenance`). A
summary written before provenance existed has none: every row is then ``None``.
"""

from __future__ import annotations

from typing import Any

#: Labels of the provenance rows, in display order.
ROWS = ("server", "model file", "quantization", "sha256", "context", "chat handler", "sampling", "shims",
        "probegate", "frameworks", "sources")
#: The rows ``probegate compare`` shows (``frameworks`` and ``sources`` are in summary.json).
COMPARE = ("server", "model file", "quantization", "sha256", "context", "chat handler", "sampling", "shims",
           "probegate")


def _join(*parts: Any, sep: str = " ") -> str | None:
    shown = [str(p) for p in parts if p is not None and p != ""]
    return sep.join(shown) or None


def size_text(size: Any) -> str | None:
    """Bytes in MiB: ``98566144`` -> ``94.0 MiB``; ``None`` for anything but a number."""
    if not isinstance(size, int | float) or isinstance(size, bool):
        return None
    return f"{size / 2**20:.1f} MiB"


def _sampling(sampling: dict[str, Any]) -> str | None:
    parts = []
    if sampling.get("temperature") is not None:
        parts.append(f"temperature {sampling['temperature']:g}")
    if sampling.get("seed") is not None:
        parts.append(f"seed {sampling['seed']}")
    max_tokens = sampling.get("max_tokens")
    parts.append(f"max_tokens {max_tokens}" if max_tokens is not None else "max_tokens: server default")
    return ", ".join(parts)


def _sources(sources: dict[str, str]) -> str | None:
    if not sources:
        return None
    answered = [name for name, said in sources.items() if said == "answered"]
    other = [f"{name} ({said})" for name, said in sources.items() if said != "answered"]
    return "; ".join(p for p in (("answered: " + ", ".join(answered)) if answered else "nothing answered",
                                 ("not: " + ", ".join(other)) if other else "") if p)


def provenance_rows(provenance: dict[str, Any] | None) -> dict[str, str | None]:
    """The provenance as ``{label: text}`` for :data:`ROWS` (``None`` where no source told).

    ``server`` is software and version (build when it differs), ``model file`` the GGUF
    name and size, ``sha256`` its first 16 hex digits, ``context`` the context size in
    tokens (and what the model was trained for), ``shims`` the ``--compat`` rules
    (``none``), ``sources`` which queries answered.
    """
    if not isinstance(provenance, dict):
        return dict.fromkeys(ROWS)
    server = provenance.get("server") or {}
    model = provenance.get("model") or {}
    chat = provenance.get("chat") or {}
    build = server.get("build") if server.get("build") != server.get("version") else None
    size = size_text(model.get("size_bytes"))
    digest = model.get("sha256")
    train = model.get("context_train")
    frameworks = provenance.get("frameworks") or {}
    return {
        "server": _join(server.get("software"), server.get("version"), f"(build {build})" if build else None),
        "model file": _join(model.get("file"), f"({size})" if size else None),
        "quantization": _join(model.get("quantization"), model.get("parameter_size")),
        "sha256": f"{digest[:16]}…" if isinstance(digest, str) and digest else None,
        "context": _join(model.get("context_size"), f"(trained {train})" if train else None),
        "chat handler": chat.get("handler") or (f"template sha256 {chat['template_sha256'][:12]}…"
                                                 if chat.get("template_sha256") else None),
        "sampling": _sampling(provenance.get("sampling") or {}),
        "shims": ", ".join(provenance.get("shims") or []) or "none",
        "probegate": provenance.get("probegate"),
        "frameworks": ", ".join(f"{k} {v}" for k, v in frameworks.items() if v) or None,
        "sources": _sources(provenance.get("sources") or {}),
    }


def provenance_line(provenance: dict[str, Any] | None) -> str | None:
    """One line for the console: ``server · model file · quantization · sha256 · context ·
    chat handler · shims``, the rows no source told left out (``server not told`` is
    kept); ``None`` for a run without provenance."""
    if not isinstance(provenance, dict):
        return None
    rows = provenance_rows(provenance)
    rows["server"] = rows["server"] or "not told"
    shown = [f"{label} {rows[label]}" for label in ("server", "model file", "quantization", "sha256", "context",
                                                     "chat handler", "shims") if rows[label]]
    return "provenance: " + " · ".join(shown)


def provenance_differs(summaries: list[dict[str, Any]]) -> list[str]:
    """The :data:`COMPARE` rows whose value is not the same in every summary that has
    provenance (``[]`` for fewer than two such summaries)."""
    rows = [provenance_rows(s.get("provenance")) for s in summaries if isinstance(s.get("provenance"), dict)]
    if len(rows) < 2:
        return []
    return [label for label in COMPARE if len({r[label] for r in rows}) > 1]
