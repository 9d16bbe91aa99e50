"""A local Pokémon Showdown server started, health-checked and stopped by pokegym.

The server binds to 127.0.0.1 only, runs with ``--no-security`` (names without
passwords, no throttling: it is a private battle server for bots) and the trimmed
process configuration written at install time. It is stopped when the Python
process exits, however it exits: a small guard script stops it when the pipe its owner
holds closes.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import weakref
from pathlib import Path

from websockets.sync.client import connect

from pokegym.errors import PortInUseError, ServerError
from pokegym.showdown.install import JS_DIR, find_node, showdown_package_dir, subprocess_env

_servers: weakref.WeakSet[LocalServer] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for server in list(_servers):
        server.stop()


def _drop_guard_pipes() -> None:
    """In a forked child: close its copies of the guard pipes, so that a child that
    outlives the owner does not keep the owner's servers running (the guard stops a
    server when every writer of its stdin is gone)."""
    for server in list(_servers):
        proc = server._proc
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()


os.register_at_fork(after_in_child=_drop_guard_pipes)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """True if something listens on, or holds, ``host:port`` (a bind would fail)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        if sock.connect_ex((host, port)) == 0:
            return True
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # Like Node's listen(): a port left in TIME_WAIT by a closed server is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def _greets(url: str, timeout: float) -> bool:
    """True if a websocket client at ``url`` receives Showdown's login challenge."""
    deadline = time.monotonic() + timeout
    try:
        with connect(url, open_timeout=timeout) as ws:
            while time.monotonic() < deadline:
                message = ws.recv(timeout=max(0.01, deadline - time.monotonic()))
                if "|challstr|" in str(message):
                    return True
    except (OSError, TimeoutError, Exception):  # any failure means "not ready yet"
        return False
    return False


def is_showdown(port: int, host: str = "127.0.0.1", timeout: float = 2.0) -> bool:
    """True if a Showdown server answers HTTP on ``host:port``."""
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/", timeout=timeout) as response:
            body = response.read(4096).decode("utf-8", "replace")
    except (urllib.error.URLError, OSError, ValueError):
        return False
    return "showdown" in body.lower() or "<script" in body.lower()


class LocalServer:
    """A Showdown server process on ``127.0.0.1:port``.

    Args:
        port: the port; None picks a free one.
        startup_timeout: seconds to wait for the server to answer.
    """

    def __init__(self, port: int | None = None, *, startup_timeout: float = 60.0):
        self.requested_port = port
        self.port: int | None = None
        self.startup_timeout = startup_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: Path | None = None
        self._lock = threading.Lock()
        self._owner_pid = os.getpid()
        _servers.add(self)

    @property
    def websocket_url(self) -> str:
        if self.port is None:
            raise ServerError("The server is not started.")
        return f"ws://127.0.0.1:{self.port}/showdown/websocket"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def is_running(self) -> bool:
        if self._owner_pid != os.getpid():
            return False
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> LocalServer:
        """Start the server and wait until it answers (idempotent).

        Raises:
            PortInUseError: the requested port is taken.
            ServerError: the server exited or did not answer in time (its log is quoted).
        """
        with self._lock:
            if self.is_running():
                return self
            self._stop_locked()
            package = showdown_package_dir()
            node = find_node().node
            attempts = 1 if self.requested_port is not None else 3
            last_error: ServerError | None = None
            for _ in range(attempts):
                port = self.requested_port or free_port()
                if port_in_use(port):
                    if self.requested_port is not None:
                        raise PortInUseError(
                            f"Port {port} on 127.0.0.1 is already in use"
                            + (" by a Showdown server" if is_showdown(port) else "")
                            + ". Pick another port, or stop the program that holds it."
                        )
                    continue
                fd, log_name = tempfile.mkstemp(prefix=f"pokegym-showdown-{port}-", suffix=".log")
                os.close(fd)
                self._log = Path(log_name)
                with open(self._log, "wb") as log:
                    # The guard stops the server when this process's end of its stdin
                    # closes, so no server outlives us (a SIGTERM without a handler, a
                    # SIGKILL). The pipe is never written to.
                    self._proc = subprocess.Popen(
                        [
                            node,
                            str(JS_DIR / "server_guard.js"),
                            str(package),
                            "start",
                            "--skip-build",
                            "--no-security",
                            str(port),
                        ],
                        cwd=package,
                        stdin=subprocess.PIPE,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                        env=subprocess_env(),
                    )
                self.port = port
                try:
                    self._wait_ready()
                    return self
                except ServerError as exc:
                    last_error = exc
                    self._stop_locked()
                    if "EADDRINUSE" not in str(exc):
                        raise
            raise last_error or ServerError("Could not find a free port for the Showdown server.")

    def _wait_ready(self) -> None:
        """Wait until the server answers HTTP *and* greets a websocket client.

        A fresh server answers HTTP at once but takes a few seconds more before its
        first websocket greeting (the ``challstr`` a client logs in with).
        """
        assert self._proc is not None and self.port is not None
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise ServerError(
                    f"The Showdown server exited with code {self._proc.returncode} while "
                    f"starting on port {self.port}:\n{self.log_tail()}"
                )
            if "EADDRINUSE" in self.log_tail():
                raise ServerError(f"Port {self.port} is already in use (EADDRINUSE).")
            if is_showdown(self.port, timeout=1.0) and _greets(
                self.websocket_url, min(5.0, max(0.1, deadline - time.monotonic()))
            ):
                return
            time.sleep(0.1)
        raise ServerError(
            f"The Showdown server did not answer on port {self.port} within "
            f"{self.startup_timeout:.0f} s:\n{self.log_tail()}"
        )

    def log_tail(self, chars: int = 2000) -> str:
        if self._log is None or not self._log.exists():
            return ""
        return self._log.read_text(encoding="utf-8", errors="replace")[-chars:].strip()

    def health(self) -> bool:
        """True if the process runs and answers HTTP."""
        return self.is_running() and self.port is not None and is_showdown(self.port)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL) and remove its log. Idempotent."""
        with self._lock:
            self._stop_locked()

    def _stop_locked(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and self._owner_pid == os.getpid() and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.unlink()
            self._log = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


_shared: LocalServer | None = None
_shared_lock = threading.Lock()


def shared_server() -> LocalServer:
    """The process-wide local server (started on first use, restarted if it died)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared._owner_pid != os.getpid():
            _shared = LocalServer()
        server = _shared
    return server.start()
