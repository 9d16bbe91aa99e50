"""Ctrl-C and SIGTERM stop a command the same way.

Inside :func:`sigterm_as_interrupt`, SIGTERM raises :class:`Terminated`, a
``KeyboardInterrupt``, in the main thread, so the cleanup written for Ctrl-C (closing
simulators and servers, keeping what finished) also runs when a process manager stops
the command. :func:`interrupt_signal` says which of the two stopped it, for the exit
status ``128 + signal``.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable, Iterator

from pokegym.errors import PokegymError


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises KeyboardInterrupt so the same cleanup runs."""

    def __init__(self, signum: int = signal.SIGTERM):
        super().__init__(signum)
        self.signum = signum


# The SIGTERM received inside sigterm_as_interrupt, if any: code between the handler and
# the caller (Ray's ray.wait) may turn Terminated into a plain KeyboardInterrupt.
_sigterm_received: int | None = None


def interrupt_signal(exc: BaseException) -> int:
    """The signal behind a KeyboardInterrupt: SIGTERM when one arrived, else SIGINT."""
    return int(getattr(exc, "signum", None) or _sigterm_received or signal.SIGINT)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` in the main thread while inside (unless the
    signal is ignored, as ``nohup``-like launchers may arrange)."""

    global _sigterm_received

    def on_term(signum: int, frame: object) -> None:
        global _sigterm_received
        _sigterm_received = signum
        raise Terminated(signum)

    _sigterm_received = None

    try:
        previous = signal.getsignal(signal.SIGTERM)
        if previous == signal.SIG_IGN:
            previous = None
        else:
            signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread: leave signals alone
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def run_interruptible(prog: str, action: Callable[[], int]) -> int:
    """Run a command's ``action`` with SIGTERM stopping it as Ctrl-C does; its exit status,
    or ``128 + signal`` after ``PROG: interrupted``, or 2 after ``PROG: error: ...`` for a
    :class:`~pokegym.errors.PokegymError` (bad input the message explains)."""
    with sigterm_as_interrupt():
        try:
            return action()
        except KeyboardInterrupt as exc:
            print(f"{prog}: interrupted", file=sys.stderr)
            return 128 + interrupt_signal(exc)
        except PokegymError as exc:
            print(f"{prog}: error: {exc}", file=sys.stderr)
            return 2
