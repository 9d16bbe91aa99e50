"""A learned model of what opponents play: a conditional logit over the opponent's actions.

The MCTS predicts the opponent through its prior for side 1 (PUCT). The damage prior
(:class:`~policies.core.action_prior.HeuristicPrior`) puts nearly all of that mass on the
strongest attack, where real opponents also switch out of bad matchups, set hazards, heal,
set up and spread status. :class:`OpponentPrior` scores each legal action of a side by a
weighted sum of a few features of the position that players of the game weigh (the share
of the target's HP an attack takes, whether it knocks out, a threatened Pokémon's way out,
a hazard not yet laid, HP missing for a recovery move, ...;
:data:`~policies.core.action_features.FEATURES`) and turns the
scores into probabilities with a softmax over the legal actions: a *conditional logit*,
the multinomial model of discrete choice.

The weights are fitted by maximum likelihood on what opponents actually played
(``pokegym train opponent``, :mod:`train.opponent_model`): each example is one decision of
an opponent, seen from the other chair (the position as its player's belief guesses it,
the opponent's legal actions there, and the one it chose). Few weights, so a few thousand
decisions fit them, and the model reads: a weight says how much an opponent cares for one
thing. A model is a JSON file (:func:`load_opponent_model`); the one shipped in
``policies/checkpoints/opponent-prior.json`` was fitted on the play of several agents (its
``provenance`` names them).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pokegym.world.state import BattleState
from pokegym.world.transition import Action, TransitionModel
from policies.core.action_features import FEATURES, ActionFeatures

DEFAULT_MODEL = Path(__file__).parent / "checkpoints" / "opponent-prior.json"


class OpponentPriorError(ValueError):
    """A model file that cannot be read as an opponent prior."""


@dataclass(frozen=True)
class OpponentModel:
    """Fitted weights over :data:`FEATURES`, and where they came from."""

    weights: tuple[float, ...]
    provenance: dict[str, Any]

    def to_json(self) -> str:
        return json.dumps({"features": list(FEATURES), "weights": list(self.weights),
                           "provenance": self.provenance}, indent=1)  # fmt: skip


def load_opponent_model(path: str | Path = DEFAULT_MODEL) -> OpponentModel:
    """Read a model file (:meth:`OpponentModel.to_json`).

    Raises:
        OpponentPriorError: the file is missing, not JSON, or fitted on other features.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise OpponentPriorError(
            f"no opponent model at {path}: fit one with `pokegym train opponent`"
        ) from None
    except (OSError, json.JSONDecodeError) as exc:
        raise OpponentPriorError(f"{path} is not an opponent model: {exc}") from None
    if not isinstance(data, dict) or data.get("features") != list(FEATURES):
        raise OpponentPriorError(
            f"{path} was fitted on other features than this version's; fit it again with "
            "`pokegym train opponent`"
        )
    weights = data.get("weights")
    if not isinstance(weights, list) or len(weights) != len(FEATURES):
        raise OpponentPriorError(f"{path} has no weight for each feature")
    return OpponentModel(tuple(float(w) for w in weights), dict(data.get("provenance") or {}))


class OpponentPrior:
    """A :class:`~policies.search.mcts.Prior` for ``sides`` from a fitted :class:`OpponentModel`;
    other sides get ``base``'s prior (uniform without one)."""

    def __init__(
        self,
        model: TransitionModel,
        fitted: OpponentModel,
        base: Any | None = None,
        sides: tuple[int, ...] = (1,),
    ):
        self.features = ActionFeatures(model)
        self.weights = fitted.weights
        self.base = base
        self.sides = sides

    def scores(self, state: BattleState, side: int, actions: Sequence[Action]) -> list[float]:
        return self.features.scores(state, side, actions, self.weights)

    def prior(self, state: BattleState, side: int, actions: list[Action]) -> list[float]:
        n = len(actions)
        if n == 1:
            return [1.0]
        if side not in self.sides:
            return self.base.prior(state, side, actions) if self.base else [1.0 / n] * n
        return softmax(self.scores(state, side, actions))


def softmax(scores: Sequence[float]) -> list[float]:
    top = max(scores)
    weights = [math.exp(v - top) for v in scores]
    total = sum(weights)
    return [w / total for w in weights]


__all__ = ["DEFAULT_MODEL", "FEATURES", "ActionFeatures", "OpponentModel", "OpponentPrior",
           "OpponentPriorError", "load_opponent_model", "softmax"]  # fmt: skip
