"""Fixtures for the probe tests."""

from __future__ import annotations

import json
from typing import Any

import pytest

from probegate.probes.service import ProbeOutcome, ProbeService


class Caller:
    """Calls tools on one attempt of a store-less service (pure use)."""

    def __init__(self, service: ProbeService, run: str = "run1", task: str = "t1", attempt: int = 0) -> None:
        self.service, self.run, self.task, self.attempt = service, run, task, attempt

    def __call__(self, tool: str, args: Any = None, **kw: Any) -> ProbeOutcome:
        body = args if isinstance(args, bytes) else json.dumps(kw if args is None else args).encode()
        return self.service.call(self.run, self.task, self.attempt, tool, body)

    def state(self) -> dict[str, Any]:
        found = self.service.state(self.run, self.task, self.attempt)
        assert found is not None
        return found[1]

    def check(self, **check: Any) -> bool:
        return self.service.verify(self.run, self.task, self.attempt, [check])[0].ok


@pytest.fixture
def service() -> ProbeService:
    """A probe service without a store."""
    return ProbeService()


@pytest.fixture
def call(service: ProbeService) -> Caller:
    """Call tools of attempt run1/t1/0 (lazily reset from the default world)."""
    return Caller(service)
