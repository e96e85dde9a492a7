"""Escapes from the ``code`` harness's sandbox: each is stopped with a clear reason, the host is untouched.

Every attempt runs for real in :func:`probegate.harnesses.sandbox.run_sandboxed` (the runner the
harness uses), twice: with the audit hook alone (``fence``, as ``--unsafe-no-sandbox`` runs
it), where the exact stop reason is the fence's decision, and in the full sandbox
(``sandbox``: bubblewrap too), where a path or process of the host may not even
exist, so the OS refuses before the fence sees anything; there the run is either
stopped for the same reason or not stopped at all. The host-side witness is
checked after each: a marker file outside the sandbox's folder, a TCP/UDP
listener on another port, a victim process, processes holding a marker. These
tests run as root here, where ``RLIMIT_NPROC`` does not bind: the fork-bomb
defence must hold anyway. tests/security/test_sandbox_layers.py holds the
escapes of issue 18, layer by layer.
"""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from probegate.harnesses.sandbox import SandboxLimits, SandboxResult, run_in_session, run_sandboxed
from probegate.harnesses.sandbox_prelude import BLOCKED_EXIT
from tests.security.layers import marked_tools
from tests.security.witness import Listener, lingering, survivors

LIMITS = SandboxLimits(cpu_s=2, file_bytes=1024 * 1024, wall_s=20.0)
PROBE_PORT = 9  # nothing listens there: the tools are not called in these tests
TOOLS_URL = f"http://127.0.0.1:{PROBE_PORT}/r/run/task/0/tools"
LIB = os.path.realpath(os.path.dirname(os.__file__))


@pytest.fixture(params=["fence", "sandbox"])
def layer(request: pytest.FixtureRequest) -> str:
    """``fence``: the audit hook alone; ``sandbox``: bubblewrap and the hook (what the harness runs)."""
    return str(request.param)


def run(code: str, layer: str = "sandbox", limits: SandboxLimits = LIMITS, mark: str | None = None) -> SandboxResult:
    return run_sandboxed(code, marked_tools(mark), TOOLS_URL, limits, isolated=layer == "sandbox")


def assert_stopped(result: SandboxResult, reason: str, layer: str = "fence") -> None:
    """The fence's exact reason; in the full sandbox, that reason or a refusal by the OS first."""
    if layer == "sandbox" and result.stopped is None:
        return  # the path or process does not exist in the sandbox: the witness decides
    assert (result.stopped, result.exit_code) == (reason, BLOCKED_EXIT), result
    assert not result.ok


# --- run a command --------------------------------------------------------------------------------

COMMANDS = [
    ('import os\nos.system("touch OUT/ran")', "blocked: os.system"),
    ('import os\nos.popen("touch OUT/ran").read()', "blocked: subprocess.Popen"),
    ('import subprocess\nsubprocess.run(["touch", "OUT/ran"])', "blocked: subprocess.Popen"),
    ('import os\nos.posix_spawn("/usr/bin/touch", ["touch", "OUT/ran"], {})', "blocked: os.posix_spawn"),
    ('import os\nos.execv("/usr/bin/touch", ["touch", "OUT/ran"])', "blocked: os.exec"),
    ('import os\nos.spawnv(os.P_WAIT, "/usr/bin/touch", ["touch", "OUT/ran"])', "blocked: os.fork"),
    ('import pty\npty.spawn(["touch", "OUT/ran"])', "blocked: pty.spawn"),
    # asyncio first probes for pidfd support
    ('import asyncio\nasyncio.run(asyncio.create_subprocess_exec("touch", "OUT/ran"))', "blocked: os.pidfd_open"),
    # the C helper behind subprocess, called directly
    (("import _posixsubprocess, os\nr, w = os.pipe()\n_posixsubprocess.fork_exec([b'touch', b'OUT/ran'], "
      "[b'/usr/bin/touch'], False, (w,), None, None, -1, -1, -1, -1, -1, -1, r, w, True, True, -1, None, None, None,"
      " -1, None, False)"), "blocked: _posixsubprocess.fork_exec"),
    # a fresh copy of that helper, through the import machinery
    (("import importlib.util\nspec = importlib.util.find_spec('_posixsubprocess')\n"
     "importlib.util.module_from_spec(spec)"), "blocked: import _posixsubprocess"),
    # rebinding the fence's globals or the builtins changes nothing: its decisions are bound in closures
    (('import sys\nm = sys.modules["__main__"]\nm.BLOCKED_EVENTS = ()\nm.make_check = lambda *a: lambda e, a: None\n'
     'import os\nos.system("touch OUT/ran")'), "blocked: os.system"),
    (('import builtins\nbuiltins.type = lambda x: str\nbuiltins.isinstance = lambda *a: False\n'
     'import os\nos.system("touch OUT/ran")'), "blocked: os.system"),
]


