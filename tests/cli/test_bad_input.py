"""Walk the CLI: every option of every command, given a bad value, fails with one line on
stderr naming the option or the value, exit 2, no traceback, no file created.

The commands and their options are read from the application, so a new option must be
classified here (bad values, or free text) or :func:`test_every_option_is_classified`
fails. Each case runs ``python -m probegate`` in an empty folder with its own HOME.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer.main

from probegate.cli import app
from probegate.store import CaptureWriter, Exchange, Run, open_store
from probegate.tasks.loader import load_task_set

DEEP = "id: deep\nprompt: " + "[" * 5000 + "]" * 5000 + "\n"
BOMB = "id: bomb\nlol0: &l0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10)
) + "prompt: *l9\n"

#: the root of the command tree
ROOT = typer.main.get_command(app)

#: options whose every value is usable (flags, names, filters, free text)
FREE = {"--json", "--markdown", "--yes", "--allow-remote", "--redact-pii", "--replay-ignore-model", "--no-spool",
        "--model", "--token", "--api-key", "--allow", "--tools", "--task", "--run", "debug-parse:text",
        "probes log:run", "probes log:task", "--unsafe-no-sandbox", "--agents", "--queue"}

#: bad values per option ({placeholders} are fixtures, see ``_fill``)
BAD: dict[str, list[str]] = {
    "--upstream": ["ftp://x", "localhost:11434"],
    "--store": ["mysql://u@127.0.0.1/db", "{notsqlite}", "{dir}"],
    "--host": ["203.0.113.7", "no-such-host.invalid"],
    "--port": ["99999", "0", "abc"],
    "--max-body": ["lots"],
    "--payload-cap": ["lots"],
    "--upstream-timeout": ["-1", "0", "nan", "inf"],
    "--transport": ["pigeon"],
    "--compat": ["no-such-shim"],
    "--redact": ["(unclosed"],
    "--replay-mode": ["sometimes"],
    "--replay-timing": ["slow"],
    "--replay-store": ["mysql://u@127.0.0.1/db", "sqlite:///typo.db"],
    "--replay": ["no-such-run"],
    "--spool": ["/proc/nope", "{notsqlite}"],
    "--log-level": ["loud"],
    "--map": ["/nope.yaml", "{deep_file}", "{bomb_file}"],
    "--probes": ["ftp://x"],
    "--confdir": ["/proc/nope"],
    "--feedback": ["loud"],
    "--protocol": ["yes"],
    "--memory": ["all"],
    "--harness": ["no-such-harness"],
    "--task-set": ["/nope", "{deep_set}", "{bomb_set}"],
    "--model-endpoint": ["ftp://x"],
    "--gateway": ["ftp://x"],
    "--repeats": ["0", "x"],
    "--concurrency": ["0"],
    "--temperature": ["nan", "inf", "-1", "3"],
    "--max-steps": ["0"],
    "--lang": ["fr"],
    "--tasks": ["no-such-task"],
    "--run-id": ["a b"],
    "--task-timeout": ["0", "nan"],
    "--output-dir": ["/proc/nope", "{notsqlite}"],
    "--model-path": ["/nope.gguf"],
    "--out": ["/proc/nope", "{notsqlite}"],
    "--html": ["/proc/nope", "{dir}"],
    "--png": ["/proc/nope", "{dir}"],
    "--attempt": ["-1"],
    "-o": ["{dir}", "/proc/nope/x.jsonl.gz"],
    "--as": ["a b"],
    "--timeout": ["0", "nan"],
    "--limit": ["0"],
    "--older-than": ["-1", "nan"],
    "--max-interop": ["-0.1", "2", "nan"],
    "--chat-handler": ["pigeon"],
    "--mcp-upstream": ["no-equals-sign", "x=ftp://y"],
    "--executor": ["pigeon"],
    "--broker": ["ftp://x"],
    "--max-tries": ["0"],
    "--visibility-timeout": ["0", "nan"],
    "--loglevel": ["loud"],
    "run": ["no-such-run"],
    "runs": ["no-such-run"],
    "old": ["no-such-run"],
    "new": ["no-such-run"],
    "task": ["no-such-task"],
    "exchange_id": ["no-such-exchange"],
    "bundle": ["/nope.jsonl.gz", "{notsqlite}"],
}

#: per command: arguments that make it otherwise valid (or fail late, on the network),
#: so that the bad value is what it stops on; ``ARG:name`` is that positional argument
BASE: dict[str, list[str]] = {
    "serve": ["--upstream", "http://127.0.0.1:9"],
    "intercept": [],
    "run": ["--harness", "fc", "--model-endpoint", "http://127.0.0.1:9", "--model", "m", "--store", "{store}"],
    "score": ["ARG:run", "--store", "{store}"],
    "report": ["ARG:run", "--store", "{store}"],
    "trace": ["ARG:run", "ARG:task", "--store", "{store}"],
    "debug-parse": ["ARG:text"],
    "compare": ["r1", "ARG:runs", "--store", "{store}"],
    "diff": ["ARG:old", "ARG:new", "--store", "{store}"],
    "selftest": [],
    "export": ["ARG:run", "-o", "out.jsonl.gz", "--store", "{store}"],
    "import": ["ARG:bundle", "--store", "sqlite:///new.db"],
    "doctor": ["--model-endpoint", "http://127.0.0.1:9", "--model", "m"],
    "captures list": ["--store", "{store}"],
    "captures show": ["ARG:exchange_id", "--store", "{store}"],
    "probes serve": ["--store", "{store}"],
    "probes log": ["ARG:run", "ARG:task", "--store", "{store}"],
    "probes list": [],
    "store prune": ["--older-than", "1", "--store", "{store}"],
    "worker": ["--broker", "redis://127.0.0.1:9/0", "--store", "{store}"],
}
#: the good value of each positional argument
GOOD = {"run": "r1", "runs": "r1", "old": "r1", "new": "r1", "task": "{task}", "exchange_id": "x",
        "bundle": "{bundle}", "text": "x"}
#: per option: more arguments it needs to be used at all
NEEDS = {"--replay-store": ["--replay", "r1"], "--replay-mode": ["--replay", "r1"],
         "--replay-timing": ["--replay", "r1"]}
#: commands that record, so may create a store (reading commands never do)
RECORDING = {"serve", "run", "import", "intercept", "probes serve", "selftest"}


def _commands(command=ROOT, path: tuple[str, ...] = ()) -> Iterator[tuple[str, object]]:
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        if getattr(sub, "commands", None):
            yield from _commands(sub, (*path, name))
        else:
            yield " ".join((*path, name)), sub


def _key(command: str, param) -> str:  # type: ignore[no-untyped-def]
    if param.param_type_name == "argument":
        return f"{command}:{param.name}" if f"{command}:{param.name}" in FREE else param.name
    return param.opts[0]


def _cases() -> Iterator[tuple[str, str, str]]:
    for command, cmd in _commands():
        for param in cmd.params:  # type: ignore[attr-defined]
            if param.name == "help":
                continue
            key = _key(command, param)
            for value in BAD.get(key, []):
                if key == "--store" and value == "sqlite:///typo.db" and command in RECORDING:
                    continue
                yield command, key, value
        if "--store" in [p.opts[0] for p in cmd.params if p.opts] and command not in RECORDING:  # type: ignore[attr-defined]
            yield command, "--store", "sqlite:///typo.db"


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("fixtures")
    store = f"sqlite:///{root / 'store.db'}"
    task = load_task_set("default").tasks[0].id
    engine = open_store(store)
    writer = CaptureWriter(engine).start()
    writer.submit_blocking(Run(id="r1", status="done", task_set="default"))
    writer.submit_blocking(Exchange(run_id="r1", task_id=task))
    writer.close()
    engine.dispose()
    (root / "notsqlite.txt").write_text("not a database\n")
    (root / "adir").mkdir()
    for name, text in (("deep", DEEP), ("bomb", BOMB)):
        (root / f"{name}.yaml").write_text(text)
        (root / f"{name}-set").mkdir()
        (root / f"{name}-set" / "task.yaml").write_text(text)
    bundle = root / "r1.jsonl.gz"
    done = subprocess.run([sys.executable, "-m", "probegate", "export", "r1", "-o", str(bundle), "--store", store],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return {"store": store, "task": task, "notsqlite": str(root / "notsqlite.txt"),
            "dir": str(root / "adir"), "deep_file": str(root / "deep.yaml"), "bomb_file": str(root / "bomb.yaml"),
            "deep_set": str(root / "deep-set"), "bomb_set": str(root / "bomb-set"), "bundle": str(bundle),
            "root": str(root)}


def _fill(text: str, fixtures: dict[str, str]) -> str:
    return text.format(**fixtures)


def _tree(path: Path) -> set[str]:
    """Every file and folder under ``path`` (SQLite's -wal/-shm companions aside)."""
    return {str(p.relative_to(path)) for p in path.rglob("*") if not p.name.endswith(("-wal", "-shm"))}


def _invoke(command: str, key: str, value: str, fixtures: dict[str, str], work: Path) -> subprocess.CompletedProcess:
    args: list[str] = []
    for token in BASE[command]:
        if token.startswith("ARG:"):
            name = token.removeprefix("ARG:")
            token = value if key == name else GOOD[name]
        args.append(_fill(token, fixtures))
    if key.startswith("-"):
        if key in args:  # the base gives it a good value: replace it
            index = args.index(key)
            del args[index:index + 2]
        args += [*NEEDS.get(key, []), key, _fill(value, fixtures)]
    home = work / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROBEGATE_")}
    env.update(HOME=str(home), XDG_STATE_HOME=str(home / "state"), COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "probegate", *command.split(), *args], cwd=work, env=env,
                          capture_output=True, text=True, timeout=120)


