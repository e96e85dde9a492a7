"""probegate's chat handler for llama-cpp-python's server (``--chat_format probegate-chatml-tools``).

It renders the conversation with :mod:`probegate.runner.chatml_tools` (tool results and
content reach the model verbatim) and generates the assistant's turn in up to three
kinds of grammar-constrained completions, reusing the KV cache of the one prompt:

1. the choice (``tool_choice: "auto"``, or no ``tool_choice`` with tools: OpenAI's
   default): ``message:`` or ``functions.NAME:`` for an offered NAME;
2. a tool call's arguments, under the grammar of the tool's JSON Schema;
3. after each call: end the turn, or ``functions.NAME:`` again (at most
   :data:`MAX_CALLS` calls; a call that repeats one of the same turn, name and
   arguments, ends the turn instead: a 135M model otherwise repeats its first call
   until the limit).

``tool_choice: "required"`` skips the ``message:`` branch, a named function skips the
choice, ``"none"`` (or no tools) generates text only. ``max_tokens`` bounds every token
the turn generates, arguments included. Streamed requests stream for real, tool calls
included (one chunk per generated token), and end with a chunk that carries
``finish_reason`` and ``usage``. ``usage.prompt_tokens`` is the rendered conversation's
length in tokens; ``usage.completion_tokens`` counts every generated token.

:func:`register` adds the handler to llama-cpp-python's registry; the launcher
(:mod:`probegate.runner.llama_server`) calls it before the server starts.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from probegate.runner.chatml_tools import (
    CALL_PREFIX,
    END,
    MESSAGE,
    arguments_schema,
    called_name,
    choice_grammar,
    next_call_grammar,
    parameters_of,
    render,
    tool_names,
)

NAME = "probegate-chatml-tools"
#: Tool calls one assistant turn may hold.
MAX_CALLS = 8
#: Tokens a choice (``functions.NAME:``) may take.
CHOICE_TOKENS = 48


def register() -> None:
    """Register the handler as ``NAME`` in llama-cpp-python (idempotent)."""
    from llama_cpp import llama_chat_format

    registry = llama_chat_format.LlamaChatCompletionHandlerRegistry()
    registry.register_chat_completion_handler(NAME, chatml_tools, overwrite=True)


def resolve_choice(tool_choice: Any, function_call: Any, names: list[str]) -> str:
    """What the turn may do (pure): ``none``, ``auto``, ``required`` or ``call:NAME``.

    No tools means ``none``; tools without ``tool_choice`` mean ``auto`` (OpenAI's
    default). A legacy ``function_call`` counts when ``tool_choice`` is absent.

    Raises:
        ValueError: a named function that is not offered.
    """
    choice = tool_choice if tool_choice is not None else function_call
    if not names or choice == "none":
        return "none"
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        if name not in names:
            raise ValueError(f"tool_choice names {name!r}, which is not among the offered tools {names}")
        return f"call:{name}"
    return "required" if choice == "required" else "auto"


@lru_cache(maxsize=128)
def _grammar(text: str, *, schema: bool = False) -> Any:
    from llama_cpp import llama_grammar

    if not schema:
        return llama_grammar.LlamaGrammar.from_string(text, verbose=False)
    try:
        return llama_grammar.LlamaGrammar.from_json_schema(text, verbose=False)
    except Exception:  # a schema the converter cannot read: any JSON object still parses
        return llama_grammar.LlamaGrammar.from_string(llama_grammar.JSON_GBNF, verbose=False)


@dataclass
class _Turn:
    """One assistant turn being generated: the model, sampling options and token counts."""

    llama: Any
    sampling: dict[str, Any]
    stop: list[str]
    max_tokens: int | None
    prompt_tokens: int
    model: str
    generated: int = 0
    id: str = field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex}")
    created: int = field(default_factory=lambda: int(time.time()))

    def budget(self, cap: int | None = None) -> int | None:
        left = None if self.max_tokens is None else max(self.max_tokens - self.generated, 0)
        return cap if left is None else (left if cap is None else min(cap, left))

    def complete(self, prompt: str, *, grammar: Any = None, stop: list[str] | None = None,
                 cap: int | None = None) -> tuple[str, str]:
        """One non-streamed completion; ``(text, finish_reason)``."""
        budget = self.budget(cap)
        if budget == 0:
            return "", "length"
        out = self.llama.create_completion(prompt=prompt, grammar=grammar, stop=stop or self.stop,
                                           max_tokens=budget if budget is not None else -1, stream=False,
                                           **self.sampling)
        self.generated += int(out["usage"]["completion_tokens"])
        choice = out["choices"][0]
        return str(choice["text"]), str(choice.get("finish_reason") or "stop")

    def pieces(self, prompt: str, *, grammar: Any = None) -> Iterator[tuple[str, str | None]]:
        """One streamed completion: ``(text piece, finish_reason or None)`` per token."""
        budget = self.budget()
        if budget == 0:
            yield "", "length"
            return
        for chunk in self.llama.create_completion(prompt=prompt, grammar=grammar, stop=self.stop,
                                                  max_tokens=budget if budget is not None else -1, stream=True,
                                                  **self.sampling):
            choice = chunk["choices"][0]
            self.generated += 1 if choice.get("text") else 0
            yield str(choice.get("text") or ""), choice.get("finish_reason")

    def usage(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.generated,
                "total_tokens": self.prompt_tokens + self.generated}

    def response(self, message: dict[str, Any], finish_reason: str) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "message": {"role": "assistant", **message}, "logprobs": None,
                             "finish_reason": finish_reason}],
                "usage": self.usage()}

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                               "model": self.model,
                               "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                            "finish_reason": finish_reason}]}
        if finish_reason is not None:
            out["usage"] = self.usage()
        return out


def chatml_tools(
    llama: Any,
    messages: list[dict[str, Any]],
    functions: list[dict[str, Any]] | None = None,
    function_call: Any = None,
    tools: list[dict[str, Any]] | None = None,
    tool_choice: Any = None,
    stream: bool = False,
    stop: str | list[str] | None = None,
    response_format: dict[str, Any] | None = None,
    max_tokens: int | None = None,
    model: str | None = None,
    grammar: Any = None,
    logprobs: bool | None = None,
    top_logprobs: int | None = None,
    **options: Any,
) -> dict[str, Any] | Iterator[dict[str, Any]]:
    """A llama-cpp-python chat completion handler (the registry's calling convention).

    Returns:
        A ``chat.completion`` dict, or an iterator of ``chat.completion.chunk`` dicts
        when ``stream`` is true.

    Raises:
        ValueError: ``tool_choice`` names a tool that is not offered; the prompt does
            not fit the context window (llama-cpp-python's message).
    """
    offered = list(tools or []) or [{"type": "function", "function": f} for f in functions or []]
    names = tool_names(offered)
    choice = resolve_choice(tool_choice, function_call, names)
    prompt = render(messages, offered or None)
    extra_stop = [stop] if isinstance(stop, str) else list(stop or [])
    sampling = {k: v for k, v in options.items() if k in _SAMPLING and v is not None}
    turn = _Turn(llama, sampling, [END, *extra_stop], max_tokens if max_tokens and max_tokens > 0 else None,
                 len(llama.tokenize(prompt.encode("utf-8"), special=True)), model or str(llama.model_path))
    if response_format and response_format.get("type") == "json_object" and grammar is None:
        from llama_cpp import llama_grammar

        grammar = _grammar(llama_grammar.JSON_GBNF)
    if choice == "none":
        return _message(turn, prompt + (f"{MESSAGE}\n" if offered else ""), grammar, stream)
    if choice.startswith("call:"):
        first: str | None = choice[len("call:"):]
    else:
        text, _ = turn.complete(prompt, grammar=_grammar(choice_grammar(names, allow_message=choice == "auto")),
                                stop=[":"], cap=CHOICE_TOKENS)
        first = called_name(text)
        if first not in names:
            return _message(turn, prompt + f"{MESSAGE}\n", grammar, stream)
    assert first is not None
    calls = _calls_stream(turn, prompt, first, offered, names)
    return calls if stream else _collect(turn, calls)


_SAMPLING = ("temperature", "top_p", "top_k", "min_p", "typical_p", "presence_penalty", "frequency_penalty",
             "repeat_penalty", "tfs_z", "mirostat_mode", "mirostat_tau", "mirostat_eta", "logits_processor", "seed",
             "logit_bias")


def _message(turn: _Turn, prompt: str, grammar: Any, stream: bool) -> dict[str, Any] | Iterator[dict[str, Any]]:
    if not stream:
        text, finish = turn.complete(prompt, grammar=grammar)
        return turn.response({"content": text}, finish)

    def chunks() -> Iterator[dict[str, Any]]:
        yield turn.chunk({"role": "assistant", "content": ""})
        finish = "stop"
        for piece, reason in turn.pieces(prompt, grammar=grammar):
            if piece:
                yield turn.chunk({"content": piece})
            finish = reason or finish
        yield turn.chunk({}, finish)

    return chunks()


def _calls_stream(turn: _Turn, prompt: str, name: str, tools: list[dict[str, Any]],
                  names: list[str]) -> Iterator[dict[str, Any]]:
    """The tool calls as chunks: the first call's arguments token by token, each later
    call whole once generated (a call that repeats one of this turn ends the turn)."""
    yield turn.chunk({"role": "assistant", "content": None})
    so_far = prompt + f"{CALL_PREFIX}{name}:\n"
    call_id = _call_id()
    yield turn.chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                      "function": {"name": name, "arguments": ""}}]})
    arguments, finish = "", "tool_calls"
    for piece, reason in turn.pieces(so_far, grammar=_arguments_grammar(tools, name)):
        if piece:
            arguments += piece
            yield turn.chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        finish = "length" if reason == "length" else finish
    made = {(name, arguments.strip())}
    so_far += arguments.strip()
    while finish != "length" and len(made) < MAX_CALLS:
        text, _ = turn.complete(so_far, grammar=_grammar(next_call_grammar(names)), stop=[":"], cap=CHOICE_TOKENS)
        name = str(called_name(text))
        if name not in names:
            break
        head = f"\n{CALL_PREFIX}{name}:\n"
        arguments, reason = turn.complete(so_far + head, grammar=_arguments_grammar(tools, name))
        if (name, arguments.strip()) in made:
            break
        finish = "length" if reason == "length" else finish
        made.add((name, arguments.strip()))
        so_far += head + arguments.strip()
        yield turn.chunk({"tool_calls": [{"index": len(made) - 1, "id": _call_id(), "type": "function",
                                          "function": {"name": name, "arguments": arguments.strip()}}]})
    yield turn.chunk({}, finish)


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


def _arguments_grammar(tools: list[dict[str, Any]], name: str) -> Any:
    return _grammar(json.dumps(arguments_schema(parameters_of(tools, name))), schema=True)


def _collect(turn: _Turn, chunks: Iterator[dict[str, Any]]) -> dict[str, Any]:
    """The non-streamed response the chunks add up to."""
    calls: list[dict[str, Any]] = []
    finish = "tool_calls"
    for chunk in chunks:
        choice = chunk["choices"][0]
        for part in choice["delta"].get("tool_calls") or []:
            if "id" in part:
                calls.append({"id": part["id"], "type": "function",
                              "function": {"name": part["function"]["name"],
                                           "arguments": part["function"]["arguments"]}})
            else:
                calls[part["index"]]["function"]["arguments"] += part["function"]["arguments"]
        finish = choice["finish_reason"] or finish
    for call in calls:
        call["function"]["arguments"] = call["function"]["arguments"].strip()
    return turn.response({"content": None, "tool_calls": calls}, finish)
