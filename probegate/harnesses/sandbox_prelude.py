"""The Python run first inside the code sandbox (stdlib only), as a template.

It is :mod:`probegate.harnesses.sandbox_fence`'s source followed by :data:`PRELUDE`, which
lowers its own resource limits, imports what the agent's code may need while the
file system is still open, reads the agent's code from stdin, defines one
function per tool (a ``urllib`` POST to the probe), removes what the audit hook
could not see (:func:`~probegate.harnesses.sandbox_fence.disarm`), installs the hook that ends
the process (exit :data:`BLOCKED_EXIT`, a :data:`BLOCKED_MARK` line on stderr) on
any network, process or file access outside what is allowed, and only then runs
the code.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from probegate.harnesses import sandbox_fence
from probegate.harnesses.schemas import parameter_order, tool_function

#: Exit status of a sandboxed process the audit hook stopped.
BLOCKED_EXIT = 86
#: Marker before the reason on stderr.
BLOCKED_MARK = "probegate-sandbox-blocked: "

_FENCE_SOURCE = inspect.getsource(sandbox_fence)

PRELUDE = r'''
import json, os, resource, sys
_CFG = json.loads(__CONFIG__)
for _name, _soft, _hard in _CFG["rlimits"]:
    resource.setrlimit(getattr(resource, _name), (_soft, _hard))
import collections, datetime, decimal, fractions, functools, http.client, itertools, linecache
import math, random, re, statistics, string, textwrap, traceback, urllib.error, urllib.request
_SOURCE = sys.stdin.read()


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
_CODE = compile(_SOURCE, "<agent-code>", "exec", dont_inherit=True)
disarm()
install(_CFG["host"], _CFG["port"], _CFG["tools_url"], "__MARK__", __EXIT__)
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
            positional parameters follow :func:`probegate.harnesses.schemas.parameter_order`.
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
    body = (
        PRELUDE.replace("__CONFIG__", repr(json.dumps(config)))
        .replace("__MARK__", BLOCKED_MARK)
        .replace("__EXIT__", str(BLOCKED_EXIT))
    )
    return _FENCE_SOURCE + body
