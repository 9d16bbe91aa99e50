"""A prior over a side's actions from one look at the damage each move does now.

The MCTS (``prior=heuristic``) steers the first visits of every node's actions by this
prior (PUCT): a search asks it twice per node it creates, so it is compiled with the rest
of the world model (:mod:`pokegym.world._accel`).
"""

from __future__ import annotations

import math
from typing import Any

from pokegym.world.state import BattleState, MonState
from pokegym.world.transition import Action, TransitionModel


class HeuristicPrior:
    """A prior over a side's actions from one look at the damage each move does now.

    An attack scores the share of the target's HP it takes (expected, misses counted;
    1 for a likely KO, plus ``ko_bonus``); a status move ``status_score``; a switch
    ``switch_score``, plus, with ``switch_gain``, a bonus for leaving a threatened
    Pokémon for one that takes the threat better: ``switch_gain × danger × relief``,
    where danger is the share of the active's HP the foe's best attack takes now, and
    relief how much weaker the foe's attacks (type effectiveness × STAB × power) are
    against the incoming Pokémon than against the active one (in [0, 1]). Players switch
    out of bad matchups; without it the search expects the opponent to stay in. A
    Terastallized variant scores ``tera_factor`` times its plain move (Tera is a
    one-time choice: searched when its value shows, not first). The prior is a softmax
    of the scores at ``temperature``.
    """

    def __init__(
        self,
        model: TransitionModel,
        temperature: float = 0.25,
        status_score: float = 0.3,
        switch_score: float = 0.2,
        ko_bonus: float = 0.5,
        tera_factor: float = 0.5,
        switch_gain: float = 0.0,
    ):
        self.model = model
        self.temperature = temperature
        self.status_score = status_score
        self.switch_score = switch_score
        self.ko_bonus = ko_bonus
        self.tera_factor = tera_factor
        self.switch_gain = switch_gain
        self._threats: dict[tuple[Any, ...], float] = {}

    def scores(self, state: BattleState, side: int, actions: list[Action]) -> list[float]:
        model = self.model
        user = state.sides[side].active_mon
        target = state.sides[1 - side].active_mon
        damage: dict[str, float] = {}
        if user.hp > 0 and target.hp > 0 and any(a[0] == "move" for a in actions):
            for move, result, hit in model.attacks(state, side):
                if result is None:
                    damage[move] = 0.0
                    continue
                share = min(1.0, result.expected * hit / max(1.0, target.hp))
                ko = self.ko_bonus * hit if result.expected >= target.hp else 0.0
                damage[move] = share + ko
        danger = 0.0
        if self.switch_gain and user.hp > 0 and target.hp > 0:
            if any(a[0] == "switch" for a in actions):
                danger = self.danger(state, side)
        out = []
        for kind, arg, tera in actions:
            if kind == "move":
                score = damage.get(arg, self.status_score)
                out.append(score * self.tera_factor if tera else score)
            elif kind == "switch":
                score = self.switch_score
                if danger > 0:
                    incoming = state.sides[side].mons[int(arg)]
                    score += self.switch_gain * danger * self.relief(target, user, incoming)
                out.append(score)
            else:
                out.append(0.0)
        return out

    def danger(self, state: BattleState, side: int) -> float:
        """The share of ``side``'s active's HP the foe's best attack takes now (misses
        counted, at most 1)."""
        mon = state.sides[side].active_mon
        best = 0.0
        for _, result, hit in self.model.attacks(state, 1 - side):
            if result is not None:
                best = max(best, result.expected * hit)
        return min(1.0, best / max(1.0, mon.hp))

    def relief(self, foe: MonState, active: MonState, incoming: MonState) -> float:
        """How much weaker ``foe``'s attacks are against ``incoming`` than against
        ``active``: ``1 - threat(incoming) / threat(active)``, clipped to [0, 1]."""
        now = self.threat(foe, active)
        if now <= 0:
            return 0.0
        return min(1.0, max(0.0, 1.0 - self.threat(foe, incoming) / now))

    def threat(self, foe: MonState, defender: MonState) -> float:
        """The foe's strongest attack against ``defender`` by type alone: base power ×
        STAB × type effectiveness (the defender's Tera type once it has Terastallized)."""
        types = (
            (defender.tera_type,)
            if defender.terastallized and defender.tera_type
            else (defender.types)
        )
        key = (foe.moves, foe.types, foe.terastallized, foe.tera_type, types)
        found = self._threats.get(key)
        if found is not None:
            return found
        model = self.model
        attacking = set(foe.types)
        if foe.terastallized and foe.tera_type:
            attacking.add(foe.tera_type)
        best = 0.0
        for move in foe.moves:
            info = model.move_info(move)
            if info is None or info.category == "Status":
                continue
            power = float(info.entry.get("basePower") or 60)
            stab = 1.5 if info.type in attacking else 1.0
            best = max(best, power * stab * model.dex.effectiveness(info.type, types))
        if len(self._threats) >= 4096:
            self._threats.clear()
        self._threats[key] = best
        return best

    def prior(self, state: BattleState, side: int, actions: list[Action]) -> list[float]:
        if len(actions) == 1:
            return [1.0]
        scores = self.scores(state, side, actions)
        top = max(scores)
        weights = [math.exp((v - top) / self.temperature) for v in scores]
        total = sum(weights)
        return [w / total for w in weights]
