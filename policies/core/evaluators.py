"""Leaf evaluators of the searches beyond the hand-written one
(:class:`~policies.core.evaluation.HeuristicEvaluator`): :class:`ValueNetEvaluator`, the
distilled value network over the world-model state encoding, optionally blended with an
experience memory and the hand-written value. (The rollout evaluator is
:class:`policies.rollout.RolloutEvaluator`.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pokegym.world.state import BattleState
from policies.value_net import DistilledNetwork, EnsembleNetwork, StateEncoder


class ValueNetEvaluator:
    """Leaf values from the value network, optionally blended (weights in [0, 1]):

    ``v = (1 − m − h) · net + m · memory k-NN value + h · hand-written value``.
    """

    def __init__(
        self,
        encoder: StateEncoder,
        network: DistilledNetwork | EnsembleNetwork,
        memory: Any | None = None,
        memory_weight: float = 0.0,
        heuristic_weight: float = 0.0,
        k: int = 16,
    ):
        if memory_weight < 0 or heuristic_weight < 0 or memory_weight + heuristic_weight > 1:
            raise ValueError("memory_weight and heuristic_weight are >= 0 and sum to at most 1")
        self.encoder = encoder
        self.network = network
        self.memory = memory if memory_weight > 0 else None
        self.memory_weight = memory_weight if self.memory is not None else 0.0
        self.heuristic_weight = heuristic_weight
        self.k = k
        self.calls = 0
        self.states = 0

    def evaluate(self, states: Sequence[BattleState]) -> list[float]:
        self.calls += 1
        self.states += len(states)
        if len(states) == 1 and self.memory is None and not self.heuristic_weight:
            # One leaf at a time (the MCTS): the network's vector path.
            return [self.network.win_probability_one(self.encoder.encode(states[0]))]
        return self.evaluate_batch(states)

    def evaluate_batch(self, states: Sequence[BattleState]) -> list[float]:
        """:meth:`evaluate` through the batch path whatever the number of states."""
        features = self.encoder.encode_many(states)
        value = self.network.win_probability(features).astype(np.float64)
        net_weight = 1.0 - self.memory_weight - self.heuristic_weight
        value *= net_weight
        if self.memory is not None:
            value += self.memory_weight * self.memory.value(self.network.embed(features), self.k)
        if self.heuristic_weight:
            # The hand-written value is one of the encoded features (its second-to-last slot).
            value += self.heuristic_weight * features[:, -2]
        return [float(v) for v in value]


__all__ = ["ValueNetEvaluator"]
