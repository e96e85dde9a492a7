"""The embedded server's launcher loads models without llama.cpp's extra weight buffers.

On an Intel CPU that reports AMX, llama.cpp's AMX buffer crashed the server with SIGILL
at the first token on this project's VM; the model smoke test is the end-to-end proof.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("llama_cpp")

CHECK = """
import llama_cpp.llama_cpp as lib
before = lib.llama_model_default_params().use_extra_bufts
from probegate.runner.llama_server import without_extra_buffers
without_extra_buffers()
without_extra_buffers()  # idempotent: still one wrapper
params = lib.llama_model_default_params()
print(before, params.use_extra_bufts, params.no_host)
"""


def test_models_load_without_extra_buffers() -> None:
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.split() == ["True", "False", "False"], out.stdout + out.stderr


def test_the_launcher_passes_its_arguments_to_the_llama_cpp_server() -> None:
    proc = subprocess.run([sys.executable, "-m", "probegate.runner.llama_server", "--help"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and "--chat_format" in proc.stdout, proc.stderr


def test_the_launcher_registers_probegate_s_chat_handler() -> None:
    check = ("import runpy, sys\n"
             "from llama_cpp import llama_chat_format as f\n"
             "runpy.run_module = lambda *a, **k: print(f.get_chat_completion_handler('probegate-chatml-tools').__name__)\n"
             "from probegate.runner import llama_server\n"
             "llama_server.main(['--help'])\n")
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "chatml_tools", out.stdout + out.stderr


def test_the_server_command_names_the_chat_handler_and_unknown_ones_are_refused() -> None:
    from pathlib import Path

    from probegate.errors import UsageError
    from probegate.runner.embedded import CHAT_HANDLERS, check_chat_handler, server_command

    def chat_format(command: list[str]) -> str:
        return command[command.index("--chat_format") + 1]

    assert chat_format(server_command(Path("m.gguf"), 1, n_ctx=8, alias="m", threads=1)) == "probegate-chatml-tools"
    assert chat_format(server_command(Path("m.gguf"), 1, n_ctx=8, alias="m", threads=1,
                                      chat_handler="chatml-function-calling")) == "chatml-function-calling"
    assert CHAT_HANDLERS == ("probegate-chatml-tools", "chatml-function-calling")
    with pytest.raises(UsageError, match="--chat-handler must be one of"):
        check_chat_handler("chatml")


@pytest.mark.parametrize("argv", [
    ["run", "--harness", "fc", "--chat-handler", "chatml", "--tasks", "p0-weather-berlin"],
    ["run", "--harness", "fc", "--chat-handler", "chatml-function-calling", "--model-endpoint", "http://127.0.0.1:9",
     "--model", "m"],
    ["doctor", "--chat-handler", "chatml-function-calling", "--model-endpoint", "http://127.0.0.1:9"],
])
def test_a_bad_chat_handler_option_is_one_line_and_exit_2(argv: list[str]) -> None:
    out = subprocess.run([sys.executable, "-m", "probegate", *argv], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "--chat-handler" in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
