"""A tool call read from text (shared by every text-protocol parser). Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from probegate.scorer.trajectory import ParseKind, ParseStatus


@dataclass(frozen=True)
class ParsedCall:
    """A tool call read from text.

    Attributes:
        name: the tool name as written (after trimming decoration).
        arguments: the arguments object, or ``None`` when they could not be read.
        raw: the text the call was read from.
        kind: the protocol it was written in.
        notes: what had to be repaired or guessed, in order (empty when clean).
        call_id: the call's id (structured calls only).
    """

    name: str
    arguments: dict[str, Any] | None
    raw: str
    kind: ParseKind
    notes: tuple[str, ...] = ()
    call_id: str | None = None

    @property
    def status(self) -> ParseStatus:
        """``failed`` when the arguments are unreadable, ``repaired`` with notes, else ``ok``."""
        if self.arguments is None:
            return "failed"
        return "repaired" if self.notes else "ok"

    def to_json(self) -> dict[str, Any]:
        """Plain-dict form (``debug-parse --json``, traces)."""
        return {
            "name": self.name,
            "arguments": self.arguments,
            "kind": self.kind,
            "status": self.status,
            "notes": list(self.notes),
            "raw": self.raw,
        }
