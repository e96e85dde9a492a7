"""``ollama``: an agent loop on Ollama's native ``POST /api/chat``, as users' own code writes it.

Many Ollama users call the native API rather than its OpenAI-compatible door: messages,
``tools`` (OpenAI-style function tools), ``options`` (``temperature``, ``num_predict``) and
``stream`` (Ollama's default: NDJSON lines, the last one ``done: true`` with
``done_reason``, ``prompt_eval_count`` and ``eval_count``). A tool call arrives whole as
``message.tool_calls[].function.{name, arguments}``, its arguments an object and no call
id; its result goes back as ``{"role": "tool", "content": ..., "tool_name": ...}``.

The loop is the strict one of :mod:`probegate.harnesses.fc` (same system text, same
validity rule): a turn either calls tools with object arguments or answers in text.
Plain ``httpx``, no Ollama client: the ``ollama`` package is not a dependency, and the
wire is the same. The URL is the attempt's model base URL with ``/v1`` replaced by
``/api/chat`` (``{gateway}/r/{run}/{task}/{attempt}/api/chat``), which the gateway forwards
to the upstream's ``/api/chat`` and records (dialect ``ollama_chat``).

The embedded llama-cpp-python server has no ``/api/chat`` (HTTP 404): this harness needs
``--model-endpoint`` at an Ollama server.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from probegate.harnesses.base import Deadline, HarnessContext, HarnessResult, out_of_steps, timed_out
from probegate.harnesses.chat import ModelCallError, with_system
from probegate.harnesses.fc import FC_SYSTEM, call_problem
from probegate.harnesses.tools_client import ToolsClient


def native_chat_url(model_base_url: str) -> str:
    """The ``/api/chat`` URL next to an OpenAI base URL.

    ``http://gw/r/run/t01/0/v1`` -> ``http://gw/r/run/t01/0/api/chat``; a base URL
    without a trailing ``/v1`` gets ``/api/chat`` appended.
    """
    base = model_base_url.rstrip("/")
    if base.endswith("/v1"):
        base = base[: -len("/v1")]
    return f"{base}/api/chat"


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:500]
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return body["error"][:500]
    return json.dumps(body)[:500]


class _Reply:
    """One assistant turn read from ``/api/chat`` (streamed or not)."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.thinking: list[str] = []
        self.tool_calls: list[dict[str, Any]] = []
        self.done = False
        self.done_reason: str | None = None

    def add(self, obj: Any) -> None:
        """Add one answer object (an NDJSON line, or the whole non-streamed body).

        Raises:
            ModelCallError: the object is an error (``{"error": ...}``) or not an object.
        """
        if not isinstance(obj, dict):
            raise ModelCallError(f"the model server sent a line that is not a JSON object: {str(obj)[:200]}")
        if "error" in obj and "message" not in obj:
            raise ModelCallError(f"the model server reported an error: {str(obj['error'])[:500]}")
        message = obj.get("message") if isinstance(obj.get("message"), dict) else {}
        if isinstance(message.get("content"), str):
            self.content.append(message["content"])
        if isinstance(message.get("thinking"), str):
            self.thinking.append(message["thinking"])
        self.tool_calls.extend(c for c in message.get("tool_calls") or [] if isinstance(c, dict))
        if obj.get("done"):
            self.done = True
            self.done_reason = obj.get("done_reason")

    def message(self) -> dict[str, Any]:
        """The assistant message as Ollama's clients keep it in the history (its
        ``thinking`` included, as ``messages.append(response.message)`` does)."""
        turn: dict[str, Any] = {"role": "assistant", "content": "".join(self.content)}
        if "".join(self.thinking):
            turn["thinking"] = "".join(self.thinking)
        if self.tool_calls:
            turn["tool_calls"] = [
                {"function": {"name": (c.get("function") or {}).get("name"),
                              "arguments": (c.get("function") or {}).get("arguments")}}
                for c in self.tool_calls
            ]
        return turn


