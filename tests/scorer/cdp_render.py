"""Rendering a page in headless Chromium over the DevTools protocol (test helper).

Starts Debian's ``chromium`` with a throwaway profile and no network features,
opens a page, waits for it to load, and returns the console errors, uncaught
exceptions and a PNG screenshot. Uses the ``websockets`` sync client.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
    "--window-size=1280,1600",
)


def chromium_binary() -> str | None:
    """The Chromium executable, or ``None`` when it is not installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class PageRender:
    """What a page did while loading."""

    errors: list[str] = field(default_factory=list)
    screenshot: bytes = b""
    evaluated: Any = None


class _Session:
    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        msg_id = next(self.ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            msg = json.loads(self.ws.recv(timeout=max(0.1, end - time.monotonic())))
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg.get("result") or {})
            self.events.append(msg)
        raise TimeoutError(method)

    def wait_event(self, name: str, timeout: float = 30.0) -> None:
        if any(e.get("method") == name for e in self.events):
            return
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            msg = json.loads(self.ws.recv(timeout=max(0.1, end - time.monotonic())))
            self.events.append(msg)
            if msg.get("method") == name:
                return
        raise TimeoutError(name)


def _errors(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for e in events:
        params = e.get("params") or {}
        if e.get("method") == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails") or {}
            out.append("exception: " + str((details.get("exception") or {}).get("description") or details.get("text")))
        elif e.get("method") == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            out.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
        elif e.get("method") == "Log.entryAdded" and (params.get("entry") or {}).get("level") == "error":
            entry = params["entry"]
            out.append(f"log: {entry.get('text')} ({entry.get('url', '')})")
    return out


def _devtools_url(profile: Path, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> str:
    port_file = profile / "DevToolsActivePort"
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if port_file.exists():
            lines = port_file.read_text().split()
            if len(lines) >= 2:
                return f"ws://127.0.0.1:{lines[0]}{lines[1]}"
        if proc.poll() is not None:
            raise RuntimeError(f"chromium exited with {proc.returncode}")
        time.sleep(0.05)
    raise TimeoutError("chromium did not open its DevTools port")


def render(page: Path, profile: Path, settle_expression: str = "true", binary: str | None = None) -> PageRender:
    """Open ``page`` (a file) headless; collect errors, evaluate ``settle_expression``
    after load, and take a full-page screenshot."""
    exe = binary or chromium_binary()
    if exe is None:
        raise FileNotFoundError("chromium")
    proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with connect(_devtools_url(profile, proc), max_size=64 * 2**20, open_timeout=20) as ws:
            browser = _Session(ws)
            target = browser.call("Target.createTarget", url="about:blank")["targetId"]
            session_id = browser.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            return _drive(browser, session_id, page, settle_expression)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _drive(browser: _Session, session_id: str, page: Path, settle_expression: str) -> PageRender:
    def call(method: str, **params: Any) -> dict[str, Any]:
        msg_id = next(browser.ids)
        browser.ws.send(json.dumps({"id": msg_id, "sessionId": session_id, "method": method, "params": params}))
        end = time.monotonic() + 60
        while time.monotonic() < end:
            msg = json.loads(browser.ws.recv(timeout=max(0.1, end - time.monotonic())))
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg.get("result") or {})
            browser.events.append(msg)
        raise TimeoutError(method)

    for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
        call(domain)
    call("Page.navigate", url=page.resolve().as_uri())
    browser.wait_event("Page.loadEventFired", timeout=60)
    evaluated = None
    end = time.monotonic() + 30
    while time.monotonic() < end:
        evaluated = call("Runtime.evaluate", expression=settle_expression, returnByValue=True).get("result", {}).get("value")
        if evaluated:
            break
        time.sleep(0.1)
    shot = call("Page.captureScreenshot", format="png")["data"]
    return PageRender(errors=_errors(browser.events), screenshot=base64.b64decode(shot), evaluated=evaluated)
