"""Battle backends: where battles run. ``sim`` (embedded simulator) or ``server``.

:class:`Backend` and the player views are in :mod:`pokegym.backends.base`; the
backends themselves in :mod:`pokegym.backends.sim` and :mod:`pokegym.backends.server`
(imported only when asked for: it pulls in poke-env's websocket client). This module
re-exports the common names and picks a backend by name.
"""

from __future__ import annotations

from pokegym.backends.base import Backend, BattleSession, PlayerView, ShowdownBattle
from pokegym.backends.server import ServerBackend
from pokegym.backends.sim import SimBackend, SimBattleSession
from pokegym.errors import UnknownBackendError
from pokegym.showdown.simulator import Simulator

__all__ = [
    "Backend",
    "BattleSession",
    "PlayerView",
    "ShowdownBattle",
    "SimBackend",
    "SimBattleSession",
    "make_backend",
]


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
        return ServerBackend(server_url=server_url, timeout=60.0 if timeout is None else timeout)
    raise UnknownBackendError(
        f"Unknown backend {backend!r}: use 'sim' (the embedded simulator, the default) or "
        "'server' (a Showdown server, with server_url= or one started here)."
    )
