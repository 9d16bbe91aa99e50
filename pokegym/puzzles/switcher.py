"""The ``switching`` suite's opponent: a rule agent that switches between resists.

Each turn it looks at the move the agent's active Pokémon used last. When its own active
Pokémon does not resist that move and a Pokémon on its bench does (or is immune), it
switches to the one that takes the least from it; otherwise it attacks with the move of
highest base power times type effectiveness on the agent's active Pokémon (STAB counted
1.5 times). It never Dynamaxes. Spec name: ``switcher`` (registered by the puzzle
runner, the builder and the puzzle env).
"""

from __future__ import annotations

from typing import Any

from poke_env.battle import AbstractBattle, Move, Pokemon
from poke_env.player.battle_order import BattleOrder, DefaultBattleOrder, SingleBattleOrder

from pokegym.agents import register_agent, registered_agents

SWITCHER = "switcher"


def last_move(pokemon: Pokemon | None) -> Move | None:
    """The move ``pokemon`` used last (as the battle revealed it), or None."""
    if pokemon is None:
        return None
    for move in pokemon.moves.values():
        if getattr(move, "_is_last_used", False):
            return move
    return None


class Switcher:
    """Switches to whichever of its Pokémon resists the agent's last move."""

    def seed(self, value: int) -> None:
        """Deterministic: nothing to seed."""

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        switches = list(battle.available_switches)
        threat = last_move(battle.opponent_active_pokemon)
        if battle.force_switch or not battle.available_moves:
            if switches:
                return SingleBattleOrder(self._safest(switches, threat))
            return DefaultBattleOrder()
        active = battle.active_pokemon
        if threat is not None and switches and active is not None:
            if active.damage_multiplier(threat) >= 1:
                safest = self._safest(switches, threat)
                if safest.damage_multiplier(threat) < 1:
                    return SingleBattleOrder(safest)
        return SingleBattleOrder(self._strongest(battle))

    @staticmethod
    def _safest(switches: list[Pokemon], threat: Move | None) -> Pokemon:
        if threat is None:
            return switches[0]
        return min(switches, key=lambda mon: mon.damage_multiplier(threat))

    @staticmethod
    def _strongest(battle: AbstractBattle) -> Move:
        target = battle.opponent_active_pokemon
        user = battle.active_pokemon

        def power(move: Move) -> float:
            value = float(move.base_power)
            if user is not None and move.type in user.types:
                value *= 1.5
            return value * (target.damage_multiplier(move) if target is not None else 1.0)

        return max(battle.available_moves, key=power)


def make_switcher(**options: Any) -> Switcher:
    if options:
        raise ValueError(f"the switcher takes no options, got {sorted(options)}")
    return Switcher()


def register_puzzle_agents() -> None:
    """Make ``switcher`` a name in agent specs (once)."""
    if SWITCHER not in registered_agents():
        register_agent(SWITCHER, make_switcher)