@pytest.mark.parametrize(("code", "reason"), COMMANDS)
def test_running_a_command_is_stopped(code: str, reason: str, outside: Path, layer: str) -> None:
    result = run(code.replace("OUT", str(outside)), layer)
    assert_stopped(result, reason, layer)
    assert not (outside / "ran").exists()


def test_native_code_from_the_work_directory_is_stopped(layer: str) -> None:
    # a renamed copy of the subprocess helper, written where the code may write, then loaded
    code = ("import importlib.machinery, importlib.util, os\n"
            "origin = importlib.util.find_spec('_posixsubprocess').origin\n"
            "open('innocent.so', 'wb').write(open(origin, 'rb').read())\n"
            "loader = importlib.machinery.ExtensionFileLoader('innocent', os.path.abspath('innocent.so'))\n"
            "importlib.util.module_from_spec(importlib.util.spec_from_loader('innocent', loader))")
    result = run(code, layer)
    assert result.stopped is not None and result.stopped.startswith("blocked: load of native code from ")
    assert result.stopped.endswith("/innocent.so") and result.exit_code == BLOCKED_EXIT


# --- read /etc/passwd -----------------------------------------------------------------------------

READS = [
    ('print(open("/etc/passwd").read())', "blocked: open /etc/passwd"),
    ('import os\nprint(os.read(os.open("/etc/passwd", os.O_RDONLY), 4096))', "blocked: open /etc/passwd"),
    ('import pathlib\nprint(pathlib.Path("/etc/passwd").read_text())', "blocked: open /etc/passwd"),
    ('import io\nprint(io.FileIO("/etc/passwd").read())', "blocked: open /etc/passwd"),
    ('import linecache\nprint(linecache.getline("/etc/passwd", 1))', "blocked: open /etc/passwd"),
    ('print(open("../../../../../../etc/passwd").read())', "blocked: open ../../../../../../etc/passwd"),
    ('import shutil\nshutil.copyfile("/etc/passwd", "p")\nprint(open("p").read())',
     "blocked: shutil.copyfile /etc/passwd"),
    ('import os\nos.symlink("/etc/passwd", "p")\nprint(open("p").read())', "blocked: os.symlink"),
    ('import os\nos.link("/etc/passwd", "p")\nprint(open("p").read())', "blocked: os.link /etc/passwd"),
    ('import os\nprint(os.listdir("/etc"))', "blocked: os.listdir /etc"),
    # a directory descriptor would make dir_fd paths unchecked
    ('import os\nfd = os.open("/etc", os.O_RDONLY)\nprint(os.read(os.open("passwd", os.O_RDONLY, dir_fd=fd), 99))',
     "blocked: open /etc"),
    ('import readline\nreadline.read_history_file("/etc/passwd")\nprint(readline.get_history_item(1))',
     "blocked: import readline"),
    ('import sqlite3\nsqlite3.connect("/etc/passwd")', "blocked: import _sqlite3"),
    # patching what the fence might use, or lying about the path
    (('import os\nos.path.realpath = lambda p: os.getcwd()\nos.path.abspath = os.path.realpath\n'
     'print(open("/etc/passwd").read())'), "blocked: open /etc/passwd"),
    (('class S(str):\n    def startswith(self, *a): return True\n    def __eq__(self, o): return True\n'
     '    __hash__ = str.__hash__\nprint(open(S("/etc/passwd")).read())'), "blocked: open /etc/passwd"),
]


@pytest.mark.parametrize(("code", "reason"), READS)
def test_reading_the_password_file_is_stopped(code: str, reason: str, layer: str) -> None:
    result = run(code, layer)
    assert_stopped(result, reason, layer)
    assert "root:" not in result.stdout + result.stderr


def test_the_user_and_group_databases_look_empty(layer: str) -> None:
    # they are read behind the audit hook's back; stdlib code (expanduser, shutil) expects KeyError
    code = ("import grp, os, pwd\nprint(pwd.getpwall(), grp.getgrall())\nprint(os.path.expanduser('~'))\n"
            "try:\n    pwd.getpwnam('root')\nexcept KeyError:\n    print('no root')")
    result = run(code, layer)
    assert (result.ok, result.stdout) == (True, "[] []\n~\nno root\n")


