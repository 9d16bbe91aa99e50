"""The attack and defense stats of the formula (``ModifyAtk``/``SpA``/``Def``/``SpD``
with stat stages and critical hits), the ``ModifyDamage`` event and STAB.
"""

from __future__ import annotations

from pokegym.world.damage.combatant import Combatant
from pokegym.world.damage.context import _Ctx, _speed
from pokegym.world.damage.tables import (
    _PINCH,
    _RESIST_BERRIES,
    _SCREEN_BREAKERS,
    _SUB_ABILITY,
    _SUB_ITEM,
    _SUB_SIDE,
    _SUB_VOLATILE,
    _SUB_WEATHER,
    _TYPE_ATK_ABILITIES,
    _add,
    _boosted,
    _Handler,
    _run_event,
)


def _speed_stat(ctx: _Ctx, c: Combatant, ability: str, item: str, paradox: str, own: bool) -> int:
    """``getStat('spe')`` for Electro Ball / Gyro Ball (no Trick Room inversion)."""
    side = ctx.fld.attacker_side if own else ctx.fld.defender_side
    return _speed(ctx, c, ability, item, paradox, side)


# Long on purpose: the ``ModifyAtk``/``ModifySpA`` handlers of every ability, item and
# side condition, in Showdown's order (one list, checked against data/*.js).
def _attack_stat(ctx: _Ctx, crit: bool) -> int:
    """The attacking stat with stages (crit rules) and the ``ModifyAtk``/``SpA`` event."""
    m, atk, dfn = ctx.move, ctx.atk, ctx.dfn
    physical = ctx.category == "Physical"
    stat_name = m.offensive_stat or ("atk" if physical else "spa")
    holder = dfn if m.offensive_target else atk
    boost = holder.boosts.get(stat_name, 0) if holder.boosts else 0
    if ctx.spa_charge and stat_name == "spa" and holder is atk:
        boost = max(-6, min(6, boost + ctx.spa_charge))
    if m.ignore_offensive or (crit and boost < 0):
        boost = 0
    # Unaware (ModifyBoost): the defender's Unaware ignores the attacker's offensive boosts.
    if ctx.def_ability == "unaware":
        boost = 0
    stat_value = int(holder.stats.get(stat_name, 0))
    attack = _boosted(stat_value, boost)

    # ModifyAtk / ModifySpA on the attacker (Atk if the move is physical)
    handlers: list[_Handler] = []
    aspe, dspe = -ctx.atk_speed, -ctx.def_speed
    mtype = ctx.mtype

    ability = ctx.atk_ability
    stat = "atk" if physical else "spa"
    if ability:
        if physical and ability in ("hugepower", "purepower"):
            _add(handlers, 5, aspe, _SUB_ABILITY, "c", 8192)
        elif physical and ability == "guts":
            if atk.status:
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 6144)
        elif physical and ability == "hustle":
            _add(handlers, 5, aspe, _SUB_ABILITY, "m", 6144)
        elif physical and ability == "orichalcumpulse":
            if ctx.atk_weather in ("sunnyday", "desolateland"):
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 5461)
        elif not physical and ability == "hadronengine":
            if ctx.terrain == "electricterrain":
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 5461)
        elif physical and ability == "gorillatactics":
            if "dynamax" not in atk.volatiles:
                _add(handlers, 1, aspe, _SUB_ABILITY, "c", 6144)
        elif not physical and ability == "solarpower":
            if ctx.atk_weather in ("sunnyday", "desolateland"):
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 6144)
        elif ability == "defeatist":
            if ctx.atk_hp <= ctx.atk_max_hp / 2:
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 2048)
        elif ability in _PINCH:
            if mtype == _PINCH[ability] and ctx.atk_hp <= ctx.atk_max_hp / 3:
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 6144)
        elif ability == "stakeout":
            if dfn.just_switched_in:
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 8192)
        elif ability in _TYPE_ATK_ABILITIES:
            kind, mult = _TYPE_ATK_ABILITIES[ability]
            if mtype == kind:
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", mult)
        elif ability == "transistor":
            if mtype == "Electric":
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 5325 if ctx.gen >= 9 else 6144)
        elif ability == "waterbubble":
            if mtype == "Water":
                _add(handlers, 0, aspe, _SUB_ABILITY, "c", 8192)
        elif physical and ability == "slowstart":
            if "slowstart" in atk.volatiles:
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 2048)
        elif ability == "flowergift":
            if physical and ctx.atk_weather in ("sunnyday", "desolateland"):
                if ctx.atk_species.get("baseSpecies") == "Cherrim":
                    _add(handlers, 3, aspe, _SUB_ABILITY, "c", 6144)
    if ctx.atk_paradox == stat:
        _add(handlers, 5, aspe, _SUB_VOLATILE, "c", 5325)
    if "flashfire" in atk.volatiles and mtype == "Fire" and ability == "flashfire":
        _add(handlers, 5, aspe, _SUB_VOLATILE, "c", 6144)
    item = ctx.atk_item
    if item:
        if (physical and item == "choiceband") or (not physical and item == "choicespecs"):
            if "dynamax" not in atk.volatiles:
                _add(handlers, 1, aspe, _SUB_ITEM, "c", 6144)
        elif item == "lightball":
            if ctx.atk_species.get("baseSpecies") == "Pikachu":
                _add(handlers, 1, aspe, _SUB_ITEM, "c", 8192)
        elif item == "thickclub" and physical:
            if ctx.atk_species.get("baseSpecies") in ("Cubone", "Marowak"):
                _add(handlers, 1, aspe, _SUB_ITEM, "c", 8192)
        elif item == "deepseatooth" and not physical:
            if ctx.atk_species.get("baseSpecies") == "Clamperl":
                _add(handlers, 1, aspe, _SUB_ITEM, "c", 8192)
    dability = ctx.def_ability
    if dability:
        if dability == "thickfat":
            if mtype in ("Ice", "Fire"):
                _add(handlers, 6 if physical else 5, dspe, _SUB_ABILITY, "c", 2048)
        elif dability == "heatproof":
            if mtype == "Fire" and ctx.gen >= 9:
                _add(handlers, 6 if physical else 5, dspe, _SUB_ABILITY, "c", 2048)
        elif dability == "purifyingsalt":
            if mtype == "Ghost":
                _add(handlers, 6 if physical else 5, dspe, _SUB_ABILITY, "c", 2048)
        elif dability == "waterbubble":
            if mtype == "Fire":
                _add(handlers, 5, dspe, _SUB_ABILITY, "c", 2048)
    # Ruin abilities: the other Pokémon's Tablets (Atk) / Vessel (SpA).
    ruin = "tabletsofruin" if physical else "vesselofruin"
    if dability == ruin and ability != ruin:
        _add(handlers, 0, dspe, _SUB_ABILITY, "c", 3072)
    return _run_event(attack, handlers)


