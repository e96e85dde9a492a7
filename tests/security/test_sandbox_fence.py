"""The fence's decisions, table-tested in-process (no hook installed), and honest code through it."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from probegate.harnesses.sandbox import SandboxLimits, run_sandboxed
from probegate.harnesses.sandbox_fence import Check, make_check

LIB = os.path.realpath(os.path.dirname(os.__file__))
POSIXSUBPROCESS = str(importlib.util.find_spec("_posixsubprocess").origin)


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "inside").symlink_to(work / "sub")
    (work / "outside").symlink_to(tmp_path)
    (work / "loop").symlink_to(work / "loop")
    cwd = os.getcwd()
    os.chdir(work)  # relative paths in the events are relative to the work directory
    yield work
    os.chdir(cwd)


@pytest.fixture
def check(root: Path) -> Check:
    return make_check(str(root), LIB)


@pytest.mark.parametrize(
    ("event", "args", "reason"),
    [
        ("open", ("note.txt", "w", 0), None),
        ("open", ("sub/note.txt", "a", 0), None),
        ("open", ("inside/note.txt", "w", 0), None),  # a link that stays inside
        ("open", ("outside/note.txt", "w", 0), "open outside/note.txt"),  # a link that leaves
        ("open", ("loop/x", "r", 0), "open loop/x"),  # a symlink loop resolves to nothing allowed
        ("open", ("sub/../../note.txt", "w", 0), "open sub/../../note.txt"),
        ("open", (b"/etc/passwd", "r", 0), "open /etc/passwd"),
        ("open", ("/etc/passwd", None, os.O_RDONLY), "open /etc/passwd"),
        ("open", (f"{LIB}/os.py", "r", 0), None),
        ("open", (f"{LIB}/os.py", None, os.O_RDWR), f"open {LIB}/os.py"),
        ("open", (f"{LIB}/os.py", None, os.O_RDONLY | os.O_TRUNC), f"open {LIB}/os.py"),
        ("open", (LIB, None, os.O_RDONLY), f"open of the directory {LIB}"),
        ("open", (3, "r", 0), None),  # an already open descriptor
        ("open", (object(), "r", 0), "open of a path that is not a str"),
        ("os.remove", ("note.txt", -1), None),
        ("os.remove", ("/tmp/x", -1), "os.remove /tmp/x"),
        ("os.rename", ("a", "/tmp/b", -1, -1), "os.rename /tmp/b"),
        ("os.chmod", (3, 0o777, -1), "os.chmod on a file descriptor"),
        ("os.chmod", (Path("note.txt"), 0o777, -1), "os.chmod with a path that is not a str"),
        ("os.listdir", (LIB,), None),
        ("os.listdir", (3,), None),
        ("os.listdir", ("/etc",), "os.listdir /etc"),
        ("glob.glob", ("*.txt", True), None),
        # no network at all: the tools go through the harness's channel
        ("socket.connect", (None, ("127.0.0.1", 8700)), "connect to ('127.0.0.1', 8700)"),
        ("socket.connect", (None, ("::1", 8700, 0, 0)), "connect to ('::1', 8700)"),
        ("socket.connect", (None, "/run/x.sock"), "connect to /run/x.sock"),
        ("socket.connect", (None, object()), "connect to an address that is not a plain (host, port) tuple"),
        ("socket.bind", (None, ("0.0.0.0", 0)), "socket.bind"),
        ("socket.sendto", (None, ("127.0.0.1", 53)), "socket.sendto"),
        ("socket.getaddrinfo", ("127.0.0.1", 8700, 0, 1, 0), "socket.getaddrinfo 127.0.0.1"),
        ("socket.getaddrinfo", ("a\x00b", 80, 0, 1, 0), "socket.getaddrinfo a?b"),
        ("socket.gethostname", (), None),
        ("socket.__new__", (None, 1, 1, 0), None),  # AF_UNIX: asyncio's self-pipe
        ("socket.__new__", (None, 1, 1 | 0o4000, 0), None),  # SOCK_STREAM | SOCK_NONBLOCK
        ("socket.__new__", (None, 2, 1, 0), "socket of family 2, type 1"),  # listen() would bind 0.0.0.0
        ("socket.__new__", (None, 10, 2, 0), "socket of family 10, type 2"),
        ("socket.__new__", (None, 17, 3, 0), "socket of family 17, type 3"),
        ("import", ("json", None, [], [], []), None),
        ("import", ("_posixsubprocess", None, [], [], []), "import _posixsubprocess"),
        ("import", ("pkg._ctypes", None, [], [], []), "import pkg._ctypes"),
        ("import", ("_json", f"{LIB}/lib-dynload/_json.so", None, None, None), None),
        ("import", ("evil", "evil.so", None, None, None), "load of native code from evil.so"),
        # the whole name is checked, and what C sees of it: the part before a NUL
        ("import", ("_posixsubprocess\x00c", POSIXSUBPROCESS, None, None, None),
         "import of a module name with a control character: _posixsubprocess?c"),
        ("import", ("readline.x", None, [], [], []), "import readline.x"),
        ("import", ("ok\x7f", None, [], [], []), "import of a module name with a control character: ok?"),
        # the file decides too, whatever the name
        ("import", ("innocent", POSIXSUBPROCESS, None, None, None), f"load of native code from {POSIXSUBPROCESS}"),
        # a hidden module: its name alone passes (sys.modules holds None), a load of its file does not
        ("import", ("_ssl", None, [], [], []), None),
        ("import", ("_ssl", f"{LIB}/lib-dynload/_ssl.so", None, None, None), "import _ssl"),
        ("os.unshare", (0x10000000,), "os.unshare"),
        ("os.setns", (3, 0), "os.setns"),
        ("fcntl.ioctl", (0, 0x5412, b"x"), "fcntl.ioctl"),
        ("os.system", (b"true",), "os.system"),
        ("subprocess.Popen", ("true", ["true"], None, None), "subprocess.Popen"),
        ("sandbox.refused", ("os.mkfifo",), "os.mkfifo"),
        ("exec", (None,), None),
    ],
)
def test_check(check: Check, event: str, args: tuple, reason: str | None) -> None:
    assert check(event, args) == reason


def test_check_is_bound_at_creation(check: Check, monkeypatch: pytest.MonkeyPatch) -> None:
    # what the code under watch could rebind does not change a decision (builtins: see the escape tests,
    # rebinding them here would break pytest itself)
    import probegate.harnesses.sandbox_fence as fence

    monkeypatch.setattr(fence, "BLOCKED_EVENTS", ())
    monkeypatch.setattr(os.path, "realpath", lambda path: str(Path.cwd()))
    assert check("os.system", (b"true",)) == "os.system"
    assert check("open", ("/etc/passwd", "r", 0)) == "open /etc/passwd"
    assert check("open", ("note.txt", "w", 0)) is None


class _Liar(str):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__

    def startswith(self, *args: object) -> bool:  # type: ignore[override]
        return True


def test_subclasses_cannot_lie(check: Check) -> None:
    assert check("open", (_Liar("/etc/passwd"), "r", 0)) == "open /etc/passwd"
    assert check("socket.getaddrinfo", (_Liar("example.com"), 80)) == "socket.getaddrinfo example.com"
    assert check("socket.connect", (None, (_Liar("127.0.0.1"), 8700))) == (
        "connect to an address that is not a plain (host, port) tuple")
    assert check("import", (_Liar("_posixsubprocess"), None)) == "import _posixsubprocess"


HONEST = """
import asyncio, base64, bisect, collections, copy, csv, dataclasses, datetime, decimal, enum, fractions
import functools, hashlib, heapq, io, itertools, json, math, operator, pathlib, pprint, random, re
import statistics, string, tarfile, textwrap, time, typing, uuid, zoneinfo

