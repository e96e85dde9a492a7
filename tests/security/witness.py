"""Host-side witnesses for escape tests: a listener nobody may reach, the members of a session."""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Listener:
    """A TCP and a UDP socket on one free loopback port that nobody is allowed to reach."""

    tcp: socket.socket
    udp: socket.socket

    @property
    def port(self) -> int:
        return int(self.tcp.getsockname()[1])

    def contacts(self) -> int:
        """Connections completed (the kernel accepts them before ``accept``) plus datagrams received."""
        count = 0
        for sock, receive in ((self.tcp, lambda s: s.accept()[0].close()), (self.udp, lambda s: s.recv(65536))):
            sock.setblocking(False)
            while True:
                try:
                    receive(sock)
                except BlockingIOError:
                    break
                count += 1
        return count


def live_members(session: int) -> list[int]:
    """Pids of live (not zombie) processes in ``session``, read from /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state ppid pgrp session ...
        if int(fields[3]) == session and fields[0] != "Z" and int(entry.name) != os.getpid():
            members.append(int(entry.name))
    return members


def survivors(session: int, patience_s: float = 10.0) -> list[int]:
    """Live members of ``session`` once a SIGKILL sent to them has had ``patience_s`` to land.

    A killed process dies asynchronously: this waits for the set to empty, and
    returns whoever is still alive at the end (``[]`` is the expected answer).
    """
    deadline = time.monotonic() + patience_s
    members = live_members(session)
    while members and time.monotonic() < deadline:
        time.sleep(0.05)
        members = live_members(session)
    return members
