"""A world-model state as the damage calculator sees it, and a sampled hit.

:func:`calculate` builds the calculator's :class:`~pokegym.world.damage.Combatant` of
each active Pokémon and the :class:`~pokegym.world.damage.Field` (weather, terrain,
Gravity, the defender's screens) from a :class:`~pokegym.world.state.BattleState`, and
asks :func:`pokegym.world.damage.calculate`; :func:`hp_key` is the part of a Pokémon's HP
that can change a hit's damage (the transition model's cache key); :func:`sample_damage`
draws one hit's damage from a result's rolls (``mode="sample"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pokegym.world import damage as damage_calc
from pokegym.world.damage import DamageResult
from pokegym.world.data import Dex
from pokegym.world.state import BattleState, MonState


def calculate(dex: Dex, s: BattleState, side: int, move_id: str) -> DamageResult | None:
    """The calculator's result for ``side``'s active using ``move_id`` on the other active
    (None when the calculator does not know the move or a Pokémon)."""
    user_team, target_team = s.sides[side], s.sides[1 - side]
    user, target = user_team.active_mon, target_team.active_mon
    field = damage_calc.Field(
        weather=s.weather,
        terrain=s.terrain,
        gravity=s.gravity > 0,
        attacker_side=damage_calc.Side(),
        defender_side=damage_calc.Side(
            reflect=target_team.reflect > 0,
            light_screen=target_team.light_screen > 0,
            aurora_veil=target_team.aurora_veil > 0,
        ),
    )
    try:
        return damage_calc.calculate(
            dex, combatant(user), combatant(target), move_id, field,
            use_cache=False,  # the transition model caches by its own cheaper key
        )  # fmt: skip
    except (KeyError, ValueError):
        return None


def hp_key(mon: MonState, exact_hp: bool) -> int:
    """The part of ``mon``'s HP that can change a hit's damage."""
    # HP changes damage only at thresholds (full HP: Multiscale; half: Brine; a third:
    # Blaze and co.: one bit each) except for the moves whose power scales with HP
    # (sixteenths of the max HP).
    hp = mon.hp
    top = mon.stats[0] or 1
    if exact_hp:
        return int(hp * 16 / top)
    return (hp >= top) + 2 * (2 * hp <= top) + 4 * (3 * hp <= top)


def combatant(mon: MonState) -> Any:
    """``mon`` as the damage calculator reads it."""
    stats, boosts = mon.stats, mon.boosts
    boost_stages = {"atk": boosts[0], "def": boosts[1], "spa": boosts[2], "spd": boosts[3],
                    "spe": boosts[4], "accuracy": boosts[5], "evasion": boosts[6]}  # fmt: skip
    return damage_calc.Combatant(
        species=mon.species,
        level=mon.level,
        types=mon.current_types(),
        stats={
            "hp": stats[0],
            "atk": stats[1],
            "def": stats[2],
            "spa": stats[3],
            "spd": stats[4],
            "spe": stats[5],
        },
        hp=max(1, round(mon.hp)),
        boosts=boost_stages,
        ability=mon.ability,
        item=mon.item,
        status=mon.status,
        tera_type=mon.tera_type,
        terastallized=mon.terastallized,
        weight=mon.weight,
    )


def sample_damage(result: Any, rng: np.random.Generator | None) -> int:
    """One draw of a hit's damage: a roll per hit (multi-hit moves), each a critical hit
    with chance 1/24, plus the damage of a Disguise breaking."""
    assert rng is not None
    rolls = result.rolls
    hits = 1
    hit_info = getattr(result, "hits", None)
    if isinstance(hit_info, tuple) and hit_info and isinstance(hit_info[0], int):
        hits = max(1, int(hit_info[0]))
    total = int(getattr(result, "form_break_hp", 0))  # a Disguise breaking
    crit_rolls = getattr(result, "crit_rolls", rolls) or rolls
    for _ in range(hits):
        pool = crit_rolls if rng.random() < 1 / 24 else rolls
        total += int(pool[int(rng.integers(len(pool)))])
    return total


__all__ = ["calculate", "combatant", "hp_key", "sample_damage"]
