"""Task sets as data (YAML under ``tasks/<set>/``) and their loader."""

from probegate.tasks.loader import (
    ExpectedAction,
    ExpectedAnswer,
    Prompt,
    Task,
    TaskSet,
    Trap,
    VerifyCheck,
    lint_task,
    load_task_file,
    load_task_set,
    task_set_folder,
    validate_task_data,
)

__all__ = [
    "ExpectedAction",
    "ExpectedAnswer",
    "Prompt",
    "Task",
    "TaskSet",
    "Trap",
    "VerifyCheck",
    "lint_task",
    "load_task_file",
    "load_task_set",
    "task_set_folder",
    "validate_task_data",
]
