"""MCP tool calls read back from recorded JSON-RPC exchanges (pure).

An MCP client (streamable HTTP) POSTs one JSON-RPC message per request, or, in older
protocol versions, a batch (a JSON array). The answer is a JSON body or an SSE stream
whose ``data`` lines are JSON-RPC messages; a response names its request by ``id``.
:func:`tool_calls` pairs each ``tools/call`` request of an exchange with its response
and says what came back: a ``CallToolResult`` (``isError`` makes it an error) or a
JSON-RPC error. A request whose answer never came (the client left, the server died)
is still a call the agent made.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

CallStatus = Literal["ok", "error"]


@dataclass(frozen=True)
class McpToolCall:
    """One ``tools/call`` as recorded.

    Attributes:
        id: the JSON-RPC request id.
        tool: ``params.name``.
        args: ``params.arguments`` (``None`` when absent or not an object).
        raw_args: the arguments as compact JSON text (what the agent sent, re-serialised).
        status: ``ok``, or ``error`` for an ``isError`` result, a JSON-RPC error or no answer.
        result: ``structuredContent`` when given; else the text content (parsed as JSON
            when it is JSON; a list when there are several blocks); the JSON-RPC
            ``error`` object; or ``{"error": "no_answer"}``.
    """

    id: Any
    tool: str
    args: dict[str, Any] | None
    raw_args: str
    status: CallStatus
    result: Any


def messages(body: Any) -> list[dict[str, Any]]:
    """The JSON-RPC messages in a parsed body: one object, or the objects of a batch."""
    found = body if isinstance(body, list) else [body]
    return [m for m in found if isinstance(m, dict) and m.get("jsonrpc") == "2.0"]


def stream_messages(events: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The JSON-RPC messages of stored SSE events (``{"data": str, ...}``); others skipped."""
    out: list[dict[str, Any]] = []
    for event in events or []:
        try:
            out.extend(messages(json.loads(str(event.get("data") or ""))))
        except ValueError:
            continue
    return out


def _content_value(content: Any) -> Any:
    texts = [c.get("text") for c in content if isinstance(c, dict)] if isinstance(content, list) else []
    values = []
    for text in texts:
        try:
            values.append(json.loads(text) if isinstance(text, str) else text)
        except ValueError:
            values.append(text)
    return values[0] if len(values) == 1 else values


def _outcome(response: dict[str, Any] | None) -> tuple[CallStatus, Any]:
    if response is None:
        return "error", {"error": "no_answer"}
    if "error" in response:
        return "error", response["error"]
    result = response.get("result") if isinstance(response.get("result"), dict) else {}
    value = result.get("structuredContent")
    if value is None:
        value = _content_value(result.get("content"))
    return ("error" if result.get("isError") else "ok"), value


def tool_calls(request_body: Any, response_messages: list[dict[str, Any]]) -> list[McpToolCall]:
    """The ``tools/call`` requests of one exchange with their outcomes.

    Args:
        request_body: the parsed request body (a message or a batch).
        response_messages: the JSON-RPC messages that came back (:func:`messages` of a
            JSON body, :func:`stream_messages` of an SSE stream).
    """
    answers = {repr(m.get("id")): m for m in response_messages if "method" not in m and "id" in m}
    out = []
    for message in messages(request_body):
        if message.get("method") != "tools/call" or "id" not in message:
            continue
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        args = params.get("arguments")
        status, result = _outcome(answers.get(repr(message["id"])))
        out.append(McpToolCall(
            id=message["id"],
            tool=str(params.get("name") or ""),
            args=args if isinstance(args, dict) else None,
            raw_args=json.dumps(args, ensure_ascii=False),
            status=status,
            result=result,
        ))
    return out