@dataclasses.dataclass
class Row:
    name: str
    qty: int

async def twice(x):
    await asyncio.sleep(0)
    return 2 * x

rows = [Row("a", 2), Row("b", 3)]
with open("rows.csv", "w", newline="") as f:
    csv.writer(f).writerows([(r.name, r.qty) for r in rows])
pathlib.Path("notes").mkdir()
pathlib.Path("notes/n.txt").write_text("hi")
total = sum(int(q) for _, q in csv.reader(open("rows.csv")))
print(json.dumps({"total": total, "double": asyncio.run(twice(total)), "files": sorted(p.name for p in
      pathlib.Path(".").iterdir() if not p.name.startswith(".")), "sha": hashlib.sha256(b"x").hexdigest()[:8],
      "mean": statistics.mean([1, 2, 3]), "note": open("notes/n.txt").read()}))
"""


@pytest.mark.parametrize("isolated", [True, False])
def test_honest_code_runs_through_the_fence(isolated: bool) -> None:
    result = run_sandboxed(HONEST, [], "http://127.0.0.1:9/r/run/task/0/tools", SandboxLimits(wall_s=30.0),
                           isolated=isolated)
    assert result.ok, result
    assert result.stdout == ('{"total": 5, "double": 10, "files": ["notes", "rows.csv"], "sha": "2d711642", '
                             '"mean": 2, "note": "hi"}\n')