class OllamaHarness:
    """The strict tool-calling loop over Ollama's native chat API.

    Args:
        system: system text (the task's own system text is appended).
        stream: ask for an NDJSON stream (Ollama's default) or one JSON object.
        num_predict: ``options.num_predict``, the most tokens a turn may generate
            (``None``: left out, the server's default).
    """

    name = "ollama"

    def __init__(self, system: str = FC_SYSTEM, *, stream: bool = True, num_predict: int | None = None) -> None:
        self.system = system
        self.stream = stream
        self.num_predict = num_predict

    def run(self, ctx: HarnessContext) -> HarnessResult:
        """Drive one attempt; see :class:`~probegate.harnesses.base.Harness`."""
        deadline = Deadline(ctx)
        messages = with_system(ctx, self.system)
        url = native_chat_url(ctx.model_base_url)
        headers = {"authorization": f"Bearer {ctx.api_key}"}
        with httpx.Client(headers=headers, timeout=ctx.timeout) as http, \
                ToolsClient(ctx.tools_url, timeout=ctx.timeout) as tools:
            for step in range(1, ctx.max_steps + 1):
                try:
                    reply = self._chat(http, url, ctx, deadline, messages)
                except ModelCallError as exc:
                    return exc.result(step - 1)
                outcome = self._handle(reply, messages, tools, step)
                if outcome is not None:
                    return outcome
                if deadline.expired():
                    return timed_out(step)
        return out_of_steps(ctx.max_steps)

    def request_body(self, ctx: HarnessContext, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The ``/api/chat`` request body for the conversation so far."""
        options: dict[str, Any] = {"temperature": ctx.temperature}
        if self.num_predict is not None:
            options["num_predict"] = self.num_predict
        body: dict[str, Any] = {"model": ctx.model, "messages": messages, "stream": self.stream, "options": options}
        if ctx.tools:
            body["tools"] = ctx.tools
        return body

    def _chat(
        self, http: httpx.Client, url: str, ctx: HarnessContext, deadline: Deadline, messages: list[dict[str, Any]]
    ) -> _Reply:
        if deadline.expired():
            raise ModelCallError("the attempt ran out of time", timed_out=True)
        reply = _Reply()
        try:
            with http.stream("POST", url, json=self.request_body(ctx, messages), timeout=deadline.remaining()) as response:
                if response.status_code >= 400:
                    response.read()
                    raise ModelCallError(f"the model server answered HTTP {response.status_code}: {_error_text(response)}")
                if self.stream:
                    for line in response.iter_lines():
                        if line.strip():
                            reply.add(_json_line(line))
                else:
                    reply.add(_json_line(response.read().decode("utf-8", "replace")))
        except httpx.TimeoutException as exc:
            raise ModelCallError("the model server did not answer in time", timed_out=True) from exc
        except httpx.HTTPError as exc:
            raise ModelCallError(f"cannot reach the model server: {exc}") from exc
        if self.stream and not reply.done:
            raise ModelCallError("the model server's stream ended without its done: true line")
        return reply

    def _handle(
        self, reply: _Reply, messages: list[dict[str, Any]], tools: ToolsClient, step: int
    ) -> HarnessResult | None:
        turn = reply.message()
        calls = turn.get("tool_calls") or []
        if not calls:
            content = turn["content"].strip()
            if content:
                return HarnessResult(content, "answered", None, step)
            return HarnessResult(None, "parse_failure", "the reply held neither a tool call nor an answer", step)
        for call in calls:
            problem = call_problem(call)
            if problem:
                return HarnessResult(None, "parse_failure", problem, step)
        messages.append(turn)
        for call in calls:
            name, arguments = call["function"]["name"], call["function"]["arguments"]
            observation = tools.call(name, arguments if arguments not in (None, "") else {})
            messages.append({"role": "tool", "content": observation.text(), "tool_name": name})
        return None


def _json_line(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ModelCallError(f"the model server sent text that is not JSON: {text[:200]!r}") from exc
