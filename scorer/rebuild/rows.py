"""The rows one attempt is rebuilt from, as loaded from the store (plain containers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from probegate.store.models import Exchange, ProbeCall


@dataclass(frozen=True)
class RunInfo:
    """The run fields the scorer reads (``params`` is the run's params JSON).

    ``wall_s`` is the run's wall time in seconds, from its creation to its end
    (``None`` while it runs or when the store has no times for it).

    ``warnings`` lists what could not be read from the run's row (its text, as in
    :attr:`AttemptRows.warnings`).
    """

    id: str
    task_set: str | None = None
    harness: str | None = None
    model: str | None = None
    status: str = "done"
    params: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    wall_s: float | None = None


@dataclass(frozen=True)
class AttemptRows:
    """Everything the store holds about one (run, task, attempt).

    Attributes:
        exchanges: the attempt's exchanges (any order; sorted by ``seq`` when used).
        probe_calls: its probe calls (any order; sorted by ``seq``).
        world_state: the final ``WorldState.state``, ``None`` when no side effect happened.
        world: the fixture name the world was reset from, when known.
        warnings: values the store held but could not decode (``"exchange 3:
            response_headers holds invalid JSON"``); those values are ``None`` here.
    """

    run_id: str
    task_id: str
    attempt: int
    exchanges: tuple[Exchange, ...] = ()
    probe_calls: tuple[ProbeCall, ...] = ()
    world_state: dict[str, Any] | None = None
    world: str | None = None
    warnings: tuple[str, ...] = ()
