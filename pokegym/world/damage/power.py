"""Base power: the move's own power callback (weight, speed, HP, boosts, Fling...), the
``BasePower`` event's handlers and the Tera floor, as Showdown computes them.
"""

from __future__ import annotations

import math
from typing import Final

from pokegym.world.damage.context import (
    _Ctx,
    _item_removable,
    _type_mod_full,
    _weight_hg,
    _weight_power,
)
from pokegym.world.damage.stats import _speed_stat
from pokegym.world.damage.tables import (
    _ATE,
    _MASKS,
    _ORB_ITEMS,
    _SUB_ABILITY,
    _SUB_ITEM,
    _SUB_MOVE,
    _SUB_TERRAIN,
    _SUB_VOLATILE,
    _TYPE_ITEMS,
    _add,
    _Handler,
    _run_event,
)


# Long on purpose: one branch per move with a ``basePowerCallback`` and one handler per
# effect of the ``BasePower`` event, in Showdown's order, read top to bottom against
# data/moves.js and the event's handlers; split up, that order would be hard to check.
def _base_power(ctx: _Ctx, hit: int, first_hit: bool) -> int:
    """Base power after the move's callback, the BasePower event and the Tera floor."""
    m, atk, dfn = ctx.move, ctx.atk, ctx.dfn
    mid = m.id
    bp = ctx.bp_base
    dex = ctx.dex
    # basePowerCallback
    if mid == "acrobatics":
        bp = bp * 2 if not atk.item else bp
    elif mid == "electroball":
        target_speed = _speed_stat(ctx, dfn, ctx.def_ability, ctx.def_item, ctx.def_paradox, False)
        own_speed = _speed_stat(ctx, atk, ctx.atk_ability, ctx.atk_item, ctx.atk_paradox, True)
        ratio = own_speed // target_speed if target_speed else 0
        bp = (40, 60, 80, 120, 150)[min(ratio, 4)]
    elif mid == "gyroball":
        target_speed = _speed_stat(ctx, dfn, ctx.def_ability, ctx.def_item, ctx.def_paradox, False)
        own_speed = _speed_stat(ctx, atk, ctx.atk_ability, ctx.atk_item, ctx.atk_paradox, True)
        bp = min(150, 25 * target_speed // own_speed + 1) if own_speed else 1
    elif mid in ("eruption", "waterspout", "dragonenergy"):
        scaled = bp * ctx.atk_hp / ctx.atk_max_hp
        bp = max(1, math.floor(scaled)) if scaled else 0
    elif mid in ("heavyslam", "heatcrash"):
        own = _weight_hg(atk, ctx.atk_ability, ctx.atk_item, dex)
        target = _weight_hg(dfn, ctx.def_ability, ctx.def_item, dex)
        bp = 40
        for factor, power in ((5, 120), (4, 100), (3, 80), (2, 60)):
            if own >= target * factor:
                bp = power
                break
    elif mid in ("lowkick", "grassknot"):
        bp = _weight_power(_weight_hg(dfn, ctx.def_ability, ctx.def_item, dex))
    elif mid in ("hex", "infernalparade"):
        if dfn.status or ctx.def_ability == "comatose":
            bp *= 2
    elif mid in ("storedpower", "powertrip"):
        bp += 20 * sum(v for v in (atk.boosts or {}).values() if v > 0)
    elif mid == "terablast":
        if atk.terastallized and atk.tera_type == "Stellar":
            bp = 100
    elif mid == "tripleaxel":
        bp = 20 * hit
    elif mid == "triplekick":
        bp = 10 * hit
    elif mid == "ragefist":
        bp = min(350, 50 + 50 * atk.times_attacked)
    elif mid == "lastrespects":
        bp = 50 + 50 * atk.fainted_allies
    elif mid in ("flail", "reversal"):
        ratio = max(ctx.atk_hp * 48 // ctx.atk_max_hp, 1)
        bp = (
            200
            if ratio < 2
            else 150
            if ratio < 5
            else 100
            if ratio < 10
            else 80
            if ratio < 17
            else 40
            if ratio < 33
            else 20
        )
    elif mid in ("boltbeak", "fishiousrend"):
        if ctx.target_moved is None:
            ctx.note("move order")
        if dfn.just_switched_in or ctx.target_moved is False or ctx.target_moved is None:
            bp *= 2
    elif mid == "payback":
        if ctx.target_moved is None:
            ctx.note("move order")
        if not (dfn.just_switched_in or ctx.target_moved is False):
            bp *= 2
    elif mid in ("crushgrip", "wringout", "hardpress"):
        top = 100 if mid == "hardpress" else 120
        bp = ((top * (100 * (ctx.def_hp * 4096 // ctx.def_max_hp)) + 2047) // 4096) // 100 or 1
    elif mid == "risingvoltage":
        if ctx.terrain == "electricterrain" and ctx.def_grounded:
            bp *= 2
    elif mid in ("stompingtantrum", "temperflare"):
        if atk.last_move_failed:
            bp *= 2
    elif mid in ("avalanche", "revenge"):
        if atk.hurt_by_target:
            bp *= 2
    elif mid == "watershuriken":
        if ctx.atk_species.get("name") == "Greninja-Ash" and ctx.atk_ability == "battlebond":
            bp += 5
    if not bp:
        return 0
    bp = max(1, math.floor(bp))

    # BasePower event
    handlers: list[_Handler] = []
    aspe, dspe = -ctx.atk_speed, -ctx.def_speed
    mtype, category, flags = ctx.mtype, ctx.category, ctx.flags

    # the move's own onBasePower
    if mid == "facade":
        if atk.status and atk.status != "slp":
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 8192)
    elif mid == "knockoff":
        if _item_removable(dfn.item, dfn, ctx.dex):
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 6144)
    elif mid == "brine":
        if ctx.def_hp * 2 <= ctx.def_max_hp:
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 8192)
    elif mid in ("venoshock", "barbbarrage"):
        if dfn.status in ("psn", "tox"):
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 8192)
    elif mid in ("collisioncourse", "electrodrift"):
        if _type_mod_full(ctx) > 0:
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 5461)
    elif mid in ("expandingforce", "mistyexplosion"):
        terrain = "psychicterrain" if mid == "expandingforce" else "mistyterrain"
        if ctx.terrain == terrain and ctx.atk_grounded:
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 6144)
    elif mid == "psyblade":
        if ctx.terrain == "electricterrain":
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 6144)
    elif mid in ("solarbeam", "solarblade"):
        if ctx.atk_weather in ("raindance", "primordialsea", "sandstorm", "hail", "snowscape"):
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 2048)
    elif mid == "gravapple":
        if ctx.fld.gravity:
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 6144)
    elif mid == "lashout":
        if atk.stats_lowered_this_turn:
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 8192)
    elif mid in ("retaliate", "ficklebeam"):
        ctx.note(f"move {mid}")

    # attacker's ability
    ability = ctx.atk_ability
    if ability:
        if ability == "technician":
            _add(handlers, 30, aspe, _SUB_ABILITY, "t", 0)
        elif ability == "rivalry":
            if atk.gender and dfn.gender:
                same = atk.gender == dfn.gender
                _add(handlers, 24, aspe, _SUB_ABILITY, "c", 5120 if same else 3072)
        elif ability == "ironfist":
            if "punch" in flags:
                _add(handlers, 23, aspe, _SUB_ABILITY, "c", 4915)
        elif ability == "reckless":
            if ctx.move.recoil:
                _add(handlers, 23, aspe, _SUB_ABILITY, "c", 4915)
        elif ability in _ATE or ability == "normalize":
            if ctx.ate_boost:
                _add(handlers, 23, aspe, _SUB_ABILITY, "c", 4915)
        elif ability == "sheerforce":
            if ctx.sheer_force or ctx.move.sheer_force_boost:
                _add(handlers, 21, aspe, _SUB_ABILITY, "c", 5325)
        elif ability == "toughclaws":
            if "contact" in flags:
                _add(handlers, 21, aspe, _SUB_ABILITY, "c", 5325)
        elif ability == "sandforce":
            if ctx.weather == "sandstorm" and mtype in ("Rock", "Ground", "Steel"):
                _add(handlers, 21, aspe, _SUB_ABILITY, "c", 5325)
        elif ability == "analytic":
            if ctx.target_moved is None:
                ctx.note("move order")
            elif ctx.target_moved:
                _add(handlers, 21, aspe, _SUB_ABILITY, "c", 5325)
        elif ability == "supremeoverlord":
            fallen = min(5, atk.fainted_allies)
            if fallen:
                mod = (4096, 4506, 4915, 5325, 5734, 6144)[fallen]
                _add(handlers, 21, aspe, _SUB_ABILITY, "c", mod)
        elif ability == "strongjaw":
            if "bite" in flags:
                _add(handlers, 19, aspe, _SUB_ABILITY, "c", 6144)
        elif ability == "megalauncher":
            if "pulse" in flags:
                _add(handlers, 19, aspe, _SUB_ABILITY, "c", 6144)
        elif ability == "sharpness":
            if "slicing" in flags:
                _add(handlers, 19, aspe, _SUB_ABILITY, "c", 6144)
        elif ability == "flareboost":
            if atk.status == "brn" and category == "Special":
                _add(handlers, 19, aspe, _SUB_ABILITY, "c", 6144)
        elif ability == "toxicboost":
            if atk.status in ("psn", "tox") and category == "Physical":
                _add(handlers, 19, aspe, _SUB_ABILITY, "c", 6144)
        elif ability == "punkrock":
            if "sound" in flags:
                _add(handlers, 7, aspe, _SUB_ABILITY, "c", 5325)
        elif ability == "steelyspirit":  # an ally effect that includes the holder itself
            if mtype == "Steel":
                _add(handlers, 22, aspe, _SUB_ABILITY, "c", 6144)
    # auras (any Pokémon's)
    for aura, kind, speed in (
        (ctx.atk_ability, "darkaura", aspe), (ctx.atk_ability, "fairyaura", aspe),
        (ctx.def_ability, "darkaura", dspe), (ctx.def_ability, "fairyaura", dspe),
    ):  # fmt: skip
        if aura == kind and mtype == ("Dark" if kind == "darkaura" else "Fairy"):
            _add(handlers, 20, speed, _SUB_ABILITY, "c", 3072 if ctx.aura_break else 5448)
            break
    # attacker's volatiles
    if "charge" in atk.volatiles and mtype == "Electric":
        _add(handlers, 9, aspe, _SUB_VOLATILE, "c", 8192)
    # attacker's item
    item = ctx.atk_item
    if item:
        boosted = _TYPE_ITEMS.get(item)
        if boosted is not None:
            if boosted == mtype:
                _add(handlers, 15, aspe, _SUB_ITEM, "c", 4915)
        elif item in ("muscleband", "wiseglasses"):
            if category == ("Physical" if item == "muscleband" else "Special"):
                _add(handlers, 16, aspe, _SUB_ITEM, "c", 4505)
        elif item == "punchingglove":
            if "punch" in ctx.move.flags:
                _add(handlers, 23, aspe, _SUB_ITEM, "c", 4506)
        elif item in _ORB_ITEMS:
            num, types = _ORB_ITEMS[item]
            species_num = ctx.atk_species.get("num")
            if (species_num == num or (num == 380 and species_num == 381)) and mtype in types:
                _add(handlers, 15, aspe, _SUB_ITEM, "c", 4915)
        elif item in _MASKS:
            if ctx.atk_species.get("name", "").startswith(_MASKS[item]):
                _add(handlers, 15, aspe, _SUB_ITEM, "c", 4915)
        # Pink Bow and Polka Dot Bow have no effect in these generations.
    # defender's ability (onSourceBasePower)
    if ctx.def_ability == "dryskin" and mtype == "Fire":
        _add(handlers, 17, dspe, _SUB_ABILITY, "c", 5120)
    elif ctx.def_ability == "heatproof" and mtype == "Fire" and ctx.gen <= 8:
        _add(handlers, 18, dspe, _SUB_ABILITY, "c", 2048)
    # terrain
    terrain = ctx.terrain
    if terrain:
        if terrain == "electricterrain":
            if mtype == "Electric" and ctx.atk_grounded:
                _add(handlers, 6, 0, _SUB_TERRAIN, "c", 5325)
        elif terrain == "grassyterrain":
            if mid in ("earthquake", "bulldoze", "magnitude") and ctx.def_grounded:
                _add(handlers, 6, 0, _SUB_TERRAIN, "c", 2048)
            elif mtype == "Grass" and ctx.atk_grounded:
                _add(handlers, 6, 0, _SUB_TERRAIN, "c", 5325)
        elif terrain == "psychicterrain":
            if mtype == "Psychic" and ctx.atk_grounded:
                _add(handlers, 6, 0, _SUB_TERRAIN, "c", 5325)
        elif terrain == "mistyterrain":
            if mtype == "Dragon" and ctx.def_grounded:
                _add(handlers, 6, 0, _SUB_TERRAIN, "c", 2048)
    bp = _run_event(bp, handlers)
    if not bp:
        return 0
    bp = max(1, bp)
    # Tera: moves of the Tera type below 60 power hit with 60.
    if (
        atk.terastallized
        and ctx.gen >= 9
        and bp < 60
        and m.priority <= 0
        and not m.multihit
        and not ((ctx.bp_base in (0, 150)) and mid in _BP_CALLBACK_MOVES)
    ):
        tera = atk.tera_type
        if (tera == "Stellar" and mtype not in atk.stellar_boosted) or (
            tera != "Stellar" and mtype in ctx.atk_types
        ):
            bp = 60
    return bp


# Moves that return the damage taken this turn: the category they answer ("" any), x2 or x1.5.
_RETURN_MOVES: Final = {"counter": "Physical", "mirrorcoat": "Special", "metalburst": "",
                 "comeuppance": ""}  # fmt: skip

_BP_CALLBACK_MOVES: Final = frozenset((
    "acrobatics", "electroball", "eruption", "waterspout", "dragonenergy", "gyroball",
    "heatcrash", "heavyslam", "lowkick", "grassknot", "hex", "infernalparade", "storedpower",
    "powertrip", "terablast", "tripleaxel", "triplekick", "ragefist", "lastrespects", "flail",
    "reversal", "boltbeak", "fishiousrend", "payback", "crushgrip", "wringout", "hardpress",
    "risingvoltage", "watershuriken",
))  # fmt: skip
