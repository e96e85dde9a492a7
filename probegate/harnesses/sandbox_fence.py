"""The code sandbox's second layer: a PEP 578 audit hook, in plain standard-library Python.

The first layer is the operating system (:mod:`probegate.harnesses.sandbox_isolation`:
bubblewrap namespaces, a seccomp filter, resource limits); this fence runs inside it
and stops what the model's code should never try, with a reason the run reports.
This module's source is sent whole into the sandboxed interpreter (see
:mod:`probegate.harnesses.sandbox_prelude`), so it imports nothing outside the standard library.
Tests import it too and table-test :func:`make_check` in-process.

The model's code shares the interpreter with the hook, so everything a decision
depends on is bound inside the closures :func:`make_check` and :func:`make_hook`
return, never looked up at call time: code that rebinds this module's globals,
patches ``os.path`` or ``builtins``, or passes a ``str``/``tuple`` subclass with a
lying ``__eq__`` sees the same decisions. The hook only calls C functions on
exact ``str``/``bytes``/``int``/``tuple`` values, so no code of the model's runs
while it decides.

:func:`disarm` replaces with refusals what the interpreter can do without raising
an audit event and that would reach past the sandbox: ``os.pidfd_open`` (a signal
to any process), ``os.mkfifo``/``os.mknod`` (file-system writes), ``setpriority``
and the ``sched_set*`` calls (other processes), ``nice``, ``setsid``/``setpgid``
and the ``set*id`` calls, ``memfd_create``, ``unshare``/``setns``,
``time.clock_settime``, ``_posixsubprocess.fork_exec`` (loaded first, so ``import
subprocess`` still works and ``subprocess.Popen`` is refused by its own event) and
``_imp.create_builtin``, which would hand out fresh copies of those modules.
``pwd``/``grp`` look-ups (the password and group files) answer as if the databases
were empty; ``_ssl`` (which reads certificate files) cannot be imported.

A native module is checked by every part of its dotted name and by what C sees
of it (the part before a NUL: ``_posixsubprocess\\x00c`` initialises as
``_posixsubprocess``), and by its file's name; any control character in a module
name is a stop.

What stays out of reach of any audit hook: crafted bytecode (``marshal.loads`` is
also how imports read ``.pyc`` files and ``code.replace`` how ``types.coroutine``
marks a coroutine, so neither can be refused) and bugs in C code. The fence keeps
model-written code in its lane and makes escapes visible; it is not a boundary
against a determined attacker (:pep:`578` says so): the operating-system layer is.

The code has no network: tools are called over one channel the prelude opened
before the hook was installed, so every socket operation but creating a Unix
socket (``asyncio``'s self-pipe is a ``socketpair``) ends the process. A stop is
reported on the verdict descriptor the harness reads from outside; the exit
status is the stop's even when that descriptor was closed by the code.
"""

from __future__ import annotations

import builtins
import os
import posix
import socket
import sys
from collections.abc import Callable
from typing import Any

#: Audit events that end the process, by prefix.
BLOCKED_EVENTS = (
    "subprocess.", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn",
    "os.kill", "os.killpg", "_thread.start_new_thread", "ctypes.", "resource.setrlimit", "resource.prlimit",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "os.putenv", "os.unsetenv", "os.chdir",
    "os.fchdir", "os.chroot", "os.symlink", "os.setxattr", "os.removexattr", "os.unshare", "os.setns",
    "sqlite3.", "webbrowser.", "syslog.", "winreg.", "sys.settrace", "sys.setprofile",
    "sys.monitoring.register_callback", "fcntl.ioctl",
)
#: Events whose ``str``/``bytes`` arguments are paths that must lie in the work directory.
PATH_EVENTS = ("os.remove", "os.rename", "os.mkdir", "os.rmdir", "os.link", "os.truncate", "os.chmod", "os.chown",
               "os.utime", "shutil.")
