"""Reward functions, computed from one player's battle object.

``"win_loss"`` (the default): +1 for a win, -1 for a loss, 0 for a tie and on
every other step.

``"shaped"``: the win/loss reward plus a potential-based term. With the potential

    Φ(s) = hp · (Σ own HP fractions − Σ opponent HP fractions)
         + faint · (opponent Pokémon fainted − own Pokémon fainted)

each step pays Φ(s') − Φ(s), so the shaping sums to Φ(end) − Φ(start) over a
battle and cannot change which policy is optimal (Ng, Harada & Russell, 1999, for
γ = 1). Opponent Pokémon not yet seen count as full HP. Weights are arguments of
:class:`ShapedReward`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from poke_env.battle import AbstractBattle

from pokegym.hp import hp_fraction


class RewardFunction(Protocol):
    """Called once at the start of a battle and after every step."""

    def reset(self, battle: AbstractBattle) -> None: ...

    def __call__(self, battle: AbstractBattle) -> float: ...


def outcome(battle: AbstractBattle) -> float:
    """+1 won, -1 lost, 0 tie or unfinished."""
    if not battle.finished:
        return 0.0
    if battle.won:
        return 1.0
    if battle.lost:
        return -1.0
    return 0.0


@dataclass
class WinLossReward:
    """+``victory`` / −``victory`` at the end of the battle, 0 otherwise."""

    victory: float = 1.0

    def reset(self, battle: AbstractBattle) -> None:
        return None

    def __call__(self, battle: AbstractBattle) -> float:
        return self.victory * outcome(battle)


@dataclass
class ShapedReward:
    """Win/loss plus the potential-based HP and faint terms (see the module doc)."""

    victory: float = 1.0
    hp: float = 0.1
    faint: float = 0.1
    team_size: int = 6
    _last: float = 0.0

    def potential(self, battle: AbstractBattle) -> float:
        own_hp = sum(hp_fraction(mon) for mon in battle.team.values())
        own_fainted = sum(mon.fainted for mon in battle.team.values())
        opponents = list(battle.opponent_team.values())
        unseen = max(0, self.team_size - len(opponents))
        opp_hp = sum(hp_fraction(mon) for mon in opponents) + unseen
        opp_fainted = sum(mon.fainted for mon in opponents)
        return self.hp * (own_hp - opp_hp) + self.faint * (opp_fainted - own_fainted)

    def reset(self, battle: AbstractBattle) -> None:
        self._last = self.potential(battle)

    def __call__(self, battle: AbstractBattle) -> float:
        current = self.potential(battle)
        delta, self._last = current - self._last, current
        return delta + self.victory * outcome(battle)


def make_reward(spec: str | RewardFunction, team_size: int = 6) -> RewardFunction:
    """``"win_loss"``, ``"shaped"`` or any object following :class:`RewardFunction`."""
    if spec == "win_loss":
        return WinLossReward()
    if spec == "shaped":
        return ShapedReward(team_size=team_size)
    if isinstance(spec, str):
        raise ValueError(f"Unknown reward {spec!r}: use 'win_loss', 'shaped' or a RewardFunction.")
    if not callable(spec) or not callable(getattr(spec, "reset", None)):
        raise TypeError("A reward function needs reset(battle) and __call__(battle) -> float.")
    return spec
