"""pokegym agents on a Showdown server: ladder, accept challenges, challenge.

``pokegym ladder|accept|challenge`` (docs/online.md) and, from Python::

    from pokegym.agents import make_agent
    from pokegym.online import OnlineConfig, run_online

    config = OnlineConfig("accept", "abyssal", "localhost:8000", "pgA", games=10)
    run = run_online(config, make_agent(config.agent))
    print(run.table())
"""

from __future__ import annotations

from pokegym.online.account import Password, read_password
from pokegym.online.errors import (
    AgentFailedError,
    LoginRefusedError,
    OpponentNotFoundError,
    PasswordError,
    ServerDisconnectedError,
    ServerUnreachableError,
)
from pokegym.online.player import BattleResult
from pokegym.online.session import OnlineConfig, OnlineRun, run_online, summary_table

__all__ = [
    "AgentFailedError",
    "BattleResult",
    "LoginRefusedError",
    "OnlineConfig",
    "OnlineRun",
    "OpponentNotFoundError",
    "Password",
    "PasswordError",
    "ServerDisconnectedError",
    "ServerUnreachableError",
    "read_password",
    "run_online",
    "summary_table",
]
