"""Fixtures for escape tests: a listener, a victim process, a marker folder."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.witness import Listener


@pytest.fixture
def listener() -> Iterator[Listener]:
    """A loopback TCP+UDP listener on another port than the probe's."""
    tcp = socket.create_server(("127.0.0.1", 0), backlog=64)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", tcp.getsockname()[1]))
    yield Listener(tcp, udp)
    tcp.close()
    udp.close()


@pytest.fixture
def victim() -> Iterator[subprocess.Popen[bytes]]:
    """A host process the sandboxed code must not be able to signal."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the sandbox's temporary directory, for marker files that must never appear."""
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder
