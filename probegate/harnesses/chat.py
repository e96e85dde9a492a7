"""The model side of the reference harnesses: the real ``openai`` SDK, nothing more.

One place maps the SDK's exceptions to a :class:`ModelCallError` whose message goes
into the attempt's result, so harness loops stay short.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import openai

from probegate.harnesses.base import Deadline, HarnessContext, HarnessResult


class ModelCallError(Exception):
    """A chat completion failed (HTTP error, connection, timeout, no choices).

    Attributes:
        timed_out: the failure was the attempt's time running out.
    """

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out

    def result(self, steps: int) -> HarnessResult:
        """The attempt's result for this failure."""
        return HarnessResult(None, "timeout" if self.timed_out else "error", str(self), steps)


def model_client(ctx: HarnessContext) -> openai.OpenAI:
    """An OpenAI client pointed at the gateway; no SDK retries (each retry would be
    a second exchange the agent did not decide to make)."""
    return openai.OpenAI(base_url=ctx.model_base_url, api_key=ctx.api_key, max_retries=0, timeout=ctx.timeout)


@contextmanager
def _mapped_errors() -> Iterator[None]:
    try:
        yield
    except openai.APITimeoutError as exc:
        raise ModelCallError("the model server did not answer in time", timed_out=True) from exc
    except openai.APIStatusError as exc:
        raise ModelCallError(f"the model server answered HTTP {exc.status_code}: {str(exc.message)[:500]}") from exc
    except openai.APIConnectionError as exc:
        raise ModelCallError(f"cannot reach the model server: {exc}") from exc
    except openai.OpenAIError as exc:
        raise ModelCallError(f"model call failed: {exc}") from exc


def complete(
    client: openai.OpenAI,
    ctx: HarnessContext,
    deadline: Deadline,
    messages: list[dict[str, Any]],
    **options: Any,
) -> dict[str, Any]:
    """One non-streamed chat completion.

    Args:
        client: from :func:`model_client`.
        ctx: the attempt (model name, temperature).
        deadline: the attempt's time budget (bounds this request's timeout).
        messages: the conversation so far (plain dicts).
        options: extra request fields (``tools``, ``stop``, ...).

    Returns:
        The first choice's message as a plain dict (``content``, ``tool_calls``).

    Raises:
        ModelCallError: the request failed or the answer had no choices.
    """
    if deadline.expired():
        raise ModelCallError("the attempt ran out of time", timed_out=True)
    if options.get("tools") and "tool_choice" not in options:
        # "auto" is OpenAI's default, said out loud: llama-cpp-python's
        # chatml-function-calling leaves the tools out of the prompt without it
        options["tool_choice"] = "auto"
    with _mapped_errors():
        response = client.with_options(timeout=deadline.remaining()).chat.completions.create(
            model=ctx.model, messages=messages, temperature=ctx.temperature, **options  # type: ignore[arg-type]
        )
    if not response.choices:
        raise ModelCallError("the model server answered without choices")
    return response.choices[0].message.model_dump(exclude_none=True)


def with_system(ctx: HarnessContext, system: str) -> list[dict[str, Any]]:
    """The opening messages: the harness's system text (plus the task's) and the prompt."""
    text = f"{system}\n\n{ctx.system}" if ctx.system else system
    return [{"role": "system", "content": text}, {"role": "user", "content": ctx.prompt}]


def assistant_turn(message: dict[str, Any]) -> dict[str, Any]:
    """The assistant message to append to the history.

    ``content`` is sent as ``""`` rather than ``null`` next to ``tool_calls``:
    some servers (llama-cpp-python) answer HTTP 500 to a null content.
    """
    turn: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    if message.get("tool_calls"):
        turn["tool_calls"] = [
            {"id": c.get("id"), "type": "function", "function": c.get("function", {})}
            for c in message["tool_calls"]
        ]
    return turn
