"""The battle from the opponent's chair, as far as we can tell, and a rule-based reply model.

Pokémon players predict: the move a good player picks depends on what the opponent will
most likely do, not on its worst case. :class:`OpponentView` turns our poke-env battle
object into a read-only stand-in for the *opponent's* battle object (the two sides
swapped, the opponent's hidden moves, item, ability and Tera type filled from a
determinization of the set priors), so that any rule-based agent written against
poke-env's battle API — :class:`~policies.abyssal.AbyssalPolicy` here — can be asked what
it would play in the opponent's place. :class:`RuleReplyModel` does that and returns the
answer as a world-model action of side 1, ready for the search
(:class:`~policies.search.maximin.MinimaxSearch` ``predicted=``).

What the view cannot know is left out rather than guessed: opponent Pokémon never seen
are not in its team (they cannot be switched to), Choice locks and disabled moves of the
opponent are not known, and our own Pokémon are seen with everything we know of them
(the real opponent may know less).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from poke_env.battle import AbstractBattle, Move, Pokemon
from poke_env.player.battle_order import BattleOrder

from pokegym.world.data import to_id
from pokegym.world.sets import PokemonSet
from pokegym.world.transition import Action
from policies.core.battle import order_action


def seen_opponents(battle: AbstractBattle) -> list[Pokemon]:
    """The opponent's Pokémon in the order the world-model state lists them (side 1)."""
    return [mon for mon in battle.opponent_team.values() if mon.revealed or mon.active]


class OpponentView:
    """A read-only battle object with the sides of ``battle`` swapped.

    Args:
        battle: our battle object (poke-env), left untouched.
        sets: the opponent's sets by species id (a determinization of the priors); they
            fill the moves the opponent's active Pokémon has not shown yet and its Tera
            type.
    """

    def __init__(self, battle: AbstractBattle, sets: Mapping[str, PokemonSet]):
        self._sets = sets
        self.gen = battle.gen
        self.format = battle.format
        self.battle_tag = f"{battle.battle_tag}:opponent"
        self.turn = battle.turn
        self.weather = battle.weather
        self.fields = battle.fields
        self.trapped = False  # what traps the opponent is not in our view
        self.team = {key: mon for key, mon in battle.opponent_team.items()
                     if mon.revealed or mon.active}  # fmt: skip
        self.opponent_team = battle.team
        self.teampreview_opponent_team = list(battle.team.values())
        self.active_pokemon = battle.opponent_active_pokemon
        self.opponent_active_pokemon = battle.active_pokemon
        self.side_conditions = battle.opponent_side_conditions
        self.opponent_side_conditions = battle.side_conditions
        self.can_tera = battle.gen >= 9 and not battle.opponent_used_tera
        self.last_request = self._request()

    def _set(self, mon: Pokemon) -> PokemonSet | None:
        return self._sets.get(to_id(mon.species))

    def _request(self) -> dict[str, Any]:
        """The part of a Showdown request the rules read: each Pokémon's Tera type."""
        pokemon = []
        for mon in self.team.values():
            found = self._set(mon)
            tera = (mon.tera_type.name.capitalize() if mon.is_terastallized and mon.tera_type
                    else found.tera_type if found else "")  # fmt: skip
            if tera:
                pokemon.append({"ident": f"p: {mon.name}", "teraType": tera})
        return {"side": {"pokemon": pokemon}}

    @property
    def available_moves(self) -> list[Move]:
        """The opponent's active Pokémon's shown moves, then its set's other moves (four)."""
        mon = self.active_pokemon
        if mon is None or mon.fainted:
            return []
        moves = [move for move in mon.moves.values() if move.current_pp > 0]
        known = {to_id(move.id) for move in mon.moves.values()}  # shown, PP left or not
        found = self._set(mon)
        for move_id in found.moves if found else ():
            if len(moves) >= 4:
                break
            if to_id(move_id) in known:
                continue
            try:
                moves.append(Move(to_id(move_id), self.gen))
            except Exception:  # an id poke-env's move data does not know
                continue
            known.add(to_id(move_id))
        return moves[:4]

    @property
    def available_switches(self) -> list[Pokemon]:
        return [mon for mon in self.team.values() if not mon.active and not mon.fainted]


class RuleReplyModel:
    """The reply a rule-based agent would play in the opponent's place (side 1's action).

    Args:
        policy: an agent with ``choose(battle)`` written against poke-env's battle API;
            it is given an :class:`OpponentView`. Its memory across turns (e.g. the
            turn of its last switch) is kept per battle, as for a real opponent.
    """

    def __init__(self, policy: Any):
        self.policy = policy

    def predict(self, battle: AbstractBattle, sets: Mapping[str, PokemonSet]) -> Action | None:
        """The predicted action in the world model's terms, or None when the rules' choice
        has no world-model action (a default order, a switch to a Pokémon never seen)."""
        view = OpponentView(battle, sets)
        if view.active_pokemon is None:
            return None
        return reply_action(self.policy.choose(view), battle)


def reply_action(order: BattleOrder, battle: AbstractBattle) -> Action | None:
    """An order given in the opponent's place, as side 1's world-model action."""
    return order_action(order, seen_opponents(battle))


__all__ = ["OpponentView", "RuleReplyModel", "reply_action", "seen_opponents"]
