"""A persistent Node process running Showdown's simulator for many battles at once.

Battles are multiplexed over the process's stdin/stdout with a strict
request/response protocol (see ``js/sim_bridge.js``): one JSON line carries a
batch of commands, one JSON line comes back with a result per command. Batching
is what lets a vector environment step many battles for one pipe round trip, and
:meth:`Simulator.submit` / :meth:`Simulator.collect` let the caller do Python work
while Node simulates.

Every read has a deadline. A process that dies raises :class:`SimulatorError`
(with the tail of its stderr); one that stalls raises :class:`BattleTimeoutError`
and is killed, since its state is then unknown. Either way :meth:`ensure_running`
(called by every environment ``reset()``) starts a fresh process.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import select
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from pokegym.errors import BattleTimeoutError, SimulatorError
from pokegym.showdown.install import (
    JS_DIR,
    find_node,
    moves_file,
    showdown_package_dir,
    subprocess_env,
)

DEFAULT_TIMEOUT = 60.0

_live: weakref.WeakSet[Simulator] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for simulator in list(_live):
        simulator.close()


class Simulator:
    """One Node process hosting Showdown ``BattleStream``s.

    Args:
        timeout: seconds a single batch may take before the process is declared
            stalled (a battle that stalls).
        showdown_dir: folder of the ``pokemon-showdown`` package; installed into the
            cache on first use when omitted.

    The object is thread-safe: a lock serialises round trips, so several
    environments in one process may share it (see :func:`shared_simulator`).
    """

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT, showdown_dir: Path | None = None):
        self.timeout = timeout
        self._showdown_dir = showdown_dir
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None
        self._buffer = bytearray()
        self._lock = threading.RLock()
        self._pending = 0
        self._next_id = 0
        self.moves_stamp: tuple[str, int, int] | None = None
        self.generation = 0  # bumps at every (re)start; battles remember theirs
        self._owner_pid = os.getpid()
        _live.add(self)

    # ----------------------------------------------------------------- lifecycle
    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def is_running(self) -> bool:
        self._forget_if_forked()
        return self._proc is not None and self._proc.poll() is None

    def _forget_if_forked(self) -> None:
        # A forked child must not talk to (or kill) its parent's Node process.
        if self._owner_pid != os.getpid():
            self._owner_pid = os.getpid()
            self._proc = None
            self._stderr = None
            self._buffer = bytearray()
            self._pending = 0

    def refresh_moves(self) -> bool:
        """Restart a running process whose designed-move library has changed since it started.

        Showdown reads the library (:func:`~pokegym.showdown.install.moves_file`) once per
        process, so a move approved after the start would be unknown to it. Battles in
        flight on this process are lost; call this between battles (environments do it
        when a designed-move format is set up). Returns True when it restarted.
        """
        with self._lock:
            if not self.is_running() or self.moves_stamp == _moves_stamp():
                return False
            self._kill()
            self.ensure_running()
            return True

    def ensure_running(self) -> None:
        """Start the Node process if it is not running (first use or after a crash)."""
        with self._lock:
            if self.is_running():
                return
            self._kill()
            package = self._showdown_dir or showdown_package_dir()
            node = find_node().node
            self._stderr = tempfile.TemporaryFile()
            self.moves_stamp = _moves_stamp()
            self._proc = subprocess.Popen(
                [node, "--expose-gc", str(JS_DIR / "sim_bridge.js"), str(package)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                bufsize=0,
                start_new_session=True,  # a Ctrl-C in the terminal reaches us, not Node
                env=subprocess_env(),
            )
            self._buffer = bytearray()
            self._pending = 0
            self.generation += 1
            _widen_pipes(self._proc)
            if self.call([["ping"]])[0] != "pong":
                raise SimulatorError("The Showdown simulator process did not answer its ping.")

    def close(self) -> None:
        """Stop the Node process (idempotent)."""
        with self._lock:
            self._kill()

    def _kill(self, graceful: bool = True) -> None:
        self._forget_if_forked()
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                if not graceful:
                    raise subprocess.TimeoutExpired(proc.args, 0)
                proc.stdin.close()  # type: ignore[union-attr]
                proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()  # SIGKILL also ends a stopped (SIGSTOP) process
                proc.wait(timeout=5)
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown: best effort
            self._kill()

    def new_battle_id(self) -> int:
        with self._lock:
            self._next_id += 1
            return self._next_id

    # ------------------------------------------------------------------ requests
    def call(self, commands: Sequence[Sequence[Any]], timeout: float | None = None) -> list[Any]:
        """Send a batch of commands and wait for their results (one round trip).

        Not while batches sent with :meth:`submit` are still outstanding: their
        answers come first, in order, and belong to whoever submitted them.
        """
        with self._lock:
            if self._pending:
                raise SimulatorError(
                    f"call() with {self._pending} submitted batch(es) not yet collected; "
                    "collect() them first (answers come back in order)."
                )
            self.submit(commands)
            return self.collect(timeout)

    def submit(self, commands: Sequence[Sequence[Any]]) -> None:
        """Send a batch without waiting; pair each call with one :meth:`collect`."""
        with self._lock:
            if self._proc is None:
                raise SimulatorError(
                    "The Showdown simulator is not running; call reset() to start a new battle."
                )
            payload = orjson.dumps({"c": commands}) + b"\n"
            try:
                self._proc.stdin.write(payload)  # type: ignore[union-attr]
            except (BrokenPipeError, OSError) as exc:
                raise self._died() from exc
            self._pending += 1

    def collect(self, timeout: float | None = None) -> list[Any]:
        """Wait for the oldest outstanding batch's results."""
        with self._lock:
            if self._pending <= 0:
                raise SimulatorError("collect() called with no batch outstanding.")
            line = self._read_line(self.timeout if timeout is None else timeout)
            self._pending -= 1
            reply = orjson.loads(line)
            if "fatal" in reply:
                raise SimulatorError(f"The simulator rejected a request: {reply['fatal']}")
            return reply["r"]  # type: ignore[no-any-return]

    def _read_line(self, timeout: float) -> bytes:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        buffer = self._buffer
        deadline = time.monotonic() + timeout
        while True:
            end = buffer.find(b"\n")
            if end >= 0:
                line = bytes(buffer[:end])
                del buffer[: end + 1]
                return line
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._kill(graceful=False)
                raise BattleTimeoutError(
                    f"The Showdown simulator did not answer within {timeout:g} s (a stalled "
                    "battle). The process was stopped; the next reset() starts a new one."
                )
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise self._died()
            buffer += chunk

    # Waiting on several simulators at once (the vector env's pipeline).
    def answer_ready(self) -> bool:
        """True when the oldest outstanding batch's answer has fully arrived."""
        return self._pending > 0 and b"\n" in self._buffer

    def fileno(self) -> int:
        if self._proc is None or self._proc.stdout is None:
            raise SimulatorError("The Showdown simulator is not running; call reset().")
        return self._proc.stdout.fileno()

    def read_available(self) -> None:
        """Take in what the process has written (after ``select`` saw it readable)."""
        chunk = os.read(self.fileno(), 1 << 20)
        if not chunk:
            raise self._died()
        self._buffer += chunk

    def _died(self) -> SimulatorError:
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
        tail = ""
        if self._stderr is not None:
            try:
                self._stderr.seek(0)
                tail = self._stderr.read().decode("utf-8", "replace")[-2000:].strip()
            except (OSError, ValueError):
                tail = ""
        self._kill()
        detail = f"\n{tail}" if tail else ""
        return SimulatorError(
            f"The Showdown simulator process exited (code {code}); the battles it hosted "
            f"are lost. The next reset() starts a new process.{detail}"
        )

    # -------------------------------------------------------------- conveniences
    def format_info(self, format_id: str) -> dict[str, Any]:
        self.ensure_running()
        return self.call([["format", format_id]])[0]  # type: ignore[no-any-return]

    def validate_team(self, format_id: str, team: str) -> dict[str, Any]:
        self.ensure_running()
        return self.call([["validate", format_id, team]])[0]  # type: ignore[no-any-return]

    def memory_rss(self) -> int | None:
        """Resident memory of the Node process in bytes (Linux), or None."""
        pid = self.pid
        if pid is None:
            return None
        try:
            with open(f"/proc/{pid}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            return None
        return None


F_SETPIPE_SZ = 1031  # Linux fcntl command
PIPE_BYTES = 1 << 20


def _widen_pipes(proc: subprocess.Popen[bytes]) -> None:
    """Give both pipes 1 MiB (Linux), so that Node never blocks writing results.

    With the default 64 KiB, a simulator that finished several batches stalls in
    ``write`` until Python reads them, and a pipelined vector env loses a core.
    """
    for stream in (proc.stdin, proc.stdout):
        if stream is None:
            continue
        # Not Linux, or above /proc/sys/fs/pipe-max-size: keep the default size.
        with contextlib.suppress(OSError):
            fcntl.fcntl(stream.fileno(), F_SETPIPE_SZ, PIPE_BYTES)


_shared: Simulator | None = None
_shared_lock = threading.Lock()


def wait_for_answers(simulators: Sequence[Simulator], timeout: float) -> list[Simulator]:
    """The simulators (with a batch outstanding) whose oldest answer is complete.

    Waits up to ``timeout`` seconds for at least one; raises
    :class:`BattleTimeoutError` (and stops the waited-on processes) when none comes.
    """
    deadline = time.monotonic() + timeout
    while True:
        ready = [sim for sim in simulators if sim.answer_ready()]
        if ready:
            return ready
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            for sim in simulators:
                sim._kill(graceful=False)
            raise BattleTimeoutError(
                f"No Showdown simulator answered within {timeout:g} s (a stalled battle). "
                "The processes were stopped; the next reset() starts new ones."
            )
        readable, _, _ = select.select(simulators, [], [], remaining)
        for sim in readable:
            sim.read_available()


def _reset_shared_after_fork() -> None:
    global _shared
    _shared = None


os.register_at_fork(after_in_child=_reset_shared_after_fork)


def _moves_stamp() -> tuple[str, int, int] | None:
    path = moves_file()
    try:
        stat = path.stat()
    except OSError:
        return (str(path), 0, 0)
    return (str(path), stat.st_mtime_ns, stat.st_size)


def shared_simulator() -> Simulator:
    """The process-wide simulator used by environments that are not given one."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Simulator()
        return _shared
