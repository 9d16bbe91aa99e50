"""The One Step Lookahead bot of the PokéChamp paper's ladder, on the world model.

Each decision builds the world-model state from the live battle (the opponent's
hidden sets determinized by the modal set of the priors, updated with everything
revealed so far) and reads the one-step lookahead:

1. **Forced switch** (a faint, a pivot): the bench Pokémon the lookahead rates best
   (it survives the opponent longest relative to how fast it KOs the opponent).
2. **Outmatched** (the opponent KOs our active first): switch to the best bench
   Pokémon when that Pokémon is not outmatched itself, survives at least two of the
   opponent's best hits after entry hazards, and we did not just switch in (this
   keeps the bot from switching back and forth every turn).
3. Otherwise the move with the **fewest turns to KO** (hits needed at the expected
   damage over rolls and critical hits, divided by the chance to hit; ties broken by
   more damage, then priority), with Terastallization when it lowers them.

When the active has no damaging move that can touch the opponent it falls back to
the highest base-power move, like ``max_power``.
"""

from __future__ import annotations

import math
from typing import Any

from poke_env.battle import AbstractBattle, Move, Pokemon
from poke_env.player.battle_order import BattleOrder, DefaultBattleOrder, SingleBattleOrder

from pokegym.world.data import Dex, load_dex, to_id
from pokegym.world.priors import BeliefState
from pokegym.world.state import BattleState, state_from_battle
from pokegym.world.transition import TransitionModel
from policies.base import Policy
from policies.core.lookahead import HitOutlook, Lookahead, one_step_lookahead

# A switch-in must survive at least this many of the opponent's best hits.
MIN_SWITCH_SURVIVAL = 2
# Battles whose beliefs are kept (older ones are dropped; one agent plays many at once).
MAX_TRACKED_BATTLES = 256


class OneStepPolicy(Policy):
    """Fewest turns to KO by the world model; switch out when outmatched.

    Args:
        seed: seeds the tie-breaking generator.
        tera: allow Terastallization when it lowers the turns to KO.
        switching: allow switching out of a bad matchup (forced switches always happen).
    """

    name = "one_step"

    def __init__(self, seed: int | None = None, tera: bool = True, switching: bool = True):
        super().__init__(seed)
        self.tera = bool(tera)
        self.switching = bool(switching)
        self._dex: dict[int, Dex] = {}
        self._models: dict[int, TransitionModel] = {}
        self._beliefs: dict[str, BeliefState] = {}
        self._last_switch_turn: dict[str, int] = {}
        self.last_lookahead: Lookahead | None = None

    # ------------------------------------------------------------ world model
    def _model(self, gen: int) -> TransitionModel:
        model = self._models.get(gen)
        if model is None:
            self._dex[gen] = load_dex(gen)
            model = self._models[gen] = TransitionModel(self._dex[gen])
        return model

    def _belief(self, battle: AbstractBattle) -> BeliefState:
        belief = self._beliefs.get(battle.battle_tag)
        if belief is None:
            if len(self._beliefs) >= MAX_TRACKED_BATTLES:
                self._beliefs.pop(next(iter(self._beliefs)))
            belief = self._beliefs[battle.battle_tag] = BeliefState.from_battle(battle)
        else:
            belief.update(battle)
        return belief

    def state(self, battle: AbstractBattle) -> BattleState:
        """The world-model state of ``battle`` with the modal determinization."""
        model = self._model(battle.gen)
        belief = self._belief(battle)
        return state_from_battle(battle, belief.modal_determinization(), model.dex)

    def lookahead(self, battle: AbstractBattle) -> Lookahead:
        model = self._model(battle.gen)
        return one_step_lookahead(model, self.state(battle))

    # ---------------------------------------------------------------- choice
    def choose(self, battle: AbstractBattle) -> BattleOrder:
        if not battle.available_moves and not battle.available_switches:
            return DefaultBattleOrder()
        if battle.opponent_active_pokemon is None:
            return self._fallback(battle)
        look = self.lookahead(battle)
        self.last_lookahead = look
        switch_orders = _switches_by_index(battle)

        if not battle.available_moves or _active_fainted(battle):
            order = self._best_switch(look, switch_orders, require_good=False)
            return order or self._fallback(battle)

        if self.switching and look.outmatched() and switch_orders:
            last = self._last_switch_turn.get(battle.battle_tag, -10)
            if battle.turn - last > 1:
                order = self._best_switch(look, switch_orders, require_good=True)
                if order is not None:
                    self._last_switch_turn[battle.battle_tag] = battle.turn
                    return order

        move_order = self._best_move(battle, look)
        return move_order or self._fallback(battle)

    def _best_move(self, battle: AbstractBattle, look: Lookahead) -> BattleOrder | None:
        available = {to_id(move.id): move for move in battle.available_moves}
        options: list[tuple[tuple[float, float, int], Move, bool]] = []
        configs = [False, True] if self.tera and battle.can_tera else [False]
        for we_tera in configs:
            for hit in look.matchup(we_tera, False).ours:
                move = available.get(to_id(hit.move))
                if move is None or math.isinf(hit.turns_to_ko):
                    continue
                # Tera only when it strictly helps: rank it after the plain move on ties.
                options.append(((*_rank(hit), int(we_tera)), move, we_tera))  # type: ignore[arg-type]
        if not options:
            return None
        _, move, tera = min(options, key=lambda option: option[0])
        return SingleBattleOrder(move, terastallize=tera)

    def _best_switch(
        self,
        look: Lookahead,
        switch_orders: dict[int, Pokemon],
        *,
        require_good: bool,
    ) -> BattleOrder | None:
        candidates = [s for s in look.switches if s.index in switch_orders]
        if not candidates:
            return None
        best = max(
            candidates,
            key=lambda s: (min(s.their_turns_to_ko, 9) - min(s.our_turns_to_ko, 9), s.hp_fraction),
        )
        if require_good:
            survives = best.their_turns_to_ko >= MIN_SWITCH_SURVIVAL
            not_outmatched = best.their_turns_to_ko > best.our_turns_to_ko or (
                best.their_turns_to_ko == best.our_turns_to_ko and best.faster
            )
            if not (survives and not_outmatched):
                return None
        return SingleBattleOrder(switch_orders[best.index])

    def _fallback(self, battle: AbstractBattle) -> BattleOrder:
        moves = battle.available_moves
        if moves:
            return SingleBattleOrder(max(moves, key=lambda move: move.base_power))
        switches = battle.available_switches
        if switches:
            return SingleBattleOrder(switches[int(self.rng.integers(len(switches)))])
        return DefaultBattleOrder()

    def forget(self, battle_tag: str) -> None:
        """Drop what is kept about a finished battle."""
        self._beliefs.pop(battle_tag, None)
        self._last_switch_turn.pop(battle_tag, None)


def _rank(hit: HitOutlook) -> tuple[float, float, int]:
    return (hit.expected_turns, -hit.expected, -hit.priority)


def _active_fainted(battle: AbstractBattle) -> bool:
    active = battle.active_pokemon
    return active is None or active.fainted


def _switches_by_index(battle: AbstractBattle) -> dict[int, Any]:
    """Available switches keyed by their index in ``battle.team`` (the state's order)."""
    index = {id(mon): i for i, mon in enumerate(battle.team.values())}
    return {index[id(mon)]: mon for mon in battle.available_switches if id(mon) in index}