#: Events that read a directory: allowed in the work directory and the standard library.
DIR_EVENTS = ("os.listdir", "os.scandir", "glob.glob", "os.getxattr", "os.listxattr")
#: Modules that must never be loaded: process creation, raw memory, files and users behind the hook's back.
BLOCKED_MODULES = frozenset({
    "_posixsubprocess", "_ctypes", "_ctypes_test", "_testcapi", "_testinternalcapi", "_testbuffer",
    "_testclinic", "_testimportmultiple", "_testmultiphase", "_testsinglephase", "_xxsubinterpreters",
    "_xxinterpchannels", "_xxinterpqueues", "_xxtestfuzz", "_posixshmem", "_multiprocessing", "_sqlite3",
    "readline", "spwd", "nis", "_curses", "_tkinter", "ossaudiodev",
})
#: Modules whose import raises ``ImportError`` instead of stopping: the standard library imports them
#: inside ``try`` (``asyncio`` and ``http.client`` import ``ssl``), and code that then reaches for the
#: real module through the import system is stopped by :data:`BLOCKED_MODULES`.
HIDDEN_MODULES = ("_ssl",)
#: Functions that act outside the sandbox without raising an audit event, by module.
_OS_UNAUDITED = (
    "pidfd_open", "mkfifo", "mknod", "setpriority", "sched_setaffinity", "sched_setparam", "sched_setscheduler",
    "nice", "setsid", "setpgid", "setpgrp", "tcsetpgrp", "login_tty", "setuid", "setgid", "seteuid", "setegid",
    "setreuid", "setregid", "setresuid", "setresgid", "setgroups", "initgroups", "memfd_create", "unshare", "setns",
)
UNAUDITED = (
    ("os", _OS_UNAUDITED),
    ("posix", _OS_UNAUDITED),
    ("signal", ("pidfd_send_signal",)),
    ("_signal", ("pidfd_send_signal",)),
    ("time", ("clock_settime", "clock_settime_ns")),
    ("_posixsubprocess", ("fork_exec",)),
    ("_imp", ("create_builtin",)),
)
#: Look-ups in the user and group databases (read behind the hook's back): they answer as if those
#: were empty (``KeyError``, ``[]``), as ``os.path.expanduser`` and ``shutil`` expect, rather than stop.
EMPTIED = (
    ("pwd", ("getpwall", "getpwnam", "getpwuid")),
    ("grp", ("getgrall", "getgrgid", "getgrnam")),
)

#: The event a replaced function raises (argument: its dotted name).
REFUSED_EVENT = "sandbox.refused"

#: Socket events that stay allowed (every other ``socket.*`` event ends the process).
ALLOWED_SOCKET_EVENTS = ("socket.gethostname",)

Check = Callable[[str, tuple[Any, ...]], "str | None"]


def disarm() -> None:
    """Load every built-in module, then replace each function in :data:`UNAUDITED` with a refusal
    and each in :data:`EMPTIED` with an empty answer, and hide :data:`HIDDEN_MODULES`.

    A refusal raises the audit event ``sandbox.refused`` (which the hook turns
    into a stop naming the function) and, should it return, ``PermissionError``.
    Replacing rather than deleting keeps ``from _posixsubprocess import fork_exec``
    (done by ``import subprocess``) working. Loading the built-ins first keeps
    ``import`` working once ``_imp.create_builtin`` is gone. Call it after the last
    import that needs those functions and before the model's code runs.
    """
    for name in sys.builtin_module_names:
        __import__(name)
    # id -> (original, stand-in): holding the original keeps its id from being reused meanwhile
    replaced: dict[int, tuple[Any, Callable[..., Any]]] = {}
    for table, stand_in in ((UNAUDITED, _refusal), (EMPTIED, _empty_lookup)):
        for module_name, names in table:
            module = sys.modules.get(module_name) or __import__(module_name)
            for name in names:
                original = getattr(module, name, None)
                if original is not None and id(original) not in replaced:  # named after its first module
                    replaced[id(original)] = (original, stand_in(module_name + "." + name))
    # every reference to an original: module attributes (``from posix import *``) and os.supports_*
    for module in list(sys.modules.values()):
        for key, value in list(vars(module).items()):
            entry = replaced.get(id(value))
            if entry is not None and entry[0] is value:
                setattr(module, key, entry[1])
    for functions in (os.supports_dir_fd, os.supports_fd, os.supports_follow_symlinks, os.supports_effective_ids):
        for function in list(functions):
            entry = replaced.get(id(function))
            if entry is not None and entry[0] is function:
                functions.discard(function)
    for name in HIDDEN_MODULES:
        sys.modules[name] = None  # type: ignore[assignment]  # "import _ssl" raises ImportError


def _refusal(qualified_name: str) -> Callable[..., Any]:
    audit, PermissionError = sys.audit, builtins.PermissionError

    def refused(*args: object, **kwargs: object) -> Any:
        audit(REFUSED_EVENT, qualified_name)
        raise PermissionError(qualified_name + " is not available in the sandbox")

    refused.__name__ = qualified_name.rpartition(".")[2]
    return refused


