"""The Python run first inside the code sandbox (stdlib only), as a template.

It lowers its own resource limits, imports what the agent's code may need while
the file system is still open, reads the agent's code from stdin, defines one
function per tool (a ``urllib`` POST to the probe), installs an audit hook that
ends the process (exit :data:`BLOCKED_EXIT`, a :data:`BLOCKED_MARK` line on
stderr) on any network, process or file access outside what is allowed, and only
then runs the code.
"""

from __future__ import annotations

import json
from typing import Any

from agents.schemas import parameter_order, tool_function

#: Exit status of a sandboxed process the audit hook stopped.
BLOCKED_EXIT = 86
#: Marker before the reason on stderr.
BLOCKED_MARK = "probegate-sandbox-blocked: "

PRELUDE = r'''
import json, os, resource, sys
_CFG = json.loads(__CONFIG__)
for _name, _soft, _hard in _CFG["rlimits"]:
    resource.setrlimit(getattr(resource, _name), (_soft, _hard))
import collections, datetime, decimal, fractions, functools, http.client, itertools, linecache
import math, random, re, statistics, string, textwrap, traceback, urllib.error, urllib.request
_SOURCE = sys.stdin.read()
_ROOT = os.path.realpath(os.getcwd())
_LIB = os.path.realpath(os.path.dirname(os.__file__))
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_BLOCK = ("subprocess.", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
          "pty.spawn", "os.kill", "os.killpg", "ctypes.", "resource.setrlimit", "resource.prlimit",
          "gc.get_objects", "gc.get_referrers", "gc.get_referents", "os.putenv", "os.unsetenv",
          "os.chdir", "os.fchdir", "socket.bind", "socket.sendto", "socket.sendmsg", "sqlite3.",
          "webbrowser.", "os.chroot", "os.setxattr", "os.removexattr", "syslog.", "winreg.")
_PATH_EVENTS = ("os.remove", "os.rename", "os.mkdir", "os.rmdir", "os.link", "os.symlink", "os.truncate",
                "os.chmod", "os.chown", "os.utime", "shutil.")
_DIR_EVENTS = ("os.listdir", "os.scandir", "glob.glob", "os.getxattr", "os.listxattr")


def _stop(reason):
    os.write(2, ("\n__MARK__" + reason + "\n").encode("utf-8", "replace"))
    os._exit(__EXIT__)


def _under(path, roots):
    if isinstance(path, int):
        return True
    if isinstance(path, bytes):
        path = path.decode("utf-8", "replace")
    real = os.path.realpath(os.path.join(_ROOT, os.fspath(path)))
    return any(real == r or real.startswith(r + os.sep) for r in roots)


def _writes(mode, flags):
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return bool((flags or 0) & _WRITE_FLAGS)


def _hook(event, args):
    if event.startswith(_BLOCK):
        _stop(event)
    elif event == "open":
        path, mode, flags = (list(args) + [None, None, None])[:3]
        roots = (_ROOT,) if _writes(mode, flags) else (_ROOT, _LIB)
        if path is not None and not _under(path, roots):
            _stop("open " + str(path))
    elif event.startswith(_PATH_EVENTS):
        for path in args:
            if isinstance(path, (str, bytes, os.PathLike)) and not _under(path, (_ROOT,)):
                _stop(event + " " + str(path))
    elif event.startswith(_DIR_EVENTS):
        path = args[0] if args else "."
        if path is not None and not _under(path, (_ROOT, _LIB)):
            _stop(event + " " + str(path))
    elif event == "socket.connect":
        address = args[1]
        if not (isinstance(address, tuple) and address[:2] == (_CFG["host"], _CFG["port"])):
            _stop("connect to " + str(address))
    elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr"):
        if args[0] not in (_CFG["host"], _CFG["host"].encode()):
            _stop(event + " " + str(args[0]))
    elif event == "urllib.Request":
        if not str(args[0]).startswith(_CFG["tools_url"] + "/"):
            _stop("request to " + str(args[0]))


class ToolError(Exception):
    """A tool refused the call or failed; ``status`` and ``body`` hold the probe's answer."""

    def __init__(self, tool, status, body):
        super().__init__(f"{tool} failed (HTTP {status}): {json.dumps(body, ensure_ascii=False)}")
        self.tool, self.status, self.body = tool, status, body


def _call(tool, arguments):
    request = urllib.request.Request(
        _CFG["tools_url"] + "/" + tool, data=json.dumps(arguments).encode(),
        headers={"content-type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=_CFG["http_timeout"]) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        raise ToolError(tool, exc.code, body) from None


def _tool(name, params):
    def call(*args, **kwargs):
        if len(args) > len(params):
            raise TypeError(f"{name}() takes {len(params)} positional arguments but {len(args)} were given")
        for param, value in zip(params, args):
            if param in kwargs:
                raise TypeError(f"{name}() got multiple values for argument {param!r}")
            kwargs[param] = value
        return _call(name, {k: v for k, v in kwargs.items() if v is not None})
    call.__name__ = call.__qualname__ = name
    return call


_NAMESPACE = {"__name__": "__main__", "__builtins__": __builtins__, "ToolError": ToolError}
for _spec in _CFG["tools"]:
    _NAMESPACE[_spec["name"]] = _tool(_spec["name"], _spec["params"])
linecache.cache["<agent-code>"] = (len(_SOURCE), None, _SOURCE.splitlines(True), "<agent-code>")
_CODE = compile(_SOURCE, "<agent-code>", "exec")
sys.addaudithook(_hook)
try:
    exec(_CODE, _NAMESPACE)
except SystemExit:
    raise
except BaseException as _exc:
    # show the agent's own frames only: the prelude's are noise to the model
    _te = traceback.TracebackException.from_exception(_exc)
    _te.stack = traceback.StackSummary.from_list([f for f in _te.stack if f.filename == "<agent-code>"])
    sys.stderr.write("".join(_te.format()))
    sys.stderr.flush()
    os._exit(1)
'''


def prelude_source(
    tools: list[dict[str, Any]],
    tools_url: str,
    host: str,
    port: int,
    rlimits: list[tuple[str, int, int]],
    http_timeout: float = 30.0,
) -> str:
    """The prelude with its configuration filled in.

    Args:
        tools: OpenAI tool objects; each becomes a function of the same name whose
            positional parameters follow :func:`agents.schemas.parameter_order`.
        tools_url: ``{gateway}/r/{run}/{task}/{attempt}/tools`` (no trailing slash).
        host: the only host the code may connect to (as written in ``tools_url``).
        port: the only port.
        rlimits: ``(RLIMIT_NAME, soft, hard)`` triples set before anything else.
        http_timeout: seconds per tool call.
    """
    config = {
        "tools": [
            {"name": tool_function(t)["name"], "params": parameter_order(tool_function(t).get("parameters"))}
            for t in tools
        ],
        "tools_url": tools_url.rstrip("/"),
        "host": host,
        "port": port,
        "rlimits": [list(r) for r in rlimits],
        "http_timeout": http_timeout,
    }
    return (
        PRELUDE.replace("__CONFIG__", repr(json.dumps(config)))
        .replace("__MARK__", BLOCKED_MARK)
        .replace("__EXIT__", str(BLOCKED_EXIT))
    )
