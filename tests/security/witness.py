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


def processes_with(token: str, name: str = "") -> list[int]:
    """Pids of live host processes whose command line holds ``token`` (this one excluded),
    and whose name starts with ``name``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token.encode() in cmdline and state != "Z" and proc_status(int(entry.name), "Name").startswith(name):
            found.append(int(entry.name))
    return found


def lingering(token: str, patience_s: float = 10.0) -> list[int]:
    """Processes holding ``token`` still alive after ``patience_s`` for a kill to land (``[]`` expected)."""
    deadline = time.monotonic() + patience_s
    alive = processes_with(token)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = processes_with(token)
    return alive


def host_listening_ports() -> set[int]:
    """TCP ports in LISTEN state in the host's network namespace (IPv4 and IPv6)."""
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[3] == "0A":
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def proc_status(pid: int, field: str) -> str:
    """One field of ``/proc/PID/status`` (``CapEff``, ``NSpid``, ...), read from the host."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return line.split(":", 1)[1].strip()
    raise KeyError(field)


def nice_of(pid: int) -> int:
    """The nice value of ``pid`` as the host kernel holds it."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])
