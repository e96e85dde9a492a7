"""Benchmarks, not tests (docs/benchmarks.md): ``python -m bench.gateway`` (overhead against
mitmproxy and LiteLLM proxy, streaming fidelity), ``python -m bench.store`` (capture writer
speed on SQLite and PostgreSQL), ``python -m bench.scorer`` (rebuild and score a large
synthetic run), ``python -m bench.pyspy`` (summarise a py-spy profile), ``python -m bench.model`` (the embedded
model's speed and the main job's cost per harness)."""
