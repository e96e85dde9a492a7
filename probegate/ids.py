"""The one id rule: which run and task ids probegate accepts, and paths built from them (pure).

Run and task ids travel in URLs (``/r/{run}/{task}/...``), in ``x-probegate-run`` /
``x-probegate-task`` headers, in proxy credentials, on the command line and inside
bundles; they also name folders and files (``runs/<run>/traces/<task>-<attempt>.json``).
Every door checks them with :func:`valid_id` once, at the edge; every path built from
one goes through :func:`child_path`, which refuses to leave its folder even if an
unchecked id slipped through.

An id is 1-128 characters: a letter or digit, then letters, digits and ``. _ : @ + -``.
No slash, backslash, whitespace or control character can appear, and ``.`` / ``..``
cannot be a whole id. The adhoc task id ``-`` (a bare ``/v1`` request) is the one
exception, accepted as a task id only.
"""

from __future__ import annotations

import re
from pathlib import Path

from probegate.errors import UsageError

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+\-]{0,127}")
ADHOC_RUN = "adhoc"
ADHOC_TASK = "-"
RULE = "1-128 characters: a letter or digit, then letters, digits and . _ : @ + -"


def valid_id(value: object) -> bool:
    """Whether ``value`` is a usable run or task id (see the module docstring).

    ``fullmatch``, not ``match``: ``$`` would accept a trailing newline.
    """
    return isinstance(value, str) and ID_PATTERN.fullmatch(value) is not None


def valid_task_id(value: object) -> bool:
    """:func:`valid_id`, or the adhoc task id ``-``."""
    return value == ADHOC_TASK or valid_id(value)


def check_id(value: str, kind: str = "run", option: str | None = None) -> str:
    """``value`` when it is a usable id.

    Args:
        value: the id as given.
        kind: ``run`` or ``task`` (a task id may also be ``-``).
        option: the option that gave it (``--run-id``), named in the message.

    Raises:
        UsageError: it is not (one line naming the rule).
    """
    if not (valid_task_id(value) if kind == "task" else valid_id(value)):
        given = f"{option} {value!r}" if option else repr(value)
        raise UsageError(f"{given} is not usable as a {kind} id: {RULE}")
    return value


def child_path(folder: Path, *parts: str) -> Path:
    """``folder/part/...``, refused unless it stays inside ``folder``.

    Each part must be one plain path component (no separator, not ``.`` or ``..``,
    no NUL); the joined path, resolved through symlinks, must lie under the resolved
    ``folder``.

    Raises:
        UsageError: a part would leave ``folder``.
    """
    for part in parts:
        if not part or part in (".", "..") or "/" in part or "\\" in part or "\x00" in part:
            raise UsageError(f"{part!r} cannot name a file or folder under {folder}")
    path = folder.joinpath(*parts)
    root = folder.resolve()
    if not path.resolve().is_relative_to(root):
        raise UsageError(f"{path} is not inside {folder}; refused")
    return path
