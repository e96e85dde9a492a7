"""Helpers for reliability tests: ``probegate serve`` as a real subprocess."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from probegate.testing.serve_process import ServeProcess, start_serve


@pytest.fixture
def serve() -> Iterator:
    started: list[ServeProcess] = []

    def start(args: list[str], port: int | None = None) -> ServeProcess:
        process = start_serve(args, port)
        started.append(process)
        return process

    yield start
    for process in started:
        process.close()
