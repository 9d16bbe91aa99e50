"""The ``tera`` suite's check: Terastallizing decides the game.

A Gen 9 random-battle 1v1 candidate is kept when the reference agent wins it if it
Terastallizes with its first move (the Tera line) and loses it if it never does (the
non-Tera line), both played out in the simulator with the same battle seeds, on every
seed checked. The opponent plays as it likes in both lines.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from poke_env.battle import AbstractBattle, Move
from poke_env.player.battle_order import BattleOrder, SingleBattleOrder

from pokegym.agents import Agent
from pokegym.env import BattleSetup
from pokegym.puzzles.play import play_teams


class TeraLine:
    """An agent played with Terastallization forced (``tera=True``: with its first move
    while it can) or forbidden (``tera=False``); its choices are otherwise its own."""

    def __init__(self, agent: Agent, *, tera: bool):
        self.agent = agent
        self.tera = tera

    def seed(self, value: int) -> None:
        seed_fn = getattr(self.agent, "seed", None)
        if callable(seed_fn):
            seed_fn(value)

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        order = self.agent.choose(battle)
        if not isinstance(order, SingleBattleOrder) or isinstance(order.order, str):
            return order
        if self.tera and battle.can_tera and isinstance(order.order, Move):
            return dataclasses.replace(order, terastallize=True)
        if not self.tera and order.terastallize:
            return dataclasses.replace(order, terastallize=False)
        return order


def tera_decides(
    setup: BattleSetup,
    teams: Sequence[str],
    seeds: Sequence[int],
    reference: Agent,
    opponent: Agent,
) -> bool:
    """True when, on every seed, the Tera line wins and the non-Tera line loses."""
    with_tera = TeraLine(reference, tera=True)
    without = TeraLine(reference, tera=False)
    for seed in seeds:
        won, _, _ = play_teams(setup, teams, seed, with_tera, opponent)
        if not won:
            return False
        won, _, _ = play_teams(setup, teams, seed, without, opponent)
        if won:
            return False
    return True
