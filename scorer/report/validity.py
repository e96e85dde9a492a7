"""Is the run a measurement of the model at all? (docs/metrics.md §7). Pure.

Every attempt counts in every headline figure, interop failures included. When more
than a threshold share of a run's attempts (default 10 %) failed on interop faults
(the server rejected, dropped or mangled what the agent sent), the run is marked
*invalid environment*: its numbers say more about the client/server pairing than
about the model, and every command says so in its first line.
"""

from __future__ import annotations

from typing import Any

#: Share of attempts that may fail on interop faults before a run is invalid.
DEFAULT_MAX_INTEROP = 0.10


def validity(attempts: int, interop_attempts: int, max_interop: float = DEFAULT_MAX_INTEROP) -> dict[str, Any]:
    """The verdict on one run.

    Args:
        attempts: every attempt of the run.
        interop_attempts: attempts labelled ``interop`` (a fault that blocked them).
        max_interop: the largest share of interop attempts a valid run may have (0-1).

    Returns:
        ``{"valid", "attempts", "interop_attempts", "interop_share", "max_interop", "reason"}``;
        ``reason`` is ``None`` for a valid run.

    Raises:
        ValueError: ``max_interop`` outside 0..1 or counts that do not fit.
    """
    if not 0.0 <= max_interop <= 1.0:
        raise ValueError(f"max_interop must be between 0 and 1, got {max_interop}")
    if not 0 <= interop_attempts <= attempts:
        raise ValueError(f"interop attempts ({interop_attempts}) must be between 0 and attempts ({attempts})")
    share = interop_attempts / attempts if attempts else 0.0
    valid = share <= max_interop + 1e-12
    reason = None if valid else (
        f"{interop_attempts} of {attempts} attempts ({share * 100:.1f} %) failed on interop faults, "
        f"above the {max_interop * 100:g} % threshold: the server did not serve what the agent sent"
    )
    return {"valid": valid, "attempts": attempts, "interop_attempts": interop_attempts, "interop_share": share,
            "max_interop": max_interop, "reason": reason}


def summary_validity(summary: dict[str, Any], max_interop: float = DEFAULT_MAX_INTEROP) -> dict[str, Any]:
    """:func:`validity` of a summary (``summary.json`` of any version) under ``max_interop``."""
    attempts = int((summary.get("headline") or {}).get("attempts") or 0)
    interop = int((summary.get("interop") or {}).get("attempts") or 0)
    return validity(attempts, min(interop, attempts), max_interop)


def invalid_line(verdict: dict[str, Any], run_id: str | None = None) -> str | None:
    """The first line a command prints for an invalid run, ``None`` for a valid one."""
    if verdict.get("valid", True):
        return None
    who = f"run {run_id}: " if run_id else ""
    return f"INVALID ENVIRONMENT: {who}{verdict['reason']} (see the interop section; doctor and --compat shims may help)"