def test_the_standard_library_is_readable_but_not_as_a_directory_descriptor(layer: str) -> None:
    assert run("import os\nprint(len(open(os.__file__).read()) > 0)", layer).stdout == "True\n"
    result = run("import os\nfd = os.open(os.path.dirname(os.__file__), os.O_RDONLY)\n"
                 "os.open('probegate-escape', os.O_WRONLY | os.O_CREAT, dir_fd=fd)", layer)
    assert_stopped(result, f"blocked: open of the directory {LIB}", layer)
    assert not Path(LIB, "probegate-escape").exists()


# --- write outside the temporary directory --------------------------------------------------------

WRITES = [
    ('open("OUT/w", "w").write("x")', "blocked: open OUT/w"),
    ('import os\nos.open("OUT/w", os.O_WRONLY | os.O_CREAT)', "blocked: open OUT/w"),
    ('import pathlib\npathlib.Path("OUT/w").write_text("x")', "blocked: open OUT/w"),
    ('import os\nos.mkdir("OUT/w")', "blocked: os.mkdir OUT/w"),
    ('open("x", "w").close()\nimport os\nos.rename("x", "OUT/w")', "blocked: os.rename OUT/w"),
    ('open("x", "w").close()\nimport shutil\nshutil.copyfile("x", "OUT/w")', "blocked: shutil.copyfile OUT/w"),
    ('import os\nos.mkfifo("OUT/w")', "blocked: os.mkfifo"),
    ('import os\nos.mknod("OUT/w")', "blocked: os.mknod"),
    ('import os\nos.chdir("OUT")\nopen("w", "w")', "blocked: os.chdir"),
    ('import os\nos.symlink("OUT", "out")\nopen("out/w", "w")', "blocked: os.symlink"),
    ('open("../probegate-escape", "w")', "blocked: open ../probegate-escape"),
    ('import os\nos.path.realpath = lambda p: os.getcwd()\nopen("OUT/w", "w")', "blocked: open OUT/w"),
    ('import posixpath\nposixpath.join = lambda *a: "inside"\nopen("OUT/w", "w")', "blocked: open OUT/w"),
]


@pytest.mark.parametrize(("code", "reason"), WRITES)
def test_writing_outside_the_work_directory_is_stopped(code: str, reason: str, outside: Path, layer: str) -> None:
    result = run(code.replace("OUT", str(outside)), layer)
    assert_stopped(result, reason.replace("OUT", str(outside)), layer)
    assert list(outside.iterdir()) == []


def test_changing_a_host_file_through_a_descriptor_is_stopped(layer: str) -> None:
    before = os.stat(os.__file__)
    assert_stopped(run("import os\nos.fchmod(os.open(os.__file__, os.O_RDONLY), 0o777)", layer),
                   "blocked: os.chmod on a file descriptor", layer)
    assert_stopped(run("import os\nos.utime(os.__file__, (0, 0))", layer), f"blocked: os.utime {os.__file__}", layer)
    after = os.stat(os.__file__)
    assert (stat.S_IMODE(after.st_mode), after.st_mtime_ns) == (stat.S_IMODE(before.st_mode), before.st_mtime_ns)


def test_functions_without_audit_events_are_gone_everywhere(layer: str) -> None:
    # os.supports_dir_fd holds the functions themselves: the originals must not be found there either
    code = ("import os, posix, signal, _posixsubprocess, _imp\n"
            "print(sorted(f.__name__ for f in os.supports_dir_fd | os.supports_fd if f.__name__ in "
            "('mkfifo', 'mknod', 'pidfd_open')))\n"
            "print(sorted({f.__qualname__ for f in (os.mkfifo, posix.mknod, os.pidfd_open, "
            "signal.pidfd_send_signal, _posixsubprocess.fork_exec, _imp.create_builtin)}))")
    assert run(code, layer).stdout == "[]\n['_refusal.<locals>.refused']\n"


# --- network: only the probe's address ------------------------------------------------------------

