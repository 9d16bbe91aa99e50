"""A prior over actions for the searches (:class:`~policies.search.mcts.Prior`, the Protocol the
MCTS takes) that moves part of the root's mass onto one favoured action: :class:`AnchoredPrior`.

The priors themselves: the damage prior (:class:`~policies.core.action_prior.HeuristicPrior`),
the fitted opponent model (:class:`~policies.opponent_model.OpponentPrior`), and at the root
the value network's policy head or a language model (``prior=`` of the ``mcts`` agent).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pokegym.world.state import BattleState
from pokegym.world.transition import Action


class AnchoredPrior:
    """The base prior (uniform without one) with ``share`` of the mass moved onto one
    favoured action of side 0 at each root state (the rule-based agent's choice).

    ``root`` (optional) replaces the base prior for side 0 at the root states: a
    probability for each of our root actions (the network's policy head).

    ``opponent_floor`` mixes that share of a uniform prior into side 1's prior at every
    node: the damage prior puts nearly all of the opponent's mass on its strongest attack,
    so its switches and status moves were hardly searched (a switch that the opponent
    then made had drawn almost none of the search's visits; docs/experiments/mcts-search.md,
    section 8).
    """

    def __init__(
        self,
        base: Any,
        roots: Sequence[BattleState],
        favoured: Action | None,
        share: float,
        root: dict[Action, float] | None = None,
        opponent_floor: float = 0.0,
    ):
        self.base = base
        self.roots = {id(s) for s in roots}
        self.favoured = favoured
        self.share = share
        self.root = root
        self.opponent_floor = opponent_floor

    def prior(self, state: BattleState, side: int, actions: list[Action]) -> list[float]:
        n = len(actions)
        at_root = side == 0 and id(state) in self.roots
        if at_root and self.root is not None:
            probs = [self.root.get(a, 0.0) for a in actions]
            total = sum(probs)
            probs = [p / total for p in probs] if total > 0 else [1.0 / n] * n
        elif self.base is not None:
            probs = self.base.prior(state, side, actions)
        else:
            probs = [1.0 / n] * n
        if at_root and n > 1 and self.favoured in actions:
            probs = [(1.0 - self.share) * p for p in probs]
            probs[actions.index(self.favoured)] += self.share
        floor = self.opponent_floor
        if side == 1 and floor and n > 1:
            probs = [(1.0 - floor) * p + floor / n for p in probs]
        return probs


__all__ = ["AnchoredPrior"]
