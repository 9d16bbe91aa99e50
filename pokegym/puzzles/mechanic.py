"""The check of the ``tera`` and ``dynamax`` suites: a battle mechanic decides the game.

A 1v1 candidate (Gen 9 for Terastallization, Gen 8 for Dynamax) is kept when the
reference agent wins it if it uses the mechanic with its first move (the mechanic's
line) and loses it if it never does (the other line), both played out in the simulator
with the same battle seeds, on every seed checked. The opponent plays as it likes in
both lines (it may use the mechanic too).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from poke_env.battle import AbstractBattle, Move
from poke_env.player.battle_order import BattleOrder, SingleBattleOrder

from pokegym.agents import Agent
from pokegym.env import BattleSetup
from pokegym.puzzles.play import play_teams

#: Each mechanic: the order's flag and the battle's "can use it now".
MECHANICS = {"tera": ("terastallize", "can_tera"), "dynamax": ("dynamax", "can_dynamax")}


class MechanicLine:
    """An agent played with a mechanic (``tera`` or ``dynamax``) forced (``forced=True``:
    with its first move while it can) or forbidden (``forced=False``); its choices are
    otherwise its own."""

    def __init__(self, agent: Agent, mechanic: str, *, forced: bool):
        if mechanic not in MECHANICS:
            raise ValueError(f"mechanic is one of {', '.join(MECHANICS)}, not {mechanic!r}")
        self.agent = agent
        self.flag, self.can = MECHANICS[mechanic]
        self.forced = forced

    def seed(self, value: int) -> None:
        seed_fn = getattr(self.agent, "seed", None)
        if callable(seed_fn):
            seed_fn(value)

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        order = self.agent.choose(battle)
        if not isinstance(order, SingleBattleOrder) or isinstance(order.order, str):
            return order
        if self.forced and getattr(battle, self.can) and isinstance(order.order, Move):
            return dataclasses.replace(order, **{self.flag: True})
        if not self.forced and getattr(order, self.flag):
            return dataclasses.replace(order, **{self.flag: False})
        return order


def mechanic_decides(
    mechanic: str,
    setup: BattleSetup,
    teams: Sequence[str],
    seeds: Sequence[int],
    reference: Agent,
    opponent: Agent,
) -> bool:
    """True when, on every seed, the mechanic's line wins and the other line loses."""
    forced = MechanicLine(reference, mechanic, forced=True)
    without = MechanicLine(reference, mechanic, forced=False)
    for seed in seeds:
        won, _, _ = play_teams(setup, teams, seed, forced, opponent)
        if not won:
            return False
        won, _, _ = play_teams(setup, teams, seed, without, opponent)
        if won:
            return False
    return True