SOCKETS = [
    ('import socket\nsocket.create_connection(("127.0.0.1", PORT), timeout=2)', "blocked: socket.getaddrinfo 127.0.0.1"),
    ('import socket\nprint(socket.socket().connect_ex(("127.0.0.1", PORT)))', "blocked: socket of family 2, type 1"),
    ('import http.client\nhttp.client.HTTPConnection("127.0.0.1", PORT, timeout=2).request("GET", "/")',
     "blocked: socket.getaddrinfo 127.0.0.1"),
    ('import urllib.request\nurllib.request.urlopen("http://127.0.0.1:PORT/", timeout=2)',
     "blocked: socket.getaddrinfo 127.0.0.1"),
    ('import asyncio\nasyncio.run(asyncio.open_connection("127.0.0.1", PORT))', "blocked: socket of family 2, type 1"),
    ('import socket\nsocket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", PORT))',
     "blocked: socket of family 2, type 2"),
    ('import socket\nsocket.socket().bind(("127.0.0.1", 0))', "blocked: socket of family 2, type 1"),
    ('import socket\nsocket.socket(socket.AF_INET6).listen()', "blocked: socket of family 10, type 1"),
    ('import socket\nsocket.getaddrinfo("localhost", PORT)', "blocked: socket.getaddrinfo localhost"),
    ('import socket\nsocket.gethostbyname("localhost")', "blocked: socket.gethostbyname localhost"),
    ('import socket\nsocket.socket(socket.AF_NETLINK, socket.SOCK_RAW)', "blocked: socket of family 16, type 3"),
    ('import socket\nsocket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)',
     "blocked: socket of family 2, type 3"),
    # Unix sockets may exist (asyncio's self-pipe) but reach nothing
    ('import socket\nsocket.socket(socket.AF_UNIX).connect("/var/run/docker.sock")',
     "blocked: connect to /var/run/docker.sock"),
    ('import socket\nsocket.socket(socket.AF_UNIX).bind("\\0probegate")', "blocked: socket.bind"),
    ('import socket\nsocket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"x", "/dev/log")', "blocked: socket.sendto"),
    # a path that claims to be something else
    (('import socket\nclass P(str):\n    def __eq__(self, o): return True\n    __hash__ = str.__hash__\n'
     'socket.socket(socket.AF_UNIX).connect(P("/run/x.sock"))'), "blocked: connect to /run/x.sock"),
]


@pytest.mark.parametrize(("code", "reason"), SOCKETS)
def test_no_socket_reaches_anything(code: str, reason: str, listener: Listener, layer: str) -> None:
    port = str(listener.port)
    result = run(code.replace("PORT", port), layer)
    assert_stopped(result, reason.replace("PORT", port), layer)
    assert listener.contacts() == 0


# --- fork bombs and other processes ---------------------------------------------------------------

FORKS = [
    ("import os\nwhile True:\n    os.fork()", "blocked: os.fork"),
    ("import pty\nwhile True:\n    pty.fork()", "blocked: os.forkpty"),
    ("import multiprocessing\nwhile True:\n    multiprocessing.Process(target=print).start()", "blocked: os.fork"),
    ("import threading, time\nwhile True:\n    threading.Thread(target=time.sleep, args=(60,)).start()",
     "blocked: _thread.start_new_thread"),
    ("import os\nwhile True:\n    os.posix_spawn('/bin/sleep', ['sleep', '60'], {})", "blocked: os.posix_spawn"),
]


@pytest.mark.parametrize(("code", "reason"), FORKS)
def test_a_fork_bomb_is_stopped_and_leaves_no_process(code: str, reason: str, layer: str) -> None:
    mark = f"bomb{uuid.uuid4().hex}"
    result = run("import os\nprint(os.getpid(), flush=True)\n" + code, layer, mark=mark)
    assert_stopped(result, reason, layer)
    assert lingering(mark) == []  # the sandbox's processes: bwrap's, the interpreter, its forks
    if layer == "fence":
        assert survivors(int(result.stdout)) == []  # and the session of the process, for what it started


@pytest.mark.parametrize("script", ["sleep 300 & sleep 300 & echo $$; wait", "sleep 300 & echo $$"])
def test_the_whole_session_is_killed_whether_the_leader_waits_or_not(script: str, tmp_path: Path) -> None:
    # the group kill does not depend on the audit hook: a shell that starts children stands in for an escape
    out = tmp_path / "out"
    with open(os.devnull, "rb") as stdin, out.open("wb") as stdout, open(os.devnull, "wb") as stderr:
        exit_code = run_in_session(["sh", "-c", script], (stdin, stdout, stderr), str(tmp_path), 3.0)
    assert exit_code == (None if "wait" in script else 0)
    assert survivors(int(out.read_text())) == []