def _defense_stat(ctx: _Ctx, crit: bool) -> int:
    m, atk, dfn = ctx.move, ctx.atk, ctx.dfn
    physical = ctx.category == "Physical"
    stat_name = m.defensive_stat or ("def" if physical else "spd")
    if ctx.def_boost is not None and stat_name == "def":
        boost = ctx.def_boost  # changed by the earlier hits of this move
    else:
        boost = dfn.boosts.get(stat_name, 0) if dfn.boosts else 0
    if m.ignore_defensive or (crit and boost > 0):
        boost = 0
    if ctx.atk_ability == "unaware":
        boost = 0
    base_name = stat_name
    if ctx.fld.wonder_room:
        base_name = {"def": "spd", "spd": "def"}.get(stat_name, stat_name)
    defense = _boosted(int(dfn.stats.get(base_name, 0)), boost)

    handlers: list[_Handler] = []
    aspe, dspe = -ctx.atk_speed, -ctx.def_speed

    is_def = stat_name == "def"
    weather = ctx.def_weather
    if not is_def and weather == "sandstorm" and "Rock" in ctx.def_types:
        _add(handlers, 10, 0, _SUB_WEATHER, "m", 6144)
    if is_def and weather == "snowscape" and "Ice" in ctx.def_types and ctx.gen >= 9:
        _add(handlers, 10, 0, _SUB_WEATHER, "m", 6144)
    ability = ctx.def_ability
    if ability:
        if is_def and ability == "furcoat":
            _add(handlers, 6, dspe, _SUB_ABILITY, "c", 8192)
        elif is_def and ability == "marvelscale":
            if dfn.status:
                _add(handlers, 6, dspe, _SUB_ABILITY, "c", 6144)
        elif is_def and ability == "grasspelt":
            if ctx.terrain == "grassyterrain":
                _add(handlers, 6, dspe, _SUB_ABILITY, "c", 6144)
        elif not is_def and ability == "flowergift":
            if (
                weather in ("sunnyday", "desolateland")
                and ctx.def_species.get("baseSpecies") == "Cherrim"
            ):
                _add(handlers, 4, dspe, _SUB_ABILITY, "c", 6144)
    if ctx.def_paradox == stat_name:
        _add(handlers, 6, dspe, _SUB_VOLATILE, "c", 5325)
    item = ctx.def_item
    if item:
        if item == "eviolite":
            if ctx.def_species.get("nfe"):
                _add(handlers, 2, dspe, _SUB_ITEM, "c", 6144)
        elif item == "assaultvest":
            if not is_def:
                _add(handlers, 1, dspe, _SUB_ITEM, "c", 6144)
        elif item == "metalpowder" and is_def:
            if ctx.def_species.get("name") == "Ditto":
                _add(handlers, 2, dspe, _SUB_ITEM, "c", 8192)
        elif item == "deepseascale" and not is_def:
            if ctx.def_species.get("baseSpecies") == "Clamperl":
                _add(handlers, 2, dspe, _SUB_ITEM, "c", 8192)
    ruin = "swordofruin" if is_def else "beadsofruin"
    if ctx.atk_ability == ruin and ability != ruin:
        _add(handlers, 0, aspe, _SUB_ABILITY, "c", 3072)
    del atk
    return _run_event(defense, handlers)


