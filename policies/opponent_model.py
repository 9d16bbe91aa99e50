"""A learned model of what opponents play: a conditional logit over the opponent's actions.

The MCTS predicts the opponent through its prior for side 1 (PUCT). The damage prior
(:class:`~pokegym.world.action_prior.HeuristicPrior`) puts nearly all of that mass on the
strongest attack, where real opponents also switch out of bad matchups, set hazards, heal,
set up and spread status. :class:`OpponentPrior` scores each legal action of a side by a
weighted sum of a few features of the position that players of the game weigh (the share
of the target's HP an attack takes, whether it knocks out, a threatened Pokémon's way out,
a hazard not yet laid, HP missing for a recovery move, ...; :data:`FEATURES`) and turns the
scores into probabilities with a softmax over the legal actions: a *conditional logit*,
the multinomial model of discrete choice.

The weights are fitted by maximum likelihood on what opponents actually played
(``pokegym train opponent``, :mod:`train.opponent_model`): each example is one decision of
an opponent, seen from the other chair (the position as its player's belief guesses it,
the opponent's legal actions there, and the one it chose). Few weights, so a few thousand
decisions fit them, and the model reads: a weight says how much an opponent cares for one
thing. A model is a JSON file (:func:`load_opponent_prior`); the one shipped in
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

from pokegym.world.action_prior import HeuristicPrior
from pokegym.world.state import BattleState, MonState
from pokegym.world.transition import Action, TransitionModel

DEFAULT_MODEL = Path(__file__).parent / "checkpoints" / "opponent-prior.json"

FEATURES = (
    "attack_damage",  # share of the target's HP the attack takes (expected, misses counted)
    "attack_ko",  # the chance the attack knocks the target out (it hits, and does enough)
    "strongest_attack",  # the attack takes the largest share of all the user's attacks
    "priority_ko",  # a priority attack that knocks out
    "status_move",  # a move that does no damage
    "setup",  # a status move that raises the user's own stats
    "setup_in_danger",  # setup × the share of HP the foe's best attack takes now
    "hazard",  # a hazard the foe's side does not have yet (or more Spikes layers)
    "hazard_laid",  # a hazard already laid in full on the foe's side
    "hazard_removal",  # Rapid Spin, Defog, ... with hazards on the user's side
    "recovery",  # a healing move × the share of the user's HP missing
    "recovery_at_full",  # a healing move at (almost) full HP
    "inflict_status",  # a major status (burn, poison, paralysis, sleep) on a healthy target
    "status_redundant",  # such a move against a target that already has a status
    "protect",  # Protect and its kin
    "pivot",  # U-turn, Volt Switch, Flip Turn, Parting Shot, ...
    "switch",  # a switch
    "switch_danger",  # a switch × the share of HP the foe's best attack takes from the active
    "switch_relief",  # switch_danger × how much weaker the foe's attacks are on the incoming
    "switch_incoming_hp",  # a switch × the incoming Pokémon's share of HP left
    "switch_active_hp",  # a switch × the active Pokémon's share of HP left
    "tera",  # the move with Terastallization
)

HAZARDS = {"stealthrock": 1, "spikes": 3, "toxicspikes": 2, "stickyweb": 1}
"""Hazards by move id, with the most layers the side can hold."""
REMOVAL = frozenset({"rapidspin", "defog", "mortalspin", "tidyup", "courtchange"})
PROTECTS = frozenset({"protect", "detect", "kingsshield", "spikyshield", "banefulbunker",
                      "silktrap", "burningbulwark", "obstruct", "maxguard"})  # fmt: skip
PIVOTS = frozenset({"uturn", "voltswitch", "flipturn", "partingshot", "teleport", "shedtail",
                    "chillyreception", "batonpass"})  # fmt: skip
HEALING = frozenset({"rest", "moonlight", "morningsun", "synthesis", "shoreup", "wish",
                     "strengthsap", "lifedew", "junglehealing"})  # fmt: skip
MAJOR_STATUS = frozenset({"brn", "par", "psn", "tox", "slp"})


class OpponentPriorError(ValueError):
    """A model file that cannot be read as an opponent prior."""


def _hp_share(mon: MonState) -> float:
    return min(1.0, mon.hp_fraction)


def _layers(state: BattleState, side: int, hazard: str) -> int:
    team = state.sides[side]
    return {
        "stealthrock": int(team.stealth_rock),
        "spikes": team.spikes,
        "toxicspikes": team.toxic_spikes,
        "stickyweb": int(team.sticky_web),
    }[hazard]


class OpponentFeatures:
    """The :data:`FEATURES` of each legal action of a side in a world-model state."""

    def __init__(self, model: TransitionModel):
        self.model = model
        self._damage = HeuristicPrior(model)  # its danger and relief (and their cache)

    def features(
        self, state: BattleState, side: int, actions: Sequence[Action]
    ) -> list[list[float]]:
        model = self.model
        user = state.sides[side].active_mon
        target = state.sides[1 - side].active_mon
        foe = 1 - side
        damage: dict[str, tuple[float, float]] = {}
        best = 0.0
        if user.hp > 0 and target.hp > 0 and any(a[0] == "move" for a in actions):
            for move, result, hit in model.attacks(state, side):
                if result is None:
                    continue
                share = min(1.0, result.expected * hit / max(1.0, target.hp))
                ko = hit if result.expected >= target.hp else 0.0
                damage[move] = (share, ko)
                best = max(best, share)
        danger = 0.0
        if user.hp > 0 and target.hp > 0:
            danger = self._damage.danger(state, side)
        user_hp = _hp_share(user)
        own_hazards = any(_layers(state, side, h) for h in HAZARDS)
        rows = []
        for kind, arg, tera in actions:
            row = [0.0] * len(FEATURES)
            if kind == "move":
                self._move(row, str(arg), damage, best, danger, user_hp, own_hazards,
                           state, foe, target)  # fmt: skip
                row[21] = float(bool(tera))
            elif kind == "switch":
                incoming = state.sides[side].mons[int(arg)]
                row[16] = 1.0
                row[17] = danger
                if danger > 0:
                    row[18] = danger * self._damage.relief(target, user, incoming)
                row[19] = _hp_share(incoming)
                row[20] = user_hp
            rows.append(row)
        return rows

    def _move(
        self,
        row: list[float],
        move: str,
        damage: dict[str, tuple[float, float]],
        best: float,
        danger: float,
        user_hp: float,
        own_hazards: bool,
        state: BattleState,
        foe: int,
        target: MonState,
    ) -> None:
        found = damage.get(move)
        if found is not None:
            share, ko = found
            row[0], row[1] = share, ko
            row[2] = float(share > 0 and share >= best - 1e-9)
            info = self.model.move_info(move)
            if info is not None and info.priority > 0:
                row[3] = ko
            if move in PIVOTS:
                row[15] = 1.0
            return
        info = self.model.move_info(move)
        row[4] = 1.0
        if info is None:
            return
        boosts = info.boosts if info.target_self else None
        if boosts and any(v > 0 for v in boosts.values()):
            row[5], row[6] = 1.0, danger
        if move in HAZARDS:
            full = _layers(state, foe, move) >= HAZARDS[move]
            row[8 if full else 7] = 1.0
        if move in REMOVAL and own_hazards:
            row[9] = 1.0
        if info.heal or move in HEALING:
            row[10] = 1.0 - user_hp
            row[11] = float(user_hp >= 0.95)
        if info.status in MAJOR_STATUS:
            row[13 if target.status else 12] = 1.0
        if move in PROTECTS:
            row[14] = 1.0
        if move in PIVOTS:
            row[15] = 1.0


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
    """A :class:`~policies.mcts.Prior` for ``sides`` from a fitted :class:`OpponentModel`;
    other sides get ``base``'s prior (uniform without one)."""

    def __init__(
        self,
        model: TransitionModel,
        fitted: OpponentModel,
        base: Any | None = None,
        sides: tuple[int, ...] = (1,),
    ):
        self.features = OpponentFeatures(model)
        self.weights = fitted.weights
        self.base = base
        self.sides = sides

    def scores(self, state: BattleState, side: int, actions: Sequence[Action]) -> list[float]:
        weights = self.weights
        return [sum(w * x for w, x in zip(weights, row, strict=True))
                for row in self.features.features(state, side, actions)]  # fmt: skip

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


__all__ = ["DEFAULT_MODEL", "FEATURES", "OpponentFeatures", "OpponentModel", "OpponentPrior",
           "OpponentPriorError", "load_opponent_model", "softmax"]  # fmt: skip