# --- signals to host processes --------------------------------------------------------------------

SIGNALS = [
    ("import os\nos.kill(VICTIM, 9)", "blocked: os.kill"),
    ("import os\nos.killpg(os.getpgid(VICTIM), 9)", "blocked: os.killpg"),
    ("import os, signal\nsignal.pidfd_send_signal(os.pidfd_open(VICTIM), 9)", "blocked: os.pidfd_open"),
    ("import os\nos.setpriority(os.PRIO_PROCESS, VICTIM, 19)", "blocked: os.setpriority"),
    ("import resource\nresource.prlimit(VICTIM, resource.RLIMIT_NOFILE, (0, 0))", "blocked: resource.prlimit"),
    ("import resource\nresource.setrlimit(resource.RLIMIT_CPU, (-1, -1))\nimport os\nos.kill(VICTIM, 9)",
     "blocked: resource.setrlimit"),
]


@pytest.mark.parametrize(("code", "reason"), SIGNALS)
def test_signalling_a_host_process_is_stopped(code: str, reason: str, victim: subprocess.Popen[bytes],
                                             layer: str) -> None:
    priority = os.getpriority(os.PRIO_PROCESS, victim.pid)
    assert_stopped(run(code.replace("VICTIM", str(victim.pid)), layer), reason, layer)
    assert victim.poll() is None
    assert os.getpriority(os.PRIO_PROCESS, victim.pid) == priority


# --- tampering with the fence itself --------------------------------------------------------------

@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("import sys\nsys.settrace(lambda *a: None)", "blocked: sys.settrace"),
        ("import sys\nsys.setprofile(lambda *a: None)", "blocked: sys.setprofile"),
        (("import sys\nsys.monitoring.use_tool_id(3, 'x')\n"
         "sys.monitoring.register_callback(3, sys.monitoring.events.PY_START, print)"),
         "blocked: sys.monitoring.register_callback"),
        ("import gc\nprint(len(gc.get_objects()))", "blocked: gc.get_objects"),
        ("import ctypes", "blocked: import _ctypes"),
        ("import _testcapi", "blocked: import _testcapi"),
        # a blocked call cannot be caught and ignored: the process ends
        ('try:\n    open("/etc/shadow")\nexcept BaseException:\n    pass\nprint("escaped")', "blocked: open /etc/shadow"),
    ],
)
def test_tampering_with_the_fence_is_stopped(code: str, reason: str, layer: str) -> None:
    result = run(code, layer)
    assert_stopped(result, reason, layer)
    assert result.stdout == ""


# --- resources -------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("while True:\n    pass", "CPU time limit (2 s) exceeded"),
        # SIGXCPU ignored: the hard limit, one second later, is SIGKILL
        ("import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass",
         "CPU time limit (2 s) exceeded"),
        ("x = bytearray(4 * 1024 ** 3)", "memory limit (512 MiB) exceeded"),
        ("x = [0] * (1 << 29)", "memory limit (512 MiB) exceeded"),
        ('print("x" * 10_000_000)', "output or file size limit (1048576 bytes) exceeded"),
        ('open("big", "wb").write(b"x" * 10_000_000)', "output or file size limit (1048576 bytes) exceeded"),
    ],
)
def test_resource_exhaustion_is_stopped(code: str, reason: str, layer: str) -> None:
    result = run(code, layer)
    assert result.stopped == reason and not result.ok


def test_a_process_that_never_ends_is_killed_at_the_wall_clock_limit(layer: str) -> None:
    mark = f"sleeper{uuid.uuid4().hex}"
    result = run("import time\nprint('started', flush=True)\ntime.sleep(600)", layer, SandboxLimits(wall_s=1.0), mark)
    assert (result.stopped, result.exit_code, result.stdout) == ("wall-clock limit (1 s) exceeded", None, "started\n")
    assert lingering(mark) == []


def test_the_temporary_directory_is_removed(layer: str) -> None:
    before = set(Path(tempfile.gettempdir()).glob("probegate-code-*"))
    result = run("import os\nprint(os.getcwd())\nopen('left', 'w').write('x')\nos.mkdir('d')", layer)
    assert result.ok
    if layer == "fence":
        assert not Path(result.stdout.strip()).exists()
    assert set(Path(tempfile.gettempdir()).glob("probegate-code-*")) <= before
