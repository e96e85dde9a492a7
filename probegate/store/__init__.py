"""The capture store: schema, opening, and the background writer."""

from probegate.store.engine import (
    check_store_url,
    default_store_url,
    normalize_url,
    open_existing_store,
    open_store,
)
from probegate.store.models import AttemptClaim, Exchange, ProbeCall, Run, WorldState, new_id, utcnow
from probegate.store.writer import Capture, CaptureWriter, Upsert, WriterStats

__all__ = [
    "AttemptClaim",
    "Capture",
    "CaptureWriter",
    "Exchange",
    "ProbeCall",
    "Run",
    "Upsert",
    "WorldState",
    "WriterStats",
    "check_store_url",
    "default_store_url",
    "new_id",
    "normalize_url",
    "open_existing_store",
    "open_store",
    "utcnow",
]
