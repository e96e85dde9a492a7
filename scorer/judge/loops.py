"""Loop detection over the calls that ran (docs/metrics.md §6). Pure.

A loop is the same call (tool and normalised arguments) twice in a row where the
first one succeeded, or the same failing call three times in a row. Two identical
failures in a row are a retry, which is often the right move after a transient error.
"""

from __future__ import annotations

from collections.abc import Sequence

from probegate.scorer.judge.matching import ActualCall
from probegate.scorer.judge.normalize import call_key
from probegate.scorer.trajectory import LoopInfo


def detect_loop(calls: Sequence[ActualCall]) -> LoopInfo | None:
    """The first loop in ``calls`` (run order), or ``None``."""
    keys = [call_key(c.tool, c.args) for c in calls]
    for i in range(1, len(calls)):
        prev, this = calls[i - 1], calls[i]
        if keys[i] == keys[i - 1] and prev.status == "ok":
            return LoopInfo(rule="repeat_ok", tool=this.tool, call_indexes=[prev.index, this.index])
        if i >= 2 and keys[i] == keys[i - 1] == keys[i - 2]:
            window = calls[i - 2 : i + 1]
            if all(c.status != "ok" for c in window):
                return LoopInfo(rule="repeat_failure", tool=this.tool, call_indexes=[c.index for c in window])
    return None


def duplicates(calls: Sequence[ActualCall]) -> dict[int, int]:
    """Map each call that repeats an earlier call (same tool, normalised args) to that call's index."""
    first: dict[str, int] = {}
    out: dict[int, int] = {}
    for call in calls:
        key = call_key(call.tool, call.args)
        if key in first:
            out[call.index] = first[key]
        else:
            first[key] = call.index
    return out
