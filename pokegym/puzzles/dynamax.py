"""The ``dynamax`` suite's check: Dynamaxing decides the game.

A Gen 8 random-battle 1v1 candidate is kept when the reference agent wins it if it
Dynamaxes with its first move (the Dynamax line) and loses it if it never does (the
non-Dynamax line), both played out in the simulator with the same battle seeds, on
every seed checked. The opponent plays as it likes in both lines (it may Dynamax too).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from poke_env.battle import AbstractBattle, Move
from poke_env.player.battle_order import BattleOrder, SingleBattleOrder

from pokegym.agents import Agent
from pokegym.env import BattleSetup
from pokegym.puzzles.play import play_teams


class DynamaxLine:
    """An agent played with Dynamax forced (``dynamax=True``: with its first move while
    it can) or forbidden (``dynamax=False``); its choices are otherwise its own."""

    def __init__(self, agent: Agent, *, dynamax: bool):
        self.agent = agent
        self.dynamax = dynamax

    def seed(self, value: int) -> None:
        seed_fn = getattr(self.agent, "seed", None)
        if callable(seed_fn):
            seed_fn(value)

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        order = self.agent.choose(battle)
        if not isinstance(order, SingleBattleOrder) or isinstance(order.order, str):
            return order
        if self.dynamax and battle.can_dynamax and isinstance(order.order, Move):
            return dataclasses.replace(order, dynamax=True)
        if not self.dynamax and order.dynamax:
            return dataclasses.replace(order, dynamax=False)
        return order


def dynamax_decides(
    setup: BattleSetup,
    teams: Sequence[str],
    seeds: Sequence[int],
    reference: Agent,
    opponent: Agent,
) -> bool:
    """True when, on every seed, the Dynamax line wins and the non-Dynamax line loses."""
    with_dynamax = DynamaxLine(reference, dynamax=True)
    without = DynamaxLine(reference, dynamax=False)
    for seed in seeds:
        won, _, _ = play_teams(setup, teams, seed, with_dynamax, opponent)
        if not won:
            return False
        won, _, _ = play_teams(setup, teams, seed, without, opponent)
        if won:
            return False
    return True
