"""Features of a side's actions in a world-model position: what players of the game weigh.

Each legal action of a side gets the values of :data:`FEATURES` (the share of the target's
HP an attack takes, whether it knocks out, a threatened Pokémon's way out, a hazard not
yet laid, HP missing for a recovery move, ...). The opponent model of the search
(:mod:`policies.opponent_model`) weighs them with weights fitted on what opponents played;
the search asks for them at every node it creates, so they are compiled with the rest of
the world model (:mod:`pokegym.world._accel`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pokegym.world.move_effects import HAZARD_LAYERS, PIVOTS, RECOVERY_WEATHER
from pokegym.world.state import BattleState, MonState
from pokegym.world.transition import HAZARD_REMOVAL, PROTECTS, Action, TransitionModel
from policies.core.action_prior import HeuristicPrior

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

HEALING = RECOVERY_WEATHER | {"rest", "shoreup", "wish", "strengthsap", "lifedew",
                              "junglehealing"}  # fmt: skip
"""Healing moves whose Showdown entry has no ``heal`` fraction (or that Shore Up shares)."""
MAJOR_STATUS = frozenset({"brn", "par", "psn", "tox", "slp"})

(ATTACK_DAMAGE, ATTACK_KO, STRONGEST_ATTACK, PRIORITY_KO, STATUS_MOVE, SETUP, SETUP_IN_DANGER,
 HAZARD, HAZARD_LAID, CLEARS_HAZARDS, RECOVERY, RECOVERY_AT_FULL, INFLICT_STATUS,
 STATUS_REDUNDANT, PROTECT, PIVOT, SWITCH, SWITCH_DANGER, SWITCH_RELIEF, SWITCH_INCOMING_HP,
 SWITCH_ACTIVE_HP, TERA) = range(len(FEATURES))  # fmt: skip
"""The place of each feature in a row (the order of :data:`FEATURES`)."""


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


class ActionFeatures:
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
        own_hazards = any(_layers(state, side, h) for h in HAZARD_LAYERS)
        rows = []
        for kind, arg, tera in actions:
            row = [0.0] * len(FEATURES)
            if kind == "move":
                self._move(row, str(arg), damage, best, danger, user_hp, own_hazards,
                           state, foe, target)  # fmt: skip
                row[TERA] = float(bool(tera))
            elif kind == "switch":
                incoming = state.sides[side].mons[int(arg)]
                row[SWITCH] = 1.0
                row[SWITCH_DANGER] = danger
                if danger > 0:
                    row[SWITCH_RELIEF] = danger * self._damage.relief(target, user, incoming)
                row[SWITCH_INCOMING_HP] = _hp_share(incoming)
                row[SWITCH_ACTIVE_HP] = user_hp
            rows.append(row)
        return rows

    def scores(
        self, state: BattleState, side: int, actions: Sequence[Action], weights: Sequence[float]
    ) -> list[float]:
        """The weighted sum of each action's features."""
        out = []
        for row in self.features(state, side, actions):
            total = 0.0
            for i in range(len(row)):
                total += weights[i] * row[i]
            out.append(total)
        return out

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
            row[ATTACK_DAMAGE], row[ATTACK_KO] = share, ko
            row[STRONGEST_ATTACK] = float(share > 0 and share >= best - 1e-9)
            info = self.model.move_info(move)
            if info is not None and info.priority > 0:
                row[PRIORITY_KO] = ko
            if move in PIVOTS:
                row[PIVOT] = 1.0
            return
        info = self.model.move_info(move)
        row[STATUS_MOVE] = 1.0
        if info is None:
            return
        boosts = info.boosts if info.target_self else None
        if boosts and any(v > 0 for v in boosts.values()):
            row[SETUP], row[SETUP_IN_DANGER] = 1.0, danger
        if move in HAZARD_LAYERS:
            full = _layers(state, foe, move) >= HAZARD_LAYERS[move]
            row[HAZARD_LAID if full else HAZARD] = 1.0
        if move in HAZARD_REMOVAL and own_hazards:
            row[CLEARS_HAZARDS] = 1.0
        if info.heal or move in HEALING:
            row[RECOVERY] = 1.0 - user_hp
            row[RECOVERY_AT_FULL] = float(user_hp >= 0.95)
        if info.status in MAJOR_STATUS:
            row[STATUS_REDUNDANT if target.status else INFLICT_STATUS] = 1.0
        if move in PROTECTS:
            row[PROTECT] = 1.0
        if move in PIVOTS:
            row[PIVOT] = 1.0
