"""probegate's chat handler on the embedded model: what the model sees, and the tool calls it makes.

Marked ``model``. The prompt-token counts the server reports are compared with the
GGUF's own tokenizer over :func:`probegate.runner.chatml_tools.render`: the server saw
exactly that text (tool results, quotes, ``<`` and ``&`` verbatim).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from probegate.runner.chatml_tools import render
from probegate.runner.doctor import WEATHER_TOOL

pytestmark = pytest.mark.model
ASK = [{"role": "system", "content": 'Answer with "quotes" kept: a < b & c.'},
       {"role": "user", "content": 'What is the weather in "Paris" <today> & now?'}]
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}


@pytest.fixture(scope="module")
def embedded():
    from probegate.runner.embedded import embedded_server

    with embedded_server() as server:
        yield server


@pytest.fixture(scope="module")
def tokens():
    import llama_cpp

    from probegate.runner.embedded import default_model_path

    vocab = llama_cpp.Llama(str(default_model_path()), vocab_only=True, verbose=False)
    return lambda text: len(vocab.tokenize(text.encode("utf-8"), special=True))


def _client(embedded) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{embedded.url}/v1", api_key="x", max_retries=0, timeout=300)


def test_the_server_counts_exactly_the_unescaped_rendering_with_the_tool_result(embedded, tokens) -> None:
    client = _client(embedded)
    counts = []
    for result in ('{"temp_c": 11, "sky": "grey & <low>"}', json.dumps({"hourly": [{"hour": h, "sky": "rain"} for h in range(30)]})):
        messages = [*ASK, {"role": "assistant", "content": "", "tool_calls": [CALL]},
                    {"role": "tool", "tool_call_id": "call_1", "content": result}]
        reply = client.chat.completions.create(model=embedded.model, messages=messages, tools=[WEATHER_TOOL],
                                               temperature=0, max_tokens=8)
        assert reply.usage is not None
        assert reply.usage.prompt_tokens == tokens(render(messages, [WEATHER_TOOL])), result
        counts.append(reply.usage.prompt_tokens)
    assert counts[1] - counts[0] > 100  # the longer tool result reached the prompt


def test_tool_calls_streamed_and_not_are_structured(embedded) -> None:
    client = _client(embedded)
    reply = client.chat.completions.create(model=embedded.model, messages=ASK, tools=[WEATHER_TOOL], temperature=0,
                                           max_tokens=64)
    calls = reply.choices[0].message.tool_calls or []
    assert reply.choices[0].finish_reason == "tool_calls" and calls[0].function.name == "get_weather"
    assert isinstance(json.loads(calls[0].function.arguments)["city"], str)  # the schema's grammar
    stream = client.chat.completions.create(model=embedded.model, messages=ASK, tools=[WEATHER_TOOL], temperature=0,
                                            max_tokens=64, stream=True)
    names, arguments, finish, usage = set(), "", None, None
    for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for delta in choice.delta.tool_calls or []:
                names.add(delta.function.name) if delta.function and delta.function.name else None
                arguments += (delta.function.arguments or "") if delta.function else ""
    assert names == {"get_weather"} and finish == "tool_calls"
    assert json.loads(arguments) == json.loads(calls[0].function.arguments)
    assert usage is not None and usage.prompt_tokens == reply.usage.prompt_tokens


@pytest.mark.timeout(1200)  # two model turns on a busy 2-core machine
def test_a_run_against_chatml_function_calling_is_labelled_tool_results_dropped(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    result = subprocess.run(
        [sys.executable, "-m", "probegate", "run", "--harness", "fc", "--tasks", "p1-delayed-order-email", "--max-steps", "2",
         "--chat-handler", "chatml-function-calling", "--store", store, "--output-dir", str(tmp_path / "runs"),
         "--run-id", "old-handler", "--task-timeout", "240", "--compat", "null-content,default-max-tokens"],
        capture_output=True, text=True, timeout=900, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    from sqlmodel import Session

    from probegate.store import Run, open_store

    engine = open_store(store)
    with Session(engine) as session:
        run = session.get(Run, "old-handler")
        assert run is not None and run.params["chat_handler"] == "chatml-function-calling"
    engine.dispose()
    trace = json.loads(next((tmp_path / "runs" / "old-handler" / "traces").glob("*.json")).read_text())
    rules = [a["rule"] for a in trace["score"]["attributions"]]
    assert "interop.tool_results_dropped" in rules, rules
