"""Running mitmproxy with the probegate addon, programmatically (``DumpMaster``).

:class:`InterceptProxy` runs the proxy on its own event loop in a background
thread: ``start()`` returns once the proxy listens and its CA exists, ``stop()``
shuts it down. The CLI runs it in the foreground; tests run it on port 0 with a
temporary confdir. The CA certificate clients must trust is
``<confdir>/mitmproxy-ca-cert.pem``.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probegate.probes.intercept.addon import LOOPBACK, ProbegateIntercept
from probegate.probes.intercept.backend import ProbeBackend
from probegate.errors import UsageError

CA_FILE = "mitmproxy-ca-cert.pem"


class _Ready:
    """An addon whose ``running`` hook fires after the servers and the CA are up."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def running(self) -> None:
        self.event.set()


@dataclass
class InterceptProxy:
    """mitmproxy + :class:`~probegate.probes.intercept.addon.ProbegateIntercept` in a thread.

    Attributes:
        mapping: the mapping file.
        backend: how to reach the probes.
        host, port: where to listen (port 0 picks a free one).
        confdir: mitmproxy's configuration folder (holds the CA).
        allow: hosts passed through unchanged.
    """

    mapping: str | Path
    backend: ProbeBackend
    host: str = "127.0.0.1"
    port: int = 8080
    confdir: str | Path = "~/.mitmproxy"
    allow: tuple[str, ...] = LOOPBACK
    addon: ProbegateIntercept | None = None
    _master: Any = None
    _thread: threading.Thread | None = None
    _error: BaseException | None = None
    _ready: threading.Event = field(default_factory=threading.Event)

    @property
    def ca_path(self) -> Path:
        """The CA certificate clients must trust."""
        return Path(self.confdir).expanduser() / CA_FILE

    @property
    def url(self) -> str:
        """``http://host:port`` of the proxy (the real port once started)."""
        return f"http://{self.host}:{self.port}"

    def proxy_url(self, run: str, task: str, attempt: int | None = None) -> str:
        """The proxy URL carrying run/task(/attempt) credentials."""
        tail = f"%2F{attempt}" if attempt is not None else ""
        return f"http://{run}:{task}{tail}@{self.host}:{self.port}"

    async def _main(self) -> None:
        from mitmproxy import options
        from mitmproxy.tools.dump import DumpMaster

        opts = options.Options(confdir=str(Path(self.confdir).expanduser()))
        master = DumpMaster(opts, with_termlog=False, with_dumper=False)
        self.addon = self.addon or ProbegateIntercept(self.backend)
        master.addons.add(self.addon, _Ready(self._ready))
        opts.update(
            listen_host=self.host,
            listen_port=self.port,
            connection_strategy="lazy",
            probegate_map=str(self.mapping),
            probegate_allow=list(self.allow),
        )
        self._master = master
        try:
            await master.run()
        finally:
            # mitmproxy leaves its listening sockets to process exit; close them for an in-process stop
            proxyserver = master.addons.get("proxyserver")
            if proxyserver is not None:
                await proxyserver.servers.update([])

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported by start()
            self._error = exc
        finally:
            self._ready.set()

    def start(self, timeout: float = 30.0) -> InterceptProxy:
        """Start the proxy in a thread and wait until it listens.

        Raises:
            UsageError: the mapping or options are invalid, or the port is taken.
        """
        self._thread = threading.Thread(target=self._run, name="probegate-intercept", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout) or self._error is not None or not self._listening():
            self.stop()
            raise UsageError(f"the intercept proxy did not start: {self._error or 'no listening socket'}")
        return self

    def _listening(self) -> bool:
        proxyserver = self._master.addons.get("proxyserver") if self._master else None
        addrs = proxyserver.listen_addrs() if proxyserver else []
        if addrs:
            self.port = int(addrs[0][1])
        return bool(addrs)

    def wait(self) -> None:
        """Block until the proxy stops (Ctrl-C stops it)."""
        try:
            while self._thread is not None and self._thread.is_alive():
                self._thread.join(0.5)
        except KeyboardInterrupt:
            self.stop()

    def stop(self, timeout: float = 30.0) -> None:
        """Shut the proxy down (the addon's ``done`` closes the backend)."""
        if self._master is not None:
            self._master.shutdown()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