def _empty_lookup(qualified_name: str) -> Callable[..., Any]:
    KeyError, list_all = builtins.KeyError, qualified_name.endswith("all")

    def empty(*args: object) -> Any:
        if list_all:
            return []
        raise KeyError(qualified_name + ": no entries in the sandbox")

    empty.__name__ = qualified_name.rpartition(".")[2]
    return empty


def make_check(root: str, lib: str) -> Check:
    """The fence's decision for one audit event (no side effects but ``lstat``/``stat``/``readlink``).

    Args:
        root: the work directory (resolved); the only place the code may write.
        lib: the standard library's directory (resolved); readable too.

    Returns:
        ``check(event, args)``: the reason to stop the process, ``None`` to let
        the event through. It raises nothing of its own; an exception from an
        argument the model crafted counts as a reason (see :func:`make_hook`).
    """
    # bound now: names looked up at call time could be rebound by the code under watch
    type_of, is_instance, length, represent, str_type, bytes_type, int_type, tuple_type, os_error = (
        builtins.type, builtins.isinstance, builtins.len, builtins.repr, builtins.str, builtins.bytes,
        builtins.int, builtins.tuple, builtins.OSError)
    as_str, decode, lstat, stat, readlink = str_type.__str__, bytes_type.decode, posix.lstat, posix.stat, posix.readlink
    split, partition, translate = str_type.split, str_type.partition, str_type.translate
    blocked_events, path_events, blocked_modules, allowed_socket_events = (
        BLOCKED_EVENTS, PATH_EVENTS, BLOCKED_MODULES, ALLOWED_SOCKET_EVENTS)
    blocked_native = BLOCKED_MODULES | frozenset(HIDDEN_MODULES)
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    unix_family = int_type(socket.AF_UNIX)
    refused_event, file_events = REFUSED_EVENT, PATH_EVENTS + DIR_EVENTS
    # control characters (NUL included) become "?" in a reason, and make a module name invalid
    controls = {code: "?" for code in (*range(32), 127)}

    def text(value: object) -> str | None:
        """An exact ``str`` copy of a ``str``/``bytes`` value (subclasses included); else ``None``."""
        if is_instance(value, str_type):
            return as_str(value)
        if is_instance(value, bytes_type):
            return decode(value, "utf-8", "surrogateescape")  # type: ignore[arg-type]
        return None

    def resolve(path: str) -> str | None:
        """``os.path.realpath`` (non-strict) relative to ``root``; ``None`` for a symlink loop."""
        parts = (path if path[:1] == "/" else root + "/" + path).split("/")[::-1]
        done, follows = "", 0
        while parts:
            name = parts.pop()
            if name == "" or name == ".":
                continue
            if name == "..":
                done = done.rpartition("/")[0]
                continue
            candidate = done + "/" + name
            try:
                mode = lstat(candidate).st_mode
            except os_error:
                done = candidate
                continue
            if mode & 0o170000 != 0o120000:
                done = candidate
                continue
            follows += 1
            if follows > 40:
                return None
            target = readlink(candidate)
            done = "" if target[:1] == "/" else done
            parts.extend(target.split("/")[::-1])
        return done or "/"

    def under(path: str, roots: tuple[str, ...]) -> bool:
        real = resolve(path)
        if real is None:
            return False
        for top in roots:
            if real == top or real.startswith(top + "/"):
                return True
        return False

    def writes(mode: object, flags: object) -> bool:
        if type_of(mode) is str_type:  # io.open: "r", "wb", "a+", ...
            for letter in "wax+":
                if letter in mode:  # type: ignore[operator]
                    return True
            return False
        return bool((flags if type_of(flags) is int_type else write_flags) & write_flags)  # type: ignore[operator]

    def check_open(path: object, mode: object, flags: object) -> str | None:
        if path is None or type_of(path) is int_type:
            return None  # an already open descriptor
        name = text(path)
        if name is None:
            return "open of a path that is not a str"
        if under(name, (root,)):
            return None
        if writes(mode, flags) or not under(name, (lib,)):
            return "open " + name
        try:
            is_dir = stat(name).st_mode & 0o170000 == 0o040000
        except os_error:
            return None
        # a directory descriptor outside the work directory would make dir_fd paths unchecked
        return "open of the directory " + name if is_dir else None

    def check_paths(event: str, args: tuple[Any, ...]) -> str | None:
        if args and type_of(args[0]) is int_type and event != "os.listdir" and event != "os.scandir":
            return event + " on a file descriptor"
        for arg in args:
            if arg is None or is_instance(arg, int_type):
                continue  # modes, owners, flags, dir_fd (only ever a descriptor of the work directory)
            name = text(arg)
            if name is None:
                return event + " with a path that is not a str"
            if not under(name, (root,) if event.startswith(path_events) else (root, lib)):
                return event + " " + name
        return None

    def plain_address(address: object) -> str:
        """A readable form of a socket address for a reason (never the model's own ``repr``)."""
        if type_of(address) is tuple_type and length(address) >= 2:  # type: ignore[arg-type]
            host_part, port_part = address[0], address[1]  # type: ignore[index]
            if type_of(host_part) is str_type and type_of(port_part) is int_type:
                return represent((host_part, port_part))
        return text(address) or "an address that is not a plain (host, port) tuple"

    def check_socket(event: str, args: tuple[Any, ...]) -> str | None:
        if event in allowed_socket_events:
            return None
        if event == "socket.__new__":
            family, kind = args[1], args[2]
            if type_of(family) is int_type and family == unix_family:
                return None  # a Unix socket can reach nothing: connect and bind are refused below
            return "socket of family " + (represent(family) if type_of(family) is int_type else "?") + ", type " + (
                represent(kind) if type_of(kind) is int_type else "?")
        if event == "socket.connect":
            return "connect to " + plain_address(args[1])
        name = text(args[0]) if args else None
        if event.startswith("socket.get") and name is not None:
            return event + " " + translate(name, controls)
        return event

    def module_parts(name: str) -> list[str]:
        """Each dotted part of a module name, and what C sees of it (cut at a NUL)."""
        parts = split(name, ".")
        return parts + [partition(part, "\0")[0] for part in parts]

    def check_import(args: tuple[Any, ...]) -> str | None:
        name = text(args[0])
        if name is None:
            return "import ?"
        shown = translate(name, controls)
        if shown != name:
            return "import of a module name with a control character: " + shown
        filename = args[1] if length(args) > 1 else None
        # a hidden module's name alone passes: sys.modules holds None for it, so the import fails
        for part in module_parts(name):
            if part in blocked_modules or (filename is not None and part in blocked_native):
                return "import " + name
        if filename is not None:  # a native extension is being loaded from this file
            path = text(filename)
            if path is None or not under(path, (lib,)):
                return "load of native code from " + (translate(path, controls) if path is not None else "?")
            if partition(path.rpartition("/")[2], ".")[0] in blocked_native:
                return "load of native code from " + path
        return None

    def check(event: str, args: tuple[Any, ...]) -> str | None:
        if event.startswith(blocked_events):
            return event
        if event == refused_event:
            return text(args[0]) if args else event
        if event == "open":
            return check_open(args[0], args[1], args[2])
        if event.startswith(file_events):
            return check_paths(event, args)
        if event.startswith("socket."):
            return check_socket(event, args)
        if event == "import":
            return check_import(args)
        return None

    return check


def make_hook(check: Check, verdict_fd: int, exit_code: int) -> Callable[[str, tuple[Any, ...]], None]:
    """The audit hook: end the process when ``check`` gives a reason.

    The reason goes to ``verdict_fd`` as one line, for the harness to read from
    outside; the exit status is ``exit_code``. The process ends whether or not the
    line could be written (the code may have closed that descriptor). A check that
    raises (an argument the model crafted) stops too: the fence fails closed.
    """
    write, exit_now, BaseException = posix.write, posix._exit, builtins.BaseException

    def hook(event: str, args: tuple[Any, ...]) -> None:
        try:
            reason = check(event, args)
        except BaseException:
            reason = event + " (could not be checked)"
        if reason is not None:
            try:
                write(verdict_fd, (reason + "\n").encode("utf-8", "replace"))
            finally:
                exit_now(exit_code)

    return hook


def install(verdict_fd: int, exit_code: int) -> None:
    """Fence the running interpreter: the current directory becomes the work directory.

    Call it last, right before the model's code runs: an audit hook cannot be removed.
    """
    root = os.path.realpath(os.getcwd())
    lib = os.path.realpath(os.path.dirname(os.__file__))
    sys.addaudithook(make_hook(make_check(root, lib), verdict_fd, exit_code))
