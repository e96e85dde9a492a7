"""The initial world state of a task, for attempts that never stored one.

The probes write a ``WorldState`` row on every reset and side effect; an attempt
without one changed nothing, so its final state is the task's fixture plus its
``world_patch`` (:func:`probegate.probes.worlds.load_world`).
"""

from __future__ import annotations

from typing import Any

from probegate.tasks.loader import Task


def initial_state(task: Task) -> dict[str, Any] | None:
    """The world ``task`` starts from, or ``None`` when its fixture cannot be loaded."""
    from probegate.probes.worlds import WorldError, load_world

    try:
        return load_world(task.world, task.world_patch or None)
    except WorldError:
        return None
