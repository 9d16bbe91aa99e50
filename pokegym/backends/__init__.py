"""Battle backends: where battles run. ``sim`` (embedded simulator) or ``server``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from pokegym.backends.base import BattleSession, PlayerView, ShowdownBattle
from pokegym.backends.sim import SimBattleSession
from pokegym.formats import BattleFormat
from pokegym.showdown.simulator import Simulator, shared_simulator

__all__ = [
    "Backend",
    "BattleSession",
    "PlayerView",
    "ShowdownBattle",
    "SimBackend",
    "make_backend",
]


class Backend(ABC):
    """Starts battles between two sides and hands back a :class:`BattleSession`."""

    name: str
    deterministic: bool

    @abstractmethod
    def start(
        self,
        fmt: BattleFormat,
        *,
        teams: Sequence[str | None],
        seeds: tuple[int, int, int],
        log: str | None = None,
    ) -> BattleSession:
        """Start one battle; returns once both sides have their first request."""

    def ensure_running(self) -> None:
        """Restart whatever process died (called by every ``reset()``)."""
        return None

    def close(self) -> None:
        return None


class SimBackend(Backend):
    """Battles inside a Showdown simulator process (seeded, reproducible)."""

    name = "sim"
    deterministic = True

    def __init__(self, simulator: Simulator | None = None, *, timeout: float | None = None):
        self.simulator = simulator or shared_simulator()
        self.timeout = timeout  # per battle; None: the simulator's own limit

    def start(
        self,
        fmt: BattleFormat,
        *,
        teams: Sequence[str | None],
        seeds: tuple[int, int, int],
        log: str | None = None,
    ) -> BattleSession:
        return SimBattleSession(
            self.simulator, fmt, teams=teams, seeds=seeds, log=log, timeout=self.timeout
        )

    def ensure_running(self) -> None:
        self.simulator.ensure_running()


def make_backend(
    backend: str | Backend = "sim",
    *,
    server_url: str | None = None,
    simulator: Simulator | None = None,
    timeout: float | None = None,
) -> Backend:
    """A backend by name: ``"sim"`` or ``"server"`` (local server, or ``server_url``).

    ``timeout``: seconds a battle may wait for an answer (None: the simulator's own
    limit, 60 s unless it was built with another; 60 s on a server).
    """
    if isinstance(backend, Backend):
        return backend
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if backend == "sim":
        return SimBackend(simulator, timeout=timeout)
    if backend == "server":
        from pokegym.backends.server import ServerBackend

        return ServerBackend(server_url=server_url, timeout=60.0 if timeout is None else timeout)
    raise ValueError(f"Unknown backend {backend!r}: use 'sim' (default) or 'server'.")
