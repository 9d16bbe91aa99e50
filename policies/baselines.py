"""The simplest baselines of the ladder of bots: random and max power."""

from __future__ import annotations

from poke_env.battle import AbstractBattle
from poke_env.player import SimpleHeuristicsPlayer
from poke_env.player.battle_order import BattleOrder, DefaultBattleOrder, SingleBattleOrder

from policies.base import Policy


class RandomPolicy(Policy):
    """A uniformly random legal order (moves, moves with the gimmick, switches)."""

    name = "random"

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        orders = battle.valid_orders
        if not orders:
            return DefaultBattleOrder()
        return orders[int(self.rng.integers(len(orders)))]


class MaxPowerPolicy(Policy):
    """The move with the highest base power; a random switch when it cannot move.

    Ties keep the first move in moveset order. No Terastallization or Dynamax.
    """

    name = "max_power"

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        moves = battle.available_moves
        if moves:
            best = max(moves, key=lambda move: move.base_power)
            return SingleBattleOrder(best)
        switches = battle.available_switches
        if switches:
            return SingleBattleOrder(switches[int(self.rng.integers(len(switches)))])
        return DefaultBattleOrder()


class SimpleHeuristicsPolicy(Policy):
    """poke-env's ``SimpleHeuristicsPlayer`` as a policy: the reference heuristic bot.

    Its decisions are poke-env's own (matchup estimate, switching out of bad
    matchups, hazards, setup, Terastallization); it is registered so that the arena
    can measure other agents against it. Team Preview keeps poke-env's default of
    a random lead, drawn from this policy's seeded generator.
    """

    name = "simple_heuristics"

    def __init__(self, seed: int | None = None):
        super().__init__(seed)

        self._player = SimpleHeuristicsPlayer(start_listening=False)

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        return self._player.choose_move(battle)
