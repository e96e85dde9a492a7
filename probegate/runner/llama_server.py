"""llama-cpp-python's OpenAI-compatible server, with llama.cpp's extra weight buffers off
and probegate's chat handler registered.

``python -m probegate.runner.llama_server ARG...`` runs ``python -m llama_cpp.server ARG...``
after two changes: the chat handler ``probegate-chatml-tools``
(:mod:`probegate.runner.chat_handler`) is registered, so ``--chat_format
probegate-chatml-tools`` selects it; and every model loads with ``use_extra_bufts = False``,
so llama.cpp keeps the weights in plain CPU buffers instead of repacking them for a
special kernel.

Why: a native build of llama.cpp (what ``pip install llama-cpp-python`` compiles) on an
Intel CPU that reports AMX repacks the weights into an AMX buffer, and on some virtual
machines its AMX matrix kernel dies with ``SIGILL`` at the first token (``tileloadd`` in
``libggml-cpu.so``; seen on this project's 2-core Intel Xeon VM, where a plain AMX
program runs fine; upstream: ggml-org/llama.cpp#28756, #28328). With the extra buffers
off, every x86 CPU runs the same plain kernels. The bundled SmolLM2-135M is ``Q4_1``,
a type the AVX2/AVX-512 repacking does not cover, so on other CPUs nothing changes.
"""

from __future__ import annotations

import runpy
import sys
from typing import Any

from probegate.runner.chat_handler import register


def without_extra_buffers() -> None:
    """Make ``llama_cpp.llama_model_default_params()`` return ``use_extra_bufts = False``.

    ``llama_cpp.Llama`` (and so the server) starts from those defaults. A
    llama-cpp-python too old to have the field is left unchanged.
    """
    import llama_cpp.llama_cpp as lib

    fields = {name for name, *_ in lib.llama_model_params._fields_}
    if "use_extra_bufts" not in fields or getattr(lib.llama_model_default_params, "_probegate", False):
        return
    defaults = lib.llama_model_default_params

    def model_default_params() -> Any:
        params = defaults()
        params.use_extra_bufts = False
        return params

    model_default_params._probegate = True  # type: ignore[attr-defined]
    lib.llama_model_default_params = model_default_params


def main(argv: list[str]) -> None:
    """Run ``llama_cpp.server`` as ``__main__`` with ``argv`` as its arguments."""
    without_extra_buffers()
    register()
    sys.argv = ["llama_cpp.server", *argv]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
