"""Every escape of issue 18, and ten more, against each layer of the code sandbox.

Each attack runs against the full sandbox the ``code`` harness uses (``sandbox``)
and, where a layer is meant to hold on its own, against the audit hook alone
(``fence``: ``--unsafe-no-sandbox``) and against bubblewrap, seccomp and the
limits alone (``os``: no audit hook, as if the code had found a hole in it). The
witness is outside the sandbox: a file that must not appear, a port that must not
listen, a process that must not survive or change, a host listener that must see
nothing, the host's clock. A test here fails when the attacker wins.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from probegate.harnesses.sandbox import SandboxLimits, run_sandboxed
from probegate.harnesses.sandbox_prelude import BLOCKED_EXIT
from tests.security.layers import LIMITS, TOOLS_URL as LAYERS_TOOLS_URL, Background, attack, marked_tools, run_os_layer
from tests.security.witness import (
    Listener,
    host_listening_ports,
    lingering,
    nice_of,
    proc_status,
    processes_with,
)

LIB = os.path.realpath(os.path.dirname(os.__file__))
HOST_AND_FENCE = ["sandbox", "fence"]
ALL = ["sandbox", "fence", "os"]
HOST_LAYERS = ["sandbox", "os"]  # what bubblewrap alone must hold


def token() -> str:
    return "pgtok" + uuid.uuid4().hex[:12]


def fails_for_the_attacker(outcome, reason: str | None = None) -> None:
    """Not a clean run; with ``reason``, stopped by the fence for it."""
    assert not outcome.ok, outcome
    if reason is not None:
        assert (outcome.stopped, outcome.exit_code) == (reason, BLOCKED_EXIT), outcome


# --- 1. an extension module loaded under a NUL-cut name: un-disarmed fork_exec ---------------------

NUL_FORK_EXEC = (
    "import importlib.machinery, importlib.util, os\n"
    "origin = importlib.util.find_spec('_posixsubprocess').origin\n"
    "loader = importlib.machinery.ExtensionFileLoader('_posixsubprocess\\x00c', origin)\n"
    "m = importlib.util.module_from_spec(importlib.util.spec_from_loader('_posixsubprocess\\x00c', loader))\n"
    "r, w = os.pipe()\n"
    "pid = m.fork_exec([b'touch', b'TARGET'], [b'/usr/bin/touch'], False, (w,), None, None, -1, -1, -1, -1,"
    " -1, -1, r, w, True, True, -1, None, None, None, -1, None, False)\n"
    "os.close(w)\nprint(pid, os.read(r, 100), os.waitpid(pid, 0))\n"
)


@pytest.mark.parametrize("layer", ALL)
def test_a_nul_named_posixsubprocess_runs_nothing_outside(layer: str, outside: Path) -> None:
    outcome = attack(NUL_FORK_EXEC.replace("TARGET", str(outside / "ran")), layer)
    if layer == "os":
        assert "PermissionError: [Errno 1]" in outcome.stderr  # seccomp: no fork
    else:
        fails_for_the_attacker(outcome, "blocked: import of a module name with a control character: "
                                        "_posixsubprocess?c")
    time.sleep(0.2)
    assert not (outside / "ran").exists()


def test_without_seccomp_a_started_touch_still_cannot_write_on_the_host(outside: Path) -> None:
    # the process starts, but the host folder is not in the sandbox and the library folder is read-only
    targets = [str(outside / "ran"), str(Path(LIB, f"probegate-escape-{token()}"))]
    try:
        outcome = run_os_layer(f"import subprocess\nfor t in {targets!r}:\n"
                               "    print(subprocess.run(['/usr/bin/touch', t]).returncode)", seccomp=False)
        assert outcome.stdout == "1\n1\n" and "Read-only file system" in outcome.stderr, outcome
        assert not any(Path(t).exists() for t in targets)
    finally:
        Path(targets[1]).unlink(missing_ok=True)


@pytest.mark.parametrize(
    ("name", "origin", "reason"),
    [
        ("_posixsubprocess\\x00c", "_posixsubprocess", "import of a module name with a control character: "
                                                       "_posixsubprocess?c"),
        ("pkg.readline\\x00x", "readline", "import of a module name with a control character: pkg.readline?x"),
        ("innocent\\x01", "_json", "import of a module name with a control character: innocent?"),
        ("innocent", "_posixsubprocess", "load of native code from ORIGIN"),  # the file, whatever the name
    ],
)
def test_native_modules_are_checked_by_full_name_and_by_file(name: str, origin: str, reason: str) -> None:
    code = ("import importlib.machinery, importlib.util\n"
            f"origin = importlib.util.find_spec({origin!r}).origin\n"
            f"loader = importlib.machinery.ExtensionFileLoader('{name}', origin)\n"
            f"importlib.util.module_from_spec(importlib.util.spec_from_loader('{name}', loader))\n")
    outcome = attack(code, "sandbox")
    origin_path = next(Path(LIB, "lib-dynload").glob(f"{origin}.*.so"), None)
    fails_for_the_attacker(outcome, "blocked: " + reason.replace("ORIGIN", str(origin_path)))


# --- 2. a setsid child surviving the run's kill ------------------------------------------------------

SETSID_CHILD = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(300)\nprint('forked', flush=True)\n"


@pytest.mark.parametrize("layer", ALL)
def test_a_setsid_child_does_not_survive(layer: str) -> None:
    mark = token()
    outcome = attack(SETSID_CHILD + "time.sleep(300)", layer, SandboxLimits(wall_s=5.0), mark)
    assert not outcome.ok
    if layer != "os":
        assert outcome.stopped in ("blocked: os.fork", "blocked: os.setsid"), outcome
    assert lingering(mark) == []


def test_without_seccomp_the_pid_namespace_takes_a_setsid_child_with_it() -> None:
    # the fork works here: only the kill of the sandbox's PID namespace stands between the child and the host
    mark = token()
    with Background(f"# {mark}\n" + SETSID_CHILD + "time.sleep(300)", SandboxLimits(wall_s=3.0),
                    seccomp=False) as run:
        assert run.line() == "forked"
        assert len(processes_with(mark, name="python")) == 2  # the witness sees both while they live
        run.finish()
    assert lingering(mark) == []


def test_when_the_harness_dies_the_sandbox_dies_with_it(tmp_path: Path) -> None:
    # --die-with-parent: a harness killed with SIGKILL cannot kill its sandbox's process group itself
    mark = token()
    script = tmp_path / "harness.py"
    script.write_text(
        "from probegate.harnesses.sandbox import SandboxLimits, run_sandboxed\n"
        f"run_sandboxed('import time\\ntime.sleep(300)', {marked_tools(mark)!r}, {LAYERS_TOOLS_URL!r}, "
        "SandboxLimits(wall_s=300.0))\n")
    harness = subprocess.Popen([sys.executable, str(script)], cwd=Path(__file__).parents[2])
    try:
        deadline = time.monotonic() + 30
        while not processes_with(mark, name="python") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_with(mark, name="python"), "the sandbox never started"
    finally:
        harness.kill()
        harness.wait()
    assert lingering(mark) == []


# --- 3. /etc/passwd through readline -----------------------------------------------------------------

READLINE = ("import importlib.machinery, importlib.util\n"
            "origin = importlib.util.find_spec('readline').origin\n"
            "loader = importlib.machinery.ExtensionFileLoader('readline\\x00x', origin)\n"
            "m = importlib.util.module_from_spec(importlib.util.spec_from_loader('readline\\x00x', loader))\n"
            "m.read_history_file('/etc/passwd')\nprint(m.get_history_item(1))\n")


@pytest.mark.parametrize("layer", ALL)
def test_readline_reads_no_password_file(layer: str) -> None:
    outcome = attack(READLINE, layer)
    assert "root:" not in outcome.stdout + outcome.stderr
    if layer == "os":
        assert "FileNotFoundError" in outcome.stderr  # there is no /etc in the sandbox
    else:
        fails_for_the_attacker(outcome, "blocked: import of a module name with a control character: readline?x")


# --- 4. socket().listen() without bind ---------------------------------------------------------------

@pytest.mark.parametrize("layer", HOST_AND_FENCE)
def test_listen_without_bind_is_stopped(layer: str) -> None:
    fails_for_the_attacker(attack("import socket\ns = socket.socket()\ns.listen()\nprint(s.getsockname())", layer),
                           "blocked: socket of family 2, type 1")


def test_listen_without_bind_listens_only_inside_the_sandbox() -> None:
    code = "import socket, time\ns = socket.socket()\ns.listen()\nprint(s.getsockname()[1], flush=True)\ntime.sleep(60)"
    with Background(code, SandboxLimits(wall_s=4.0)) as run:
        port = int(run.line())
        assert port not in host_listening_ports()
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        run.finish()


# --- 5. closing fd 2 (or the verdict descriptor) before a blocked action ------------------------------

CLOSES = [
    "import os\nos.close(2)",
    "import os\nos.closerange(0, 1024)",
    "import os, sys\nos.close(sys.modules['__main__']._CFG['verdict_fd'])",
    "import os, sys\nos.dup2(os.open('/dev/null', os.O_WRONLY), sys.modules['__main__']._CFG['verdict_fd'])",
]


@pytest.mark.parametrize("layer", HOST_AND_FENCE)
@pytest.mark.parametrize("close", CLOSES)
def test_closing_descriptors_does_not_turn_a_blocked_action_into_ok(close: str, layer: str) -> None:
    code = close + "\ntry:\n    open('/etc/passwd').read()\nexcept BaseException:\n    pass\nprint('escaped')"
    outcome = attack(code, layer)
    assert not outcome.ok and outcome.exit_code == BLOCKED_EXIT, outcome
    assert outcome.stopped is not None and outcome.stopped.startswith("blocked: ")
    assert "escaped" not in outcome.stdout


# --- 6. 300 files of 1 MiB ----------------------------------------------------------------------------

FILL = ("n = 0\ntry:\n    for i in range(300):\n        open(f'f{i}', 'wb').write(b'x' * 1024 * 1024)\n"
        "        n += 1\nexcept OSError as exc:\n    print(n, exc.errno)\n    raise\n")


@pytest.mark.parametrize("layer", HOST_LAYERS)
def test_filling_the_disk_stops_at_the_cap(layer: str) -> None:
    before = {p.name for p in Path("/tmp").iterdir()}
    outcome = attack(FILL, layer, SandboxLimits(disk_bytes=8 * 1024 * 1024, wall_s=30.0))
    written, code = map(int, outcome.stdout.split())
    assert code == errno.ENOSPC and written <= 8
    assert outcome.stopped == f"disk limit ({8 * 1024 * 1024} bytes) exceeded"
    new = {p.name for p in Path("/tmp").iterdir()} - before
    assert not [n for n in new if n.startswith("f") and n[1:].isdigit()]


# --- 7. _ssl reading the host's certificates ----------------------------------------------------------

def test_the_host_has_certificates_to_steal() -> None:
    # the witness: without a sandbox these calls see the host's certificates
    assert len(ssl.create_default_context().get_ca_certs()) > 0


@pytest.mark.parametrize("layer", HOST_AND_FENCE)
def test_ssl_is_not_importable(layer: str) -> None:
    # hidden rather than stopped: asyncio and http.client import ssl inside a try
    outcome = attack("import ssl\nprint(len(ssl.create_default_context().get_ca_certs()))", layer)
    assert not outcome.ok and outcome.stdout == "" and "ModuleNotFoundError: import of _ssl halted" in outcome.stderr
    fails_for_the_attacker(attack("import sys\ndel sys.modules['_ssl']\nimport ssl", layer), "blocked: import _ssl")


def test_ssl_finds_no_certificate_inside_the_sandbox() -> None:
    code = ("import ssl\nprint(len(ssl.create_default_context().get_ca_certs()))\n"
            "ssl.create_default_context().load_verify_locations(ssl.get_default_verify_paths().openssl_cafile)")
    outcome = run_os_layer(code)
    assert outcome.stdout == "0\n" and "FileNotFoundError" in outcome.stderr


# --- 8-11. calls without audit events: stat, nice, unshare, clock_settime ---------------------------

@pytest.mark.parametrize("layer", HOST_LAYERS)
def test_stat_of_the_shadow_file_finds_nothing(layer: str) -> None:
    host = os.stat("/etc/shadow")
    outcome = attack("import os\nst = os.stat('/etc/shadow')\nprint(st.st_ino, st.st_size)", layer)
    assert "FileNotFoundError" in outcome.stderr and not outcome.ok
    assert str(host.st_ino) not in outcome.stdout


@pytest.mark.parametrize("layer", HOST_AND_FENCE)
@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("import os\nos.nice(-5)", "blocked: os.nice"),
        ("import os\nos.unshare(os.CLONE_NEWUSER)", "blocked: os.unshare"),
        ("import os\nos.setns(0)", "blocked: os.setns"),
        ("import time\ntime.clock_settime(time.CLOCK_REALTIME, 1e9)", "blocked: time.clock_settime"),
        ("import time\ntime.clock_settime_ns(time.CLOCK_REALTIME, 10**18)", "blocked: time.clock_settime_ns"),
        ("import os\nos.setsid()", "blocked: os.setsid"),
        ("import os\nos.memfd_create('x')", "blocked: os.memfd_create"),
    ],
)
def test_calls_that_reach_the_kernel_without_an_audit_event_are_stopped(code: str, reason: str, layer: str) -> None:
    fails_for_the_attacker(attack(code, layer), reason)


def test_nice_minus_five_does_not_change_the_process_priority() -> None:
    mark = token()
    code = (f"# {mark}\nimport os, time\ntry:\n    os.nice(-5)\nexcept OSError as exc:\n    print(exc.errno, flush=True)\n"
            "else:\n    print('raised', flush=True)\ntime.sleep(60)")
    with Background(code, SandboxLimits(wall_s=4.0)) as run:
        assert run.line() == str(errno.EPERM)
        pids = processes_with(mark, name="python")
        assert len(pids) == 1 and nice_of(pids[0]) >= 0
        run.finish()


def test_unshare_gives_no_capability() -> None:
    mark = token()
    code = (f"# {mark}\nimport os, time\nfor flag in (os.CLONE_NEWUSER, os.CLONE_NEWNS, os.CLONE_NEWNET):\n"
            "    try:\n        os.unshare(flag)\n        print('unshared', flush=True)\n"
            "    except OSError as exc:\n        print(exc.errno, flush=True)\ntime.sleep(60)")
    with Background(code, SandboxLimits(wall_s=4.0)) as run:
        assert [run.line() for _ in range(3)] == [str(errno.EPERM)] * 3
        pids = processes_with(mark, name="python")
        assert len(pids) == 1 and int(proc_status(pids[0], "CapEff"), 16) == 0
        assert os.readlink(f"/proc/{pids[0]}/ns/user") != os.readlink("/proc/self/ns/user")
        run.finish()


def test_clock_settime_leaves_the_host_clock_alone() -> None:
    outcome = run_os_layer("import time\ntime.clock_settime(time.CLOCK_REALTIME, 1e9)")
    assert "PermissionError" in outcome.stderr
    assert time.time() > 1.7e9  # still this decade, not 2001


# --- 12. output printed before an uncaught exception ----------------------------------------------

@pytest.mark.parametrize("layer", HOST_AND_FENCE)
@pytest.mark.parametrize(
    ("code", "stdout"),
    [
        ("print('partial answer')\n1 / 0", "partial answer\n"),
        ("import sys\nsys.stdout.write('no newline')\nraise KeyError('x')", "no newline"),
        ("print('before the stop')\nopen('/etc/passwd')", "before the stop\n"),
        ("print('before the limit')\nwhile True:\n    pass", "before the limit\n"),
    ],
)
def test_output_before_an_exception_or_a_stop_is_kept(code: str, stdout: str, layer: str) -> None:
    outcome = attack(code, layer)
    assert outcome.stdout == stdout and not outcome.ok


# --- ten more ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("layer", ALL)
def test_1_no_write_into_a_host_folder_the_sandbox_can_see(layer: str) -> None:
    target = Path(LIB, f"probegate-escape-{token()}")
    try:
        outcome = attack(f"open({str(target)!r}, 'w').write('x')", layer)
        assert not outcome.ok
        if layer == "os":
            assert "Read-only file system" in outcome.stderr
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


@pytest.mark.parametrize("layer", HOST_LAYERS)
@pytest.mark.parametrize("path", ["SECRET", "/root/.bash_history", "/proc/1/environ", "/home", "/etc/hostname"])
def test_2_no_host_file_outside_the_interpreter_is_there(path: str, layer: str, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("sk-probegate-secret-value")
    path = path.replace("SECRET", str(secret))
    outcome = attack(f"import os\nprint(os.path.exists({path!r}))\nprint(open({path!r}).read())", layer)
    assert "sk-probegate" not in outcome.stdout and not outcome.ok
    if layer == "os":
        assert outcome.stdout == "False\n"


@pytest.mark.parametrize("layer", ALL)
def test_3_no_tcp_connection_reaches_a_host_listener(layer: str, listener: Listener) -> None:
    code = f"import socket\nsocket.create_connection(('127.0.0.1', {listener.port}), timeout=3)"
    outcome = attack(code, layer)
    assert not outcome.ok
    if layer == "os":
        assert "ConnectionRefusedError" in outcome.stderr or "Network is unreachable" in outcome.stderr
    assert listener.contacts() == 0


@pytest.mark.parametrize("layer", ALL)
def test_4_no_datagram_reaches_a_host_listener(layer: str, listener: Listener) -> None:
    code = ("import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f"for _ in range(20):\n    s.sendto(b'x', ('127.0.0.1', {listener.port}))\nprint('sent')")
    attack(code, layer)
    time.sleep(0.2)
    assert listener.contacts() == 0


@pytest.mark.parametrize("layer", ALL)
def test_5_no_abstract_unix_socket_of_the_host_is_reachable(layer: str) -> None:
    name = "\0probegate-" + token()
    server = socket.socket(socket.AF_UNIX)
    server.bind(name)
    server.listen()
    server.setblocking(False)
    try:
        outcome = attack(f"import socket\nsocket.socket(socket.AF_UNIX).connect({name!r})\nprint('in')", layer)
        assert not outcome.ok and "in" not in outcome.stdout
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()


@pytest.mark.parametrize("layer", ALL)
def test_6_no_signal_reaches_a_host_process(layer: str, victim: subprocess.Popen[bytes]) -> None:
    outcome = attack(f"import os\nos.kill({victim.pid}, 9)", layer)
    assert not outcome.ok
    if layer == "os":
        assert "ProcessLookupError" in outcome.stderr  # the host's pids are not in the sandbox's namespace
    time.sleep(0.2)
    assert victim.poll() is None


@pytest.mark.parametrize("layer", ALL)
@pytest.mark.parametrize(
    "bomb",
    [
        "import os\nwhile True:\n    os.fork()",
        "import threading, time\nwhile True:\n    threading.Thread(target=time.sleep, args=(60,)).start()",
        "import os\nwhile True:\n    os.posix_spawn('/usr/bin/sleep', ['sleep', '60'], {})",
    ],
)
def test_7_a_fork_bomb_starts_nothing(bomb: str, layer: str) -> None:
    mark = token()
    outcome = attack(bomb, layer, SandboxLimits(wall_s=10.0), mark)
    assert not outcome.ok and outcome.exit_code is not None  # it ended at once, not at the wall clock
    assert lingering(mark) == []


@pytest.mark.parametrize("layer", HOST_LAYERS)
def test_8_memory_outside_the_address_space_is_capped(layer: str) -> None:
    # memfd pages and tmpfs pages are not address space: seccomp and the tmpfs size bound them
    code = "import os\nfd = os.memfd_create('x')\nprint('made', fd)"
    outcome = attack(code, layer)
    assert "made" not in outcome.stdout and not outcome.ok


def _forgeries() -> list[bytes]:
    return [
        b'{"tool": "../../probegate/attempts/reset", "arguments": {}}\n',
        b'{"tool": "nope", "arguments": {}}\n',
        b'{"tool": "lookup", "arguments": "x", "extra": 1}\n',
        b"GET /secret HTTP/1.1\n",
        b"x" * (1024 * 1024 + 10) + b"\n",
    ]


class _Recorder(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_POST(self) -> None:  # noqa: N802
        self.seen.append(self.path)
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("layer", ["sandbox", "fence"])
def test_9_forged_requests_on_the_tools_channel_never_reach_the_probe(layer: str) -> None:
    _Recorder.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}}}}}]
    code = ("import json, socket, sys\nmain = sys.modules['__main__']\n"
            "print(lookup(q='honest'))\n"
            f"for forged in {_forgeries()!r}:\n"
            "    main._CHANNEL.sendall(forged)\n    line = main._REPLIES.readline()\n"
            "    print(json.loads(line)['status'] if line else 'closed')\n")
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/r/run/task/0/tools"
        result = run_sandboxed(code, tools, url, LIMITS, isolated=layer == "sandbox")
    finally:
        server.shutdown()
        server.server_close()
    assert result.ok, result
    assert result.stdout.splitlines() == ["{'ok': True}", "0", "0", "0", "0", "0"]
    assert _Recorder.seen == ["/r/run/task/0/tools/lookup"]  # the honest call only


@pytest.mark.parametrize("layer", ALL)
def test_10_the_harness_environment_is_not_inherited(layer: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-probegate-env-secret")
    outcome = attack("import json, os\nprint(json.dumps(dict(os.environ)))", layer)
    assert outcome.ok and "sk-probegate-env-secret" not in outcome.stdout
    assert set(json.loads(outcome.stdout)) <= {"LC_CTYPE", "PWD"}
