"""``probegate doctor``: what a model server supports, and which shims a run needs.

A short series of requests, each probing one interop fault users hit with local
servers. Every answer is read with the gateway's own reassembler
(:mod:`probegate.wire.reassemble`), so "a tool call came back" means the same here as
in a scored run. Checks run in order; the one that can crash a server (a long
``maxLength`` in a tool schema) runs last.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from probegate.scorer.judge.wire_rules import CHARS_PER_TOKEN, RESPONSES_SHIM, ROUTE_MISSING, TOOL_RESULTS_SHIM
from probegate.wire.reassemble import reassemble
from probegate.wire.sse import parse_stream

Verdict = Literal["ok", "problem", "unsupported", "error"]

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
ASK = [
    {"role": "system", "content": "You answer by calling the get_weather tool."},
    {"role": "user", "content": "What is the weather in Paris right now? Call get_weather."},
]
NOTE_TOOL = {
    "type": "function",
    "function": {
        "name": "write_note",
        "description": "Save a note.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
}
HISTORY_CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
SHORT_RESULT = '{"temp_c": 11}'
LONG_RESULT = json.dumps({"city": "Paris", "hourly": [{"hour": h, "temp_c": 8 + h % 7, "sky": "overcast, light rain"}
                                                      for h in range(40)]})
#: The characters HTML escaping rewrites (``&#34;``, ``&lt;``, ``&amp;``, ``&gt;``, ``&#39;``).
ESCAPED = ('"', "<", "&", ">", "'")


@dataclass
class Check:
    """One doctor check's outcome.

    Attributes:
        name: short id (``tools``, ``null-content``, ...).
        question: what it asks of the server.
        verdict: ``ok``, ``problem`` (a known fault), ``unsupported`` or ``error``.
        evidence: what the wire showed (status, flags, token counts).
        shim: the ``--compat`` rule that works around a problem, if any.
    """

    name: str
    question: str
    verdict: Verdict
    evidence: str
    shim: str | None = None


@dataclass
class Doctor:
    """Runs the checks against ``base_url`` (``http://host:port``, with or without ``/v1``)."""

    base_url: str
    model: str | None = None
    timeout_s: float = 120.0
    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=120.0, trust_env=False))
    ready: Callable[[], object] | None = None
    prompt_tokens: dict[str, int | None] = field(default_factory=dict)

    @property
    def v1(self) -> str:
        base = self.base_url.rstrip("/")
        return base if base.endswith("/v1") else f"{base}/v1"

    def post(self, body: dict[str, Any], *, stream: bool = False) -> tuple[int | None, dict[str, Any] | None, str]:
        """Send one chat request; returns (status, reassembled turn, error or body excerpt)."""
        body = {"model": self.model or "default", "temperature": 0, **body}
        try:
            response = self.client.post(f"{self.v1}/chat/completions", json=body, timeout=self.timeout_s)
        except httpx.HTTPError as exc:
            return None, None, f"{type(exc).__name__}: {exc}"
        raw = response.content
        if stream and "event-stream" in response.headers.get("content-type", ""):
            events, _ = parse_stream([(0.0, raw)], "sse")
            result = reassemble(path="/v1/chat/completions", request=body, events=events)
        else:
            result = reassemble(path="/v1/chat/completions", request=body, body=raw)
        return response.status_code, result.completion, raw[:300].decode("utf-8", "replace")

    def run(self) -> list[Check]:
        """Every check, in order (the doctor's HTTP client is closed afterwards)."""
        try:
            return self._run()
        finally:
            self.client.close()

    def _run(self) -> list[Check]:
        if self.model is None:
            self.model = self._first_model()
        checks: list[Callable[[], Check]] = [
            self.plain, self.responses, self.tools, self.tools_without_choice, self.tools_without_system, self.tools_stream,
            self.null_content, self.object_arguments, self.tool_results, self.unescaped_content,
            self.max_completion_tokens, self.max_tokens_with_tools,
            self.parallel_tool_calls, self.long_context, self.long_max_length,
        ]
        results = []
        for check in checks:
            if self.ready is not None:  # the embedded server restarts after a crash
                self.ready()
            results.append(check())
        return results

    def _first_model(self) -> str | None:
        try:
            data = self.client.get(f"{self.v1}/models", timeout=10).json()
            return str(data["data"][0]["id"])
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError):
            return None

    # -- checks --------------------------------------------------------------------
    def plain(self) -> Check:
        status, turn, info = self.post({"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16})
        ok = status == 200 and turn is not None and bool(turn["assistant"]["content"])
        return Check("plain", "a plain chat completion", "ok" if ok else "error", _evidence(status, turn, info))

    def responses(self) -> Check:
        """A minimal ``POST /v1/responses``: a missing route (404, 405, 501) is a problem the
        ``responses-via-chat`` rule works around; an answer that is not a response too."""
        question = "the Responses API (POST /v1/responses)"
        body = {"model": self.model or "default", "input": "Say hello.", "max_output_tokens": 16}
        try:
            response = self.client.post(f"{self.v1}/responses", json=body, timeout=self.timeout_s)
        except httpx.HTTPError as exc:
            return Check("responses", question, "error", f"{type(exc).__name__}: {exc}")
        raw = response.content
        info = raw[:160].decode("utf-8", "replace")
        if response.status_code in ROUTE_MISSING:
            return Check("responses", question, "problem",
                         f"HTTP {response.status_code}: the server has no /v1/responses route ({info}); agents that "
                         "speak the Responses API (the OpenAI Agents SDK's default) fail on every turn",
                         RESPONSES_SHIM)
        if response.status_code >= 400:
            return Check("responses", question, "error", f"HTTP {response.status_code}: {info}")
        turn = reassemble(path="/v1/responses", request=body, body=raw).completion
        if turn is None:
            return Check("responses", question, "problem",
                         f"HTTP {response.status_code} but not a response object ({info})", RESPONSES_SHIM)
        return Check("responses", question, "ok", _evidence(response.status_code, turn, info))

    def tools(self) -> Check:
        status, turn, info = self.post({"messages": ASK, "tools": [WEATHER_TOOL], "tool_choice": "auto", "max_tokens": 128})
        self.prompt_tokens["with_choice"] = _prompt_tokens(turn)
        calls = _calls(turn)
        if status != 200:
            return Check("tools", "tools with tool_choice: auto (not streamed)", "error", _evidence(status, turn, info))
        verdict: Verdict = "ok" if calls else "problem"
        return Check("tools", "tools with tool_choice: auto (not streamed)", verdict,
                     _evidence(status, turn, info) if calls else "no structured tool call; " + _evidence(status, turn, info))

    def tools_without_choice(self) -> Check:
        status, turn, info = self.post({"messages": ASK, "tools": [WEATHER_TOOL], "max_tokens": 128})
        without = _prompt_tokens(turn)
        with_choice = self.prompt_tokens.get("with_choice")
        if status != 200:
            return Check("tools-no-choice", "tools without tool_choice", "error", _evidence(status, turn, info))
        plain = self._plain_prompt_tokens()
        if without is not None and plain is not None and with_choice and without <= plain + 5 < with_choice:
            return Check("tools-no-choice", "tools without tool_choice", "problem",
                         f"prompt tokens {without} = a request without tools ({plain}), {with_choice} with tool_choice: "
                         "the server drops the tools", "tool-choice-auto")
        return Check("tools-no-choice", "tools without tool_choice", "ok", f"prompt tokens {without} (with tool_choice {with_choice})")

    def tools_without_system(self) -> Check:
        question = "tools in a request without a system message"
        user_only = ASK[1:]
        status, turn, info = self.post({"messages": user_only, "tools": [WEATHER_TOOL], "tool_choice": "auto",
                                        "max_tokens": 128})
        if status != 200:
            return Check("tools-no-system", question, "error", _evidence(status, turn, info))
        with_tools = _prompt_tokens(turn)
        _, bare, _ = self.post({"messages": user_only, "max_tokens": 1})
        plain = _prompt_tokens(bare)
        if with_tools is not None and plain is not None and with_tools <= plain + 5:
            return Check("tools-no-system", question, "problem",
                         f"prompt tokens {with_tools} = the same request without tools ({plain}): the server "
                         "writes the tools into the system message and drops them without one", "system-for-tools")
        return Check("tools-no-system", question, "ok", f"prompt tokens {with_tools} (without tools {plain})")

    def _plain_prompt_tokens(self) -> int | None:
        _, turn, _ = self.post({"messages": ASK, "max_tokens": 1})
        return _prompt_tokens(turn)

    def tools_stream(self) -> Check:
        status, turn, info = self.post({"messages": ASK, "tools": [WEATHER_TOOL], "tool_choice": "auto", "stream": True,
                                        "max_tokens": 128}, stream=True)
        if status != 200:
            return Check("tools-stream", "tools, streamed", "error", _evidence(status, turn, info))
        if _calls(turn):
            return Check("tools-stream", "tools, streamed", "ok", _evidence(status, turn, info))
        return Check("tools-stream", "tools, streamed", "problem",
                     "streamed answer carries no structured tool call (plain text); use non-streamed requests with tools; "
                     + _evidence(status, turn, info))

    def null_content(self) -> Check:
        messages = [*ASK, {"role": "assistant", "content": None, "tool_calls": [HISTORY_CALL]},
                    {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 11}'}]
        status, turn, info = self.post({"messages": messages, "tools": [WEATHER_TOOL], "max_tokens": 32})
        return _accepted("null-content", "a tool-result round trip whose assistant message has content: null",
                         status, turn, info, "null-content")

    def object_arguments(self) -> Check:
        call = {**HISTORY_CALL, "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
        messages = [*ASK, {"role": "assistant", "content": "", "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 11}'}]
        status, turn, info = self.post({"messages": messages, "tools": [WEATHER_TOOL], "max_tokens": 32})
        return _accepted("object-args", "tool-call arguments in the history as an object", status, turn, info,
                         "args-as-string")

    def tool_results(self) -> Check:
        """A round trip with a short, then a long tool result: the prompt must grow with it."""
        question = "a tool result reaches the prompt (a longer one costs more prompt tokens)"
        counts = []
        for content in (SHORT_RESULT, LONG_RESULT):
            messages = [*ASK, {"role": "assistant", "content": "", "tool_calls": [HISTORY_CALL]},
                        {"role": "tool", "tool_call_id": "call_1", "content": content}]
            status, turn, info = self.post({"messages": messages, "max_tokens": 8})
            if status != 200:
                return Check("tool-results", question, "error", _evidence(status, turn, info))
            counts.append(_prompt_tokens(turn))
        short, long = counts
        if short is None or long is None:
            return Check("tool-results", question, "unsupported", "the server reports no usage.prompt_tokens")
        added = len(LONG_RESULT) - len(SHORT_RESULT)
        if (long - short) * CHARS_PER_TOKEN * 2 < added:
            return Check("tool-results", question, "problem",
                         f"a tool result {added} characters longer changed the prompt from {short} to {long} tokens: "
                         "the server drops tool results, the model never sees an observation", TOOL_RESULTS_SHIM)
        return Check("tool-results", question, "ok",
                     f"prompt tokens {short} -> {long} for a tool result {added} characters longer")

    def unescaped_content(self) -> Check:
        """User content with and without ``" < & > '``: each costs about one token unescaped,
        three or four as an HTML entity (``&#34;`` is ``&``, ``#``, ``34``, ``;``)."""
        question = "content with quotes, < and & reaches the prompt unescaped"
        words = [f"item{i}" for i in range(30)]
        marked = " ".join(f"{w} {ESCAPED[i % len(ESCAPED)]}" for i, w in enumerate(words))
        counts = []
        for content in (" ".join(words), marked):
            status, turn, info = self.post({"messages": [{"role": "user", "content": content}], "max_tokens": 1})
            if status != 200:
                return Check("unescaped-content", question, "error", _evidence(status, turn, info))
            counts.append(_prompt_tokens(turn))
        plain, with_marks = counts
        if plain is None or with_marks is None:
            return Check("unescaped-content", question, "unsupported", "the server reports no usage.prompt_tokens")
        extra, n = with_marks - plain, len(words)
        if extra >= 2 * n:
            return Check("unescaped-content", question, "problem",
                         f"{n} characters among \" < & > ' cost {extra} more prompt tokens ({extra / n:.1f} each; "
                         "unescaped, one costs about 1): the server HTML-escapes content (&#34;, &lt;, &amp;), so "
                         "the model reads quotes in text and in replayed tool-call arguments as entities; no shim "
                         "can undo it (serve another chat template)")
        return Check("unescaped-content", question, "ok",
                     f"{n} such characters cost {extra} more prompt tokens ({extra / n:.1f} each: unescaped)")

    def max_completion_tokens(self) -> Check:
        status, turn, info = self.post({"messages": [{"role": "user", "content": "Count to fifty."}], "max_completion_tokens": 8})
        check = _accepted("max_completion_tokens", "max_completion_tokens instead of max_tokens", status, turn, info,
                          "max-tokens-alias")
        produced = ((turn or {}).get("usage") or {}).get("completion_tokens")
        if check.verdict == "ok" and isinstance(produced, int) and produced > 8:
            return Check(check.name, check.question, "problem",
                         f"asked for 8 tokens, got {produced}: the limit is ignored", "max-tokens-alias")
        return check

    def max_tokens_with_tools(self) -> Check:
        messages = [{"role": "system", "content": "You save notes with the write_note tool."},
                    {"role": "user", "content": "Save a note whose text is the numbers from 1 to 60, comma-separated."}]
        status, turn, info = self.post({"messages": messages, "tools": [NOTE_TOOL], "tool_choice": "auto",
                                        "max_tokens": 8})
        check = _accepted("max-tokens-with-tools", "max_tokens when tools are offered", status, turn, info)
        produced = ((turn or {}).get("usage") or {}).get("completion_tokens")
        if check.verdict == "ok" and isinstance(produced, int) and produced > 8:
            return Check(check.name, check.question, "problem",
                         f"asked for 8 tokens, got {produced}: the limit is ignored when tools are offered, so one "
                         "turn can run to the end of the context window (bound-strings bounds tool-call arguments; "
                         "--task-timeout the rest)", "bound-strings")
        return check

    def parallel_tool_calls(self) -> Check:
        status, turn, info = self.post({"messages": ASK, "tools": [WEATHER_TOOL], "tool_choice": "auto",
                                        "parallel_tool_calls": False, "max_tokens": 64})
        return _accepted("parallel_tool_calls", "the parallel_tool_calls parameter", status, turn, info,
                         "drop-params=parallel_tool_calls")

    def long_context(self) -> Check:
        filler = " ".join(f"Line {i}: the quick brown fox jumps over the lazy dog." for i in range(1200))
        messages = [{"role": "user", "content": filler + "\nReply with the word done."}]
        status, turn, info = self.post({"messages": messages, "max_tokens": 8})
        sent_words = len(filler.split())
        tokens = _prompt_tokens(turn)
        if status is None:
            return Check("long-context", f"a ~{sent_words}-word prompt", "error", info)
        if status >= 400:
            return Check("long-context", f"a ~{sent_words}-word prompt", "unsupported",
                         f"HTTP {status}: refused (context size exceeded?): {info[:120]}")
        if tokens is not None and tokens < sent_words // 2:
            return Check("long-context", f"a ~{sent_words}-word prompt", "problem",
                         f"only {tokens} prompt tokens counted for ~{sent_words} words: the prompt was cut silently")
        return Check("long-context", f"a ~{sent_words}-word prompt", "ok", f"{tokens} prompt tokens counted")

    def long_max_length(self) -> Check:
        tool = json.loads(json.dumps(WEATHER_TOOL))
        tool["function"]["parameters"]["properties"]["note"] = {"type": "string", "maxLength": 20000}
        status, turn, info = self.post({"messages": ASK, "tools": [tool],
                                        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
                                        "max_tokens": 64})
        if status is None:
            return Check("long-max-length", "a tool schema with maxLength 20000 (last: may crash the server)", "problem",
                         f"the server dropped the connection ({info[:80]})", "cap-max-length")
        return _accepted("long-max-length", "a tool schema with maxLength 20000 (last: may crash the server)",
                         status, turn, info, "cap-max-length")


def _calls(turn: dict[str, Any] | None) -> list[dict[str, Any]]:
    return list(((turn or {}).get("assistant") or {}).get("tool_calls") or [])


def _prompt_tokens(turn: dict[str, Any] | None) -> int | None:
    value = ((turn or {}).get("usage") or {}).get("prompt_tokens")
    return value if isinstance(value, int) else None


def _evidence(status: int | None, turn: dict[str, Any] | None, info: str) -> str:
    if status is None:
        return info
    parts = [f"HTTP {status}"]
    calls = _calls(turn)
    if calls:
        parts.append("tool call " + ", ".join(f"{c['name']}({c['arguments_raw']})" for c in calls))
    if turn and turn.get("flags"):
        parts.append("flags " + ", ".join(turn["flags"]))
    if status >= 400:
        parts.append(info[:160])
    return "; ".join(parts)


def _accepted(name: str, question: str, status: int | None, turn: dict[str, Any] | None, info: str,
              shim: str | None = None) -> Check:
    if status is None:
        return Check(name, question, "problem", f"the server dropped the connection ({info[:80]})", shim)
    if status >= 400:
        return Check(name, question, "problem", f"HTTP {status}: {info[:160]}", shim)
    return Check(name, question, "ok", _evidence(status, turn, info))


def recommended_shims(checks: list[Check]) -> list[str]:
    """The ``--compat`` rules the problems call for, in check order, without repeats."""
    out: list[str] = []
    for check in checks:
        if check.verdict == "problem" and check.shim and check.shim not in out:
            out.append(check.shim)
    return out
