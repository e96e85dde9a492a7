"""The Python run first inside the code sandbox (stdlib only), as a template.

It is :mod:`probegate.harnesses.sandbox_fence`'s source followed by :data:`PRELUDE`, which
lowers its own resource limits, imports what the agent's code may need while the
file system is still open, reads the agent's code from stdin, defines one
function per tool (a request over the tools channel, a Unix socket the harness
answers: see :mod:`probegate.harnesses.sandbox_relay`), removes what the audit hook
could not see (:func:`~probegate.harnesses.sandbox_fence.disarm`), installs the hook that ends
the process (exit :data:`BLOCKED_EXIT`, the reason on the verdict descriptor) on
any network, process or file access outside what is allowed, and only then runs
the code. Whatever the code printed reaches stdout even when it then raises:
the interpreter runs unbuffered (``-u``) and the handler flushes.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from probegate.harnesses import sandbox_fence
from probegate.harnesses.schemas import parameter_order, tool_function

#: Exit status of a sandboxed process the audit hook stopped.
BLOCKED_EXIT = 86

_FENCE_SOURCE = inspect.getsource(sandbox_fence)

PRELUDE = r'''
import json, os, resource, sys
_CFG = json.loads(__CONFIG__)
for _name, _soft, _hard in _CFG["rlimits"]:
    resource.setrlimit(getattr(resource, _name), (_soft, _hard))
import collections, datetime, decimal, fractions, functools, hashlib, itertools, linecache
import math, random, re, socket, statistics, string, textwrap, traceback
_SOURCE = sys.stdin.read()
_CHANNEL = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, _CFG["channel_fd"])
_REPLIES = _CHANNEL.makefile("rb")


class ToolError(Exception):
    """A tool refused the call or failed; ``status`` and ``body`` hold the probe's answer."""

    def __init__(self, tool, status, body):
        super().__init__(f"{tool} failed (HTTP {status}): {json.dumps(body, ensure_ascii=False)}")
        self.tool, self.status, self.body = tool, status, body


def _call(tool, arguments):
    _CHANNEL.sendall(json.dumps({"tool": tool, "arguments": arguments}).encode() + b"\n")
    line = _REPLIES.readline()
    reply = json.loads(line) if line else {"status": 0, "body": {"error": "the tools channel is closed"}}
    if reply["status"] != 200:
        raise ToolError(tool, reply["status"], reply["body"])
    return reply["body"]


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


def _flush():
    for _stream in (sys.stdout, sys.stderr):
        try:
            _stream.flush()
        except BaseException:
            pass


_NAMESPACE = {"__name__": "__main__", "__builtins__": __builtins__, "ToolError": ToolError}
for _spec in _CFG["tools"]:
    _NAMESPACE[_spec["name"]] = _tool(_spec["name"], _spec["params"])
linecache.cache["<agent-code>"] = (len(_SOURCE), None, _SOURCE.splitlines(True), "<agent-code>")
_CODE = compile(_SOURCE, "<agent-code>", "exec", dont_inherit=True)
disarm()
install(_CFG["verdict_fd"], __EXIT__)
try:
    exec(_CODE, _NAMESPACE)
except SystemExit:
    raise
except BaseException as _exc:
    _flush()  # what was printed before the exception is part of the answer's evidence
    # show the agent's own frames only: the prelude's are noise to the model
    _te = traceback.TracebackException.from_exception(_exc)
    _te.stack = traceback.StackSummary.from_list([f for f in _te.stack if f.filename == "<agent-code>"])
    sys.stderr.write("".join(_te.format()))
    _flush()
    os._exit(1)
'''


def prelude_source(
    tools: list[dict[str, Any]],
    rlimits: list[tuple[str, int, int]],
    channel_fd: int,
    verdict_fd: int,
) -> str:
    """The prelude with its configuration filled in.

    Args:
        tools: OpenAI tool objects; each becomes a function of the same name whose
            positional parameters follow :func:`probegate.harnesses.schemas.parameter_order`.
        rlimits: ``(RLIMIT_NAME, soft, hard)`` triples set before anything else.
        channel_fd: the sandbox's end of the tools channel (a connected Unix stream socket).
        verdict_fd: where the fence writes why it stopped the code (one line).
    """
    config = {
        "tools": [
            {"name": tool_function(t)["name"], "params": parameter_order(tool_function(t).get("parameters"))}
            for t in tools
        ],
        "rlimits": [list(r) for r in rlimits],
        "channel_fd": channel_fd,
        "verdict_fd": verdict_fd,
    }
    body = PRELUDE.replace("__CONFIG__", repr(json.dumps(config))).replace("__EXIT__", str(BLOCKED_EXIT))
    return _FENCE_SOURCE + body
