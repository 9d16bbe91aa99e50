"""The policy contract shared by every agent in this package."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from poke_env.battle import AbstractBattle
from poke_env.player import Player
from poke_env.player.battle_order import BattleOrder


class Policy(ABC):
    """Base class: override :meth:`choose`; optionally :meth:`team_preview`.

    Randomness comes from ``self.rng``, a NumPy generator seeded through
    :meth:`seed` (environments call it on every seeded ``reset``), never from the
    global ``random`` module.
    """

    name = "policy"

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def choose(self, battle: AbstractBattle) -> BattleOrder:
        """The order to send for the current request of ``battle``."""

    def team_preview(self, battle: AbstractBattle) -> str:
        """The Team Preview order, e.g. ``"/team 312456"``; default: a random lead."""
        size = len(battle.team)
        lead = int(self.rng.integers(size)) + 1 if size else 1
        order = [lead] + [i for i in range(1, size + 1) if i != lead]
        return "/team " + "".join(str(i) for i in order)

    def as_player(self, **player_options: Any) -> Player:
        """This policy as a poke-env ``Player`` (to play on any Showdown server)."""
        return _PolicyPlayer(self, **player_options)


class _PolicyPlayer(Player):
    def __init__(self, policy: Policy, **options: Any):
        self.policy = policy
        super().__init__(**options)

    def choose_move(self, battle: AbstractBattle) -> BattleOrder:
        return self.policy.choose(battle)

    def teampreview(self, battle: AbstractBattle) -> str:
        return self.policy.team_preview(battle)
