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

    def battle_finished(self, battle: AbstractBattle) -> None:
        """Called once when a battle this policy played has ended (default: nothing).

        ``battle`` holds the result (``battle.won``, ``battle.lost``). Override it to learn
        from finished battles. Backends report the end differently: a poke-env ``Player``
        made with :meth:`as_player` calls it from poke-env's end-of-battle callback, and
        :func:`notify_when_finished` makes any battle object call it (the embedded
        simulator, the arena and the environments set the result with ``won_by``/``tied``).
        Calls for the same battle after the first are dropped.
        """
        return None

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

    def _battle_finished_callback(self, battle: AbstractBattle) -> None:
        _report_finished(self.policy, battle)


def notify_when_finished(policy: Policy, battle: AbstractBattle) -> None:
    """Make ``battle`` call ``policy.battle_finished(battle)`` once, when its result is set.

    Wraps this battle object's ``won_by`` and ``tied`` (every backend ends a battle through
    them). Call it when the policy first sees the battle; calling it again is harmless.
    """
    if getattr(battle, "_pokegym_end_watchers", None) is None:
        watchers: list[Policy] = []
        battle._pokegym_end_watchers = watchers  # type: ignore[attr-defined]
        won_by, tied = battle.won_by, battle.tied

        def won_by_and_notify(player_name: str) -> None:
            won_by(player_name)
            for watcher in list(watchers):
                _report_finished(watcher, battle)

        def tied_and_notify() -> None:
            tied()
            for watcher in list(watchers):
                _report_finished(watcher, battle)

        battle.won_by = won_by_and_notify  # type: ignore[method-assign]
        battle.tied = tied_and_notify  # type: ignore[method-assign]
    if policy not in battle._pokegym_end_watchers:  # type: ignore[attr-defined]
        battle._pokegym_end_watchers.append(policy)  # type: ignore[attr-defined]


def _report_finished(policy: Policy, battle: AbstractBattle) -> None:
    reported = getattr(battle, "_pokegym_end_reported", None)
    if reported is None:
        reported = set()
        battle._pokegym_end_reported = reported  # type: ignore[attr-defined]
    if id(policy) in reported:
        return
    reported.add(id(policy))
    policy.battle_finished(battle)
