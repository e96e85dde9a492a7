"""The one family of user-visible errors. Each message says what to do next."""

from __future__ import annotations


class ProbegateError(Exception):
    """Base of every error a user can act on; the CLI prints it as one line (exit 2)."""

    exit_code = 2


class StoreError(ProbegateError):
    """The capture store cannot be opened, read or written."""


class UsageError(ProbegateError):
    """A command was given arguments it cannot use."""


class TaskSetError(ProbegateError):
    """A task set is missing or holds invalid tasks."""


class UpstreamError(ProbegateError):
    """The model server cannot be reached or answered in a way we cannot use."""
