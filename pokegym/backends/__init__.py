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

    def __init__(self, simulator: Simulator | None = None):
        self.simulator = simulator or shared_simulator()

    def start(
        self,
        fmt: BattleFormat,
        *,
        teams: Sequence[str | None],
        seeds: tuple[int, int, int],
        log: str | None = None,
    ) -> BattleSession:
        return SimBattleSession(self.simulator, fmt, teams=teams, seeds=seeds, log=log)

    def ensure_running(self) -> None:
        self.simulator.ensure_running()


def make_backend(
    backend: str | Backend = "sim",
    *,
    server_url: str | None = None,
    simulator: Simulator | None = None,
    timeout: float = 60.0,
) -> Backend:
    """A backend by name: ``"sim"`` or ``"server"`` (local server, or ``server_url``)."""
    if isinstance(backend, Backend):
        return backend
    if backend == "sim":
        return SimBackend(simulator)
    if backend == "server":
        from pokegym.backends.server import ServerBackend

        return ServerBackend(server_url=server_url, timeout=timeout)
    raise ValueError(f"Unknown backend {backend!r}: use 'sim' (default) or 'server'.")
