"""The two commands' refusals: one line on stderr, exit 2, before anything starts."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from probegate.errors import UsageError
from probegate.runner.execute import RunConfig, check_config

ENV = {k: v for k, v in os.environ.items() if k not in ("PROBEGATE_STORE", "PROBEGATE_BROKER")}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--harness", "fc", "--model", "m", "--executor", "celery"], "--executor celery needs --broker URL"),
        (["run", "--harness", "fc", "--executor", "ray", "--broker", "redis://127.0.0.1:6379/7"],
         "'ray' is not one of local, celery"),
        (["worker", "--broker", "redis://127.0.0.1:6379/7"], "--store URL is required"),
        (["worker", "--broker", "redis://127.0.0.1:6379/7", "--store", "sqlite:///x.db", "--model-endpoint", "ftp://x"],
         "'ftp://x' is not an http(s) URL"),
        (["worker", "--broker", "redis://127.0.0.1:6379/7", "--store", "sqlite:///x.db", "--visibility-timeout", "5"],
         "'--visibility-timeout': 5 must be at least 20"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str, tmp_path: object) -> None:
    done = subprocess.run([sys.executable, "-m", "probegate", *args], capture_output=True, text=True, env=ENV,
                          cwd=str(tmp_path), timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"executor": "celery", "broker": "redis://h/0", "gateway": "http://127.0.0.1:1"}, "leave out --gateway"),
        ({"executor": "celery", "broker": "redis://h/0", "model_path": "x.gguf"}, "leave out --gateway and --model-path"),
        ({"executor": "celery", "broker": "redis://h/0", "model": None}, "needs --model NAME"),
        ({"executor": "celery", "broker": "redis://h/0", "max_tries": 0}, "--max-tries must be at least 1"),
        ({"broker": "redis://h/0"}, "--broker is for --executor celery"),
    ],
)
def test_executor_options_are_checked(changes: dict, message: str) -> None:
    config = RunConfig(**{"task_set": "default", "harness": "fc", "model": "m", **changes})
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        check_config(config)


def test_celery_options_that_work_pass() -> None:
    check_config(RunConfig(task_set="default", harness="fc", model="m", executor="celery", broker="redis://h/0"))
