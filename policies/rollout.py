"""Leaf values after a short greedy playout (the ``mcts`` option ``rollout_turns``).

A static evaluator judges a leaf as it stands: HP, boosts, statuses, who wins the duel of
the two actives. What it cannot see is what the next turns do to that judgement: the
Pokémon that comes in after a knock-out, a boosted attacker sweeping, a faster one
finishing a weakened foe. :class:`RolloutEvaluator` plays a few turns from the leaf first,
both sides choosing greedily (the damage prior's best-scored action,
:class:`~policies.core.action_prior.HeuristicPrior`), on the world model's expected turn,
and then asks the inner evaluator for the value of the state it reached. Classic MCTS
plays out to the end with a cheap policy; here the playout is truncated and the
inner evaluator (hand-written or the value network) values where it stops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pokegym.world.state import BattleState
from pokegym.world.transition import Action, TransitionModel
from policies.core.action_prior import HeuristicPrior
from policies.core.battle import legal_actions
from policies.core.evaluation import terminal_value


class RolloutEvaluator:
    """``inner``'s value of the state reached after up to ``turns`` greedy turns.

    Args:
        model: the world model (its expected turn, so a playout is deterministic).
        inner: the evaluator of the state a playout ends in (``evaluate(states)``).
        turns: turns played from each leaf (a playout stops early when the battle ends).
        prior: the scores both sides play by (default: a :class:`HeuristicPrior`).
    """

    def __init__(
        self, model: TransitionModel, inner: Any, turns: int, prior: HeuristicPrior | None = None
    ):
        if turns < 1:
            raise ValueError(f"turns is the number of turns a playout plays (>= 1), got {turns}")
        self.model = model
        self.inner = inner
        self.turns = turns
        self.prior = prior if prior is not None else HeuristicPrior(model)

    def greedy(self, state: BattleState, side: int) -> Action | None:
        """``side``'s best-scored legal action (the first of equals); None: no action."""
        actions = legal_actions(self.model, state, side)
        if not actions:
            return None
        scores = self.prior.scores(state, side, actions)
        best = max(range(len(actions)), key=scores.__getitem__)
        return actions[best]

    def playout(self, state: BattleState) -> BattleState:
        """The state after up to ``turns`` greedy turns from ``state``."""
        for _ in range(self.turns):
            if terminal_value(state) is not None:
                break
            ours, theirs = self.greedy(state, 0), self.greedy(state, 1)
            if ours is None or theirs is None:
                break
            state = self.model.step(state, ours, theirs)
        return state

    def evaluate(self, states: Sequence[BattleState]) -> list[float]:
        return list(self.inner.evaluate([self.playout(s) for s in states]))
