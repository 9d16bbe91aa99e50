"""What makes two world-model states the same node of a search.

One key, at two resolutions:

- :func:`state_key` (exact: HP to three decimals, the weather's and the terrain's turns
  left): the maximin search's cache of states it has valued;
- :func:`outcome_key` (coarse: HP in sixteenths of the maximum, no field timers): the
  MCTS's sampled outcomes of a turn, so that damage rolls alone do not make a new node
  while a miss, a critical hit, a status or a faint do.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from pokegym.world.state import BattleState


def state_key(state: BattleState, *, sixteenths: bool = False) -> tuple[Any, ...]:
    """A hashable summary of everything the transition model reads (``sixteenths``: HP
    in sixteenths of the maximum and the field timers left out, as :func:`outcome_key`)."""
    if sixteenths:
        parts: list[Any] = [state.weather, state.terrain, state.trick_room, state.gravity]
    else:
        parts = [state.weather, state.weather_turns, state.terrain, state.terrain_turns,
                 state.trick_room, state.gravity]  # fmt: skip
    for side in state.sides:
        parts.append((side.active, side.stealth_rock, side.spikes, side.toxic_spikes,
                      side.sticky_web, side.reflect, side.light_screen, side.aurora_veil,
                      side.tailwind, side.tera_used))  # fmt: skip
        for m in side.mons:
            if sixteenths:
                hp: float = 0 if m.hp <= 0 else 1 + int(15 * m.hp / (m.stats[0] or 1))
            else:
                hp = round(m.hp, 3)
            parts.append((m.species, hp, m.status, m.status_turns, m.boosts, m.item,
                          m.terastallized, m.choice_lock, m.protect_streak))  # fmt: skip
    return tuple(parts)


def outcome_key(state: BattleState) -> Hashable:
    """What makes two sampled outcomes of a turn the same search node (see the module)."""
    return state_key(state, sixteenths=True)


__all__ = ["outcome_key", "state_key"]
