"""The code sandbox's only way out: a tools channel the harness answers.

The sandbox has no network. Each tool function in it writes one JSON line,
``{"tool": NAME, "arguments": {...}}``, to its end of a Unix stream socket pair;
:class:`ToolRelay`, a thread in the harness, reads it, checks it
(:func:`parse_request`: a tool of this attempt, an object of arguments, at most
:data:`MAX_REQUEST_BYTES`), calls the probe over HTTP on the sandbox's behalf and
writes back ``{"status": HTTP_STATUS, "body": JSON}``. Anything else the code writes
there is answered with status 0 and an error, and never reaches the probe.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from typing import Any

from probegate.harnesses.schemas import tool_function
from probegate.harnesses.tools_client import Observation, ToolsClient

#: Longest request line (bytes); a longer one ends the channel.
MAX_REQUEST_BYTES = 1024 * 1024


def parse_request(line: bytes, tool_names: frozenset[str]) -> tuple[str, dict[str, Any]] | str:
    """One request line -> ``(tool, arguments)``, or the reason it is refused (pure).

    Args:
        line: the bytes the sandbox wrote, newline included.
        tool_names: the tools this attempt offers.
    """
    try:
        request = json.loads(line)
    except ValueError:
        return "the request is not JSON"
    if not isinstance(request, dict) or set(request) != {"tool", "arguments"}:
        return 'a request is {"tool": NAME, "arguments": {...}}'
    tool, arguments = request["tool"], request["arguments"]
    if not isinstance(tool, str) or tool not in tool_names:
        return f"no tool {str(tool)[:100]!r} in this attempt"
    if not isinstance(arguments, dict):
        return "the arguments are not a JSON object"
    return tool, arguments


def refusal(reason: str) -> dict[str, Any]:
    """The reply to a request that never reached the probe."""
    return {"status": 0, "body": {"error": "bad_request", "message": reason}}


class ToolRelay:
    """Answers the sandbox's tool requests from a thread, for one sandboxed run.

    Use it as a context manager: inside, :attr:`sandbox_end` is the descriptor to
    hand to the sandbox; on exit the channel is shut down and the thread joined.

    Args:
        tools: OpenAI tool objects of the attempt (only these may be called).
        tools_url: ``{gateway}/r/{run}/{task}/{attempt}/tools``.
        timeout: seconds per probe call.
        observe: called (from the relay's thread) with each call's arguments and the
            probe's :class:`~probegate.harnesses.tools_client.Observation`.
    """

    def __init__(self, tools: list[dict[str, Any]], tools_url: str, timeout: float,
                 observe: Callable[[dict[str, Any], Observation], None] | None = None) -> None:
        self.observe = observe
        self.tool_names = frozenset(str(tool_function(t)["name"]) for t in tools)
        self.client = ToolsClient(tools_url, timeout=max(timeout, 1.0))
        self._host, self._sandbox = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._thread = threading.Thread(target=self._serve, name="probegate-tool-relay", daemon=True)

    @property
    def sandbox_end(self) -> int:
        """The descriptor the sandboxed process inherits."""
        return self._sandbox.fileno()

    def __enter__(self) -> ToolRelay:
        self._thread.start()
        return self

    def release_sandbox_end(self) -> None:
        """Close the harness's copy of the sandbox's end (once the process holds it)."""
        self._sandbox.close()

    def __exit__(self, *_: object) -> None:
        self._sandbox.close()
        try:
            self._host.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._thread.join()
        self._host.close()
        self.client.close()

    def _serve(self) -> None:
        try:
            with self._host.makefile("rb") as requests:
                while True:
                    line = requests.readline(MAX_REQUEST_BYTES + 1)
                    if not line:
                        return
                    if not line.endswith(b"\n"):  # too long: the stream cannot be resynchronised
                        self._reply(refusal(f"a request is at most {MAX_REQUEST_BYTES} bytes"))
                        return
                    self._reply(self._answer(line))
        except OSError:
            return  # the sandbox is gone or the channel was shut down

    def _answer(self, line: bytes) -> dict[str, Any]:
        parsed = parse_request(line, self.tool_names)
        if isinstance(parsed, str):
            return refusal(parsed)
        observation = self.client.call(*parsed)
        if self.observe is not None:
            self.observe(parsed[1], observation)
        return {"status": observation.status, "body": observation.body}

    def _reply(self, reply: dict[str, Any]) -> None:
        self._host.sendall(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")
