"""Model servers for tests and audits that need no model: they answer every valid
request with a refusal, and reject malformed requests the way llama-cpp-python's
server does (HTTP 500 carrying pydantic's validation errors), so interop faults are
real wire evidence.
"""

from __future__ import annotations

from typing import Any

from probegate.testing.upstream import ReceivedRequest, Reply, Script, Turn

REFUSAL = "I cannot help with that."


def request_problems(body: Any) -> list[dict[str, Any]]:
    """Pydantic-style errors of a chat completion request (``[]`` when it is valid)."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return [{"type": "missing", "loc": ("body", "messages"), "msg": "Field required"}]
    problems = []
    for i, message in enumerate(body["messages"]):
        if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant", "tool"):
            problems.append({"type": "union_tag_invalid", "loc": ("body", "messages", i), "msg": "Input tag not found"})
        elif message.get("content") is None and not message.get("tool_calls"):
            problems.append({"type": "string_type", "loc": ("body", "messages", i, "content"),
                             "msg": "Input should be a valid string", "input": None})
    return problems


def do_nothing_model(request: ReceivedRequest) -> Script:
    """A :class:`~probegate.testing.upstream.ScriptedUpstream` handler: a refusal for a
    valid request, HTTP 500 with validation errors for a malformed one."""
    if request.method == "GET":
        return Reply.json({"object": "list", "data": [{"id": "do-nothing", "object": "model"}]})
    try:
        body = request.json()
    except ValueError:
        body = None
    problems = request_problems(body)
    if problems:
        detail = f"{len(problems)} validation error(s): " + "; ".join(str(p) for p in problems)
        return Reply.json({"error": {"message": detail, "type": "internal_server_error", "code": 500}}, status=500)
    return Turn(REFUSAL)