def _damage_mod(ctx: _Ctx, crit: bool, first_hit: bool, type_mod: int) -> tuple[int, bool]:
    """The ModifyDamage event's modifier (4096ths) and whether a resist berry was eaten."""
    handlers: list[_Handler] = []
    aspe, dspe = -ctx.atk_speed, -ctx.def_speed
    dfn = ctx.dfn
    mtype, category, flags = ctx.mtype, ctx.category, ctx.flags
    berry = False

    item = ctx.atk_item
    if item == "lifeorb":
        _add(handlers, 0, aspe, _SUB_ITEM, "c", 5324)
    elif item == "expertbelt":
        if type_mod > 0:
            _add(handlers, 0, aspe, _SUB_ITEM, "c", 4915)
    ability = ctx.atk_ability
    if ability == "tintedlens":
        if type_mod < 0:
            _add(handlers, 0, aspe, _SUB_ABILITY, "c", 8192)
    elif ability == "sniper":
        if crit:
            _add(handlers, 0, aspe, _SUB_ABILITY, "c", 6144)
    elif ability == "neuroforce":
        if type_mod > 0:
            _add(handlers, 0, aspe, _SUB_ABILITY, "c", 5120)
    # defender's item and ability (onSourceModifyDamage)
    ditem = ctx.def_item
    if first_hit and ditem in _RESIST_BERRIES:
        kind = _RESIST_BERRIES[ditem]
        substitute = (
            "substitute" in dfn.volatiles and "bypasssub" not in flags and not ctx.infiltrates
        )
        if mtype == kind and (type_mod > 0 or kind == "Normal") and not substitute:
            _add(handlers, 0, dspe, _SUB_ITEM, "c", 2048)
            berry = True
    dability = ctx.def_ability
    if dability:
        if dability in ("multiscale", "shadowshield"):
            if ctx.def_hp >= ctx.def_max_hp and first_hit:
                _add(handlers, 0, dspe, _SUB_ABILITY, "c", 2048)
        elif dability in ("filter", "solidrock", "prismarmor"):
            if type_mod > 0:
                _add(handlers, 0, dspe, _SUB_ABILITY, "c", 3072)
        elif dability == "fluffy":
            fluffy = 1.0
            if mtype == "Fire":
                fluffy *= 2
            if "contact" in flags:
                fluffy /= 2
            _add(handlers, 0, dspe, _SUB_ABILITY, "c", int(fluffy * 4096))
        elif dability == "icescales":
            if category == "Special":
                _add(handlers, 0, dspe, _SUB_ABILITY, "c", 2048)
        elif dability == "punkrock":
            if "sound" in flags:
                _add(handlers, 0, dspe, _SUB_ABILITY, "c", 2048)
        elif dability == "ripen":
            if berry:
                _add(handlers, -1, dspe, _SUB_ABILITY, "c", 2048)
    # Glaive Rush: the user takes double damage until it moves again
    if "glaiverush" in dfn.volatiles:
        _add(handlers, 0, dspe, _SUB_VOLATILE, "c", 8192)
    # screens on the defender's side (side conditions: speed 0)
    side = ctx.fld.defender_side
    if not crit and not ctx.infiltrates and ctx.move.id not in _SCREEN_BREAKERS:
        if (side.reflect and category == "Physical") or (
            side.light_screen and category == "Special"
        ):
            _add(handlers, 0, 0, _SUB_SIDE, "c", 2048)
        elif side.aurora_veil:
            _add(handlers, 0, 0, _SUB_SIDE, "c", 2048)
    if not handlers:
        return 4096, berry
    if len(handlers) > 1:
        handlers.sort()
    mod = 4096
    for handler in handlers:
        mod = (mod * handler[5] + 2048) >> 12
    return mod, berry


def _stab(ctx: _Ctx) -> int:
    """The STAB modifier in 4096ths (1 = 4096)."""
    mtype = ctx.mtype
    if mtype == "???":
        return 4096
    atk = ctx.atk
    in_current = mtype in ctx.atk_types
    is_stab = ctx.move.force_stab or in_current or mtype in ctx.atk_pre_types
    stab = 6144 if is_stab else 4096
    tera = atk.tera_type if atk.terastallized and ctx.gen >= 9 else ""
    if tera == "Stellar":
        if mtype not in atk.stellar_boosted or ctx.atk_species.get("name") == "Terapagos-Stellar":
            stab = 8192 if is_stab else 4915
        return stab
    if tera and tera == mtype and mtype in ctx.atk_pre_types:
        stab = 8192
    if ctx.atk_ability == "adaptability" and (ctx.move.force_stab or in_current):
        stab = 9216 if stab == 8192 else 8192
    return stab