COMMAND_WORDS = {command.split()[0] for command, _ in _commands()}


@pytest.mark.parametrize("command, key, value", list(_cases()), ids=lambda v: str(v))
def test_a_bad_value_is_one_line_and_exit_2(command, key, value, fixtures, tmp_path) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    before = _tree(Path(fixtures["root"]))
    result = _invoke(command, key, value, fixtures, work)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr
    assert len(lines) == 1, result.stderr[-2000:]
    shown = _fill(value, fixtures)
    named = {key, shown, Path(shown).name, shown.split("/")[-1], f"'{shown}'"}
    assert any(n and n in lines[0] for n in named), f"the line names neither {key} nor {shown!r}: {lines[0]}"
    for word in re.findall(r"`probegate ([a-z-]+)", lines[0]):
        assert word in COMMAND_WORDS, f"the message names a command that does not exist: {word}"
    assert not _tree(work) - {"home"}, f"files created: {_tree(work)}"
    assert not _tree(work / "home"), f"files created in HOME: {_tree(work / 'home')}"
    assert _tree(Path(fixtures["root"])) == before


def test_every_option_is_classified() -> None:
    unclassified = []
    for command, cmd in _commands():
        assert command in BASE, f"{command}: no base arguments in BASE"
        for param in cmd.params:  # type: ignore[attr-defined]
            key = _key(command, param)
            if param.name != "help" and key not in FREE and key not in BAD:
                unclassified.append(f"{command} {key}")
    assert not unclassified, f"give these bad values in BAD or list them in FREE: {unclassified}"


def test_reading_commands_never_create_a_store(tmp_path) -> None:
    typo = tmp_path / "typo.db"
    result = subprocess.run([sys.executable, "-m", "probegate", "captures", "list", "--store", f"sqlite:///{typo}"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and f"no capture store at {typo}" in result.stderr
    assert not list(tmp_path.iterdir())
