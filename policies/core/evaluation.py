"""The hand-written value of a world-model state: material and position, as a win chance.

Every search scores its leaves with a win chance for side 0 (the player the state was
built for). :class:`HeuristicEvaluator` is the hand-written one: HP on each side, boosts,
statuses, hazards and who wins the fight between the two actives, squashed to [0, 1].
The distilled value network reads it as an input (:mod:`policies.core.encoding`), and
every search agent can use it on its own.

This module is compiled with the rest of the world model (:mod:`pokegym.world._accel`):
a search calls it once per leaf, tens of thousands of times per decision.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pokegym.world.state import BattleState, SideState
from pokegym.world.transition import TransitionModel


def unseen_count(state: BattleState) -> int:
    """Opponent Pokémon never seen (``state.notes["unseen"]``; they are not in the state)."""
    value = state.notes.get("unseen", 0) if state.notes else 0
    return int(value) if isinstance(value, (int, float)) else 0


def terminal_value(state: BattleState) -> float | None:
    """1 / 0 / ½ when the battle is over for side 0, else None (unseen opponents count
    as left)."""
    ours = bool(state.sides[0].alive())
    theirs = bool(state.sides[1].alive()) or unseen_count(state) > 0
    if ours and theirs:
        return None
    if ours:
        return 1.0
    if theirs:
        return 0.0
    return 0.5


@dataclass
class HeuristicEvaluator:
    """A hand-written value: material and position, squashed to a win chance.

    ``score = Σ ours HP fraction − Σ theirs HP fraction`` (Pokémon not yet seen count as
    full HP) ``+ boost_weight · (net positive boosts of our active − of theirs)``
    ``− status_weight · (statused Pokémon of ours − of theirs)``
    ``− hazard_weight · (hazard layers on our side · our Pokémon left − on theirs · theirs)``
    ``+ alive_weight · (our Pokémon left − theirs)`` (unseen ones count as left)
    ``+ duel_weight · duel`` (with a model: who wins the fight between the actives,
    :meth:`duel`), then ``1 / (1 + exp(−scale · score))``. HP is the main term; the others
    break ties between states of equal material the way a player would. ``alive_weight``
    (0 by default: the distilled network reads this value as an input) makes a knock-out
    worth more than the HP it removes: a Pokémon on a sliver of HP still attacks.
    """

    model: TransitionModel | None = None
    scale: float = 1.2
    boost_weight: float = 0.08
    status_weight: float = 0.12
    hazard_weight: float = 0.03
    duel_weight: float = 0.35
    alive_weight: float = 0.0

    def value(self, state: BattleState) -> float:
        return self.value_and_duel(state)[0]

    def value_and_duel(self, state: BattleState) -> tuple[float, float]:
        """:meth:`value` and :meth:`duel` (0 when either active has fainted), the duel
        computed once."""
        done = terminal_value(state)
        ours, theirs = state.sides
        duel = 0.0
        if self.model is not None and ours.active_mon.hp > 0 and theirs.active_mon.hp > 0:
            duel = self.duel(state)
        if done is not None:
            return done, duel
        return self._squash(state, duel), duel

    def _squash(self, state: BattleState, duel: float) -> float:
        ours, theirs = state.sides
        unseen = unseen_count(state)
        score = _hp_sum(ours)
        score -= _hp_sum(theirs)
        score -= float(unseen)
        score += self.boost_weight * (boost_sum(ours) - boost_sum(theirs))
        score -= self.status_weight * (statused(ours) - statused(theirs))
        score -= self.hazard_weight * (
            hazard_layers(ours) * len(ours.alive()) - hazard_layers(theirs) * len(theirs.alive())
        )
        if self.alive_weight:
            left = len(ours.alive()) - len(theirs.alive()) - unseen
            score += self.alive_weight * left
        if self.model is not None:
            score += self.duel_weight * duel
        return 1.0 / (1.0 + math.exp(-self.scale * score))

    def duel(self, state: BattleState) -> float:
        """Who wins the fight between the two actives, in [-1, 1] (side 0's view).

        The expected turns each needs to KO the other with its best move (misses
        counted), the faster side winning a tie; scaled by the HP at stake.
        """
        ours, theirs = state.sides[0].active_mon, state.sides[1].active_mon
        if ours.hp <= 0 or theirs.hp <= 0:
            return 0.0
        model = self.model
        assert model is not None
        t_ours = fastest_ko(model, state, 0)
        t_theirs = fastest_ko(model, state, 1)
        if math.isinf(t_ours) and math.isinf(t_theirs):
            return 0.0
        faster = model.faster(state, 0)
        if t_ours < t_theirs or (t_ours == t_theirs and faster):
            return theirs.hp_fraction
        return -ours.hp_fraction

    def evaluate(self, states: Sequence[BattleState]) -> list[float]:
        return [self.value(s) for s in states]


def fastest_ko(model: TransitionModel, state: BattleState, side: int) -> float:
    """Expected turns for ``side``'s active to KO the other with its best move."""
    defender = state.sides[1 - side].active_mon
    best = math.inf
    for _, result, accuracy in model.attacks(state, side):
        if result is None or result.expected <= 0:
            continue
        if accuracy <= 0:
            continue
        best = min(best, math.ceil(defender.hp / result.expected) / accuracy)
    return best


def _hp_sum(side: SideState) -> float:
    total = 0.0
    for m in side.mons:
        if m.hp > 0:
            total += m.hp_fraction
    return total


def boost_sum(side: SideState) -> float:
    """Net positive boosts of ``side``'s active: its better attacking stage, half its
    Speed stage and a quarter of its defensive stages."""
    mon = side.active_mon
    if mon.hp <= 0:
        return 0.0
    boosts = mon.boosts
    return max(boosts[0], boosts[2]) + 0.5 * boosts[4] + 0.25 * (boosts[1] + boosts[3])


def statused(side: SideState) -> int:
    """Pokémon of ``side`` left with a major status."""
    return sum(1 for m in side.mons if m.hp > 0 and m.status)


def hazard_layers(side: SideState) -> int:
    """Entry-hazard layers on ``side``."""
    return int(side.stealth_rock) + side.spikes + side.toxic_spikes + int(side.sticky_web)
