"""Benchmarks (not tests): ``python -m bench.gateway``, ``python -m bench.store``, ``python -m bench.scorer``."""
