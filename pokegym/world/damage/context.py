"""One damage question prepared: :class:`_Ctx` holds everything about an (attacker,
defender, move, field) that does not depend on the hit (types, abilities in effect,
the move as it is used, weather and terrain), and the checks made before the formula
(moves that fail, type immunity, critical-hit chance).
"""

from __future__ import annotations

from typing import Any

from pokegym.world.damage.combatant import Combatant, Field, Side
from pokegym.world.damage.moves import (
    _max_move_data,
    _move_data,
    _MoveData,
    _species_entry,
    _unmodelled,
)
from pokegym.world.damage.tables import (
    _ABSORB,
    _ANTI_DYNAMAX,
    _ATE,
    _CHARGE_SPA,
    _CRIT_CHANCE,
    _DISGUISE_FORMS,
    _ICE_FACE_FORMS,
    _MASKS,
    _MOLD_BREAKERS,
    _NO_ATE,
    _NO_NORMALIZE,
    _STUCK_ITEMS,
    _TERRAIN_TYPES,
    _WEIGHT_MOVES,
    _boosted,
)
from pokegym.world.data import Dex, to_id
from pokegym.world.speed import action_speed, effective_speed


# --------------------------------------------------------------- the calculation
class _Ctx:
    """Everything about one (attacker, defender, move, field) that does not depend on
    the hit number or the crit."""

    __slots__ = (
        "ate_boost",
        "atk",
        "atk_ability",
        "atk_grounded",
        "atk_hp",
        "atk_item",
        "atk_max_hp",
        "atk_paradox",
        "atk_pre_types",
        "atk_species",
        "atk_speed",
        "atk_types",
        "atk_weather",
        "aura_break",
        "bp_base",
        "category",
        "def_ability",
        "def_boost",
        "def_grounded",
        "def_hp",
        "def_item",
        "def_max_hp",
        "def_paradox",
        "def_species",
        "def_speed",
        "def_types",
        "def_weather",
        "dex",
        "dfn",
        "flags",
        "fld",
        "gen",
        "ignore_immunity",
        "infiltrates",
        "move",
        "mtype",
        "notes",
        "sheer_force",
        "spa_charge",
        "target_moved",
        "terrain",
        "weather",
    )  # fmt: skip
    # The types of the slots (read by type checkers and by the compiled build).
    ate_boost: bool
    atk: Combatant
    atk_ability: str
    atk_grounded: bool
    atk_hp: int
    atk_item: str
    atk_max_hp: int
    atk_paradox: str
    atk_pre_types: tuple[str, ...]
    atk_species: dict[str, Any]
    atk_speed: int
    atk_types: tuple[str, ...]
    atk_weather: str
    aura_break: bool
    bp_base: int
    category: str
    def_ability: str
    def_boost: int | None
    def_grounded: bool
    def_hp: int
    def_item: str
    def_max_hp: int
    def_paradox: str
    def_species: dict[str, Any]
    def_speed: int
    def_types: tuple[str, ...]
    def_weather: str
    dex: Dex
    dfn: Combatant
    flags: frozenset[str]
    fld: Field
    gen: int
    ignore_immunity: Any  # False, True or a frozenset of types
    infiltrates: bool
    move: _MoveData
    mtype: str
    notes: list[str]
    sheer_force: bool
    spa_charge: int
    target_moved: bool | None
    terrain: str
    weather: str

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def _types_of(c: Combatant, dex: Dex) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(current types, pre-Tera types)."""
    tera = c.tera_type if c.terastallized and dex.gen >= 9 else ""
    if not tera:
        types = c.original_types or c.types or ("Normal",)
        return c.types or ("Normal",), types
    if c.original_types:
        pre = c.original_types
    elif c.types and c.types != (tera,):
        pre = c.types
    else:
        pre = tuple(_species_entry(dex, c.species).get("types", ())) or c.types
    if tera == "Stellar":
        return pre, pre
    return (tera,), pre


def _effective_ability(c: Combatant, other: Combatant) -> str:
    if c.ability_suppressed or "gastroacid" in c.volatiles:
        return ""
    if (
        other.ability == "neutralizinggas"
        and not other.ability_suppressed
        and c.item != "abilityshield"
    ):
        return ""
    return c.ability


def _grounded(c: Combatant, types: tuple[str, ...], ability: str, item: str, fld: Field) -> bool:
    if fld.gravity or "smackdown" in c.volatiles or "ingrain" in c.volatiles:
        return True
    if item == "ironball":
        return True
    if "Flying" in types:
        return False
    if ability == "levitate":
        return False
    if "magnetrise" in c.volatiles or "telekinesis" in c.volatiles:
        return False
    return item != "airballoon"


def _speed(ctx: _Ctx, c: Combatant, ability: str, item: str, paradox: str, side: Side) -> int:
    """``getStat('spe')`` by the one Speed rule (:mod:`pokegym.world.speed`)."""
    return effective_speed(
        int(c.stats.get("spe", 0)),
        boost=c.boosts.get("spe", 0) if c.boosts else 0,
        item=item,
        ability=ability,
        status=c.status,
        tailwind=side.tailwind,
        weather=ctx.weather,
        terrain=ctx.terrain,
        speed_ability_boost=paradox == "spe",
        item_lost="unburden" in c.volatiles and not item,
        slow_start="slowstart" in c.volatiles,
        dynamaxed="dynamax" in c.volatiles,
        species=c.species,
        gen=ctx.gen,
    )


def _paradox(c: Combatant, ability: str, item: str, fld: Field, weather: str, dex: Dex) -> str:
    """The stat an active Protosynthesis / Quark Drive boosts, or ""."""
    if ability not in ("protosynthesis", "quarkdrive") or c.paradox_stat == "none":
        return ""
    if c.paradox_stat:
        return c.paradox_stat
    active = item == "boosterenergy"
    if ability == "protosynthesis" and weather == "sunnyday":
        active = True
    if ability == "quarkdrive" and fld.terrain == "electricterrain":
        active = True
    if not active:
        return ""
    best, best_value = "atk", 0
    for stat in ("atk", "def", "spa", "spd", "spe"):
        value = _boosted(int(c.stats.get(stat, 0)), c.boosts.get(stat, 0) if c.boosts else 0)
        if value > best_value:
            best, best_value = stat, value
    return best


def _type_mod(dex: Dex, move_type: str, types: tuple[str, ...]) -> int:
    total = 0
    chart = dex.type_chart
    for t in types:
        taken = chart.get(t)
        if taken is None:
            continue
        code = taken.get(move_type, 0)
        if code == 1:
            total += 1
        elif code == 2:
            total -= 1
    return total


def _immune_by_type(dex: Dex, move_type: str, types: tuple[str, ...]) -> bool:
    chart = dex.type_chart
    for t in types:
        taken = chart.get(t)
        if taken is not None and taken.get(move_type, 0) == 3:
            return True
    return False


def _item_removable(item: str, c: Combatant, dex: Dex) -> bool:
    if not item:
        return False
    entry = dex.items.get(item) or {}
    species = _species_entry(dex, c.species)
    num = species.get("num", 0)
    base = species.get("baseSpecies", "")
    if entry.get("zMove") or item == "mail":
        return False
    if entry.get("onPlate") and num == 493:
        return False
    if item.endswith("memory") and num == 773:
        return False
    if item.endswith("drive") and num == 649:
        return False
    if item in _MASKS and base == "Ogerpon":
        return False
    if item == "boosterenergy" and "Paradox" in (species.get("tags") or ()):
        return False
    if (item == "blueorb" and base == "Kyogre") or (item == "redorb" and base == "Groudon"):
        return False
    if item in _STUCK_ITEMS and num in _STUCK_ITEMS[item]:
        return False
    required = species.get("requiredItems") or [species.get("requiredItem")]
    if any(item == to_id(r) for r in required if r):
        return False
    mega = entry.get("megaStone")
    return not ((isinstance(mega, dict) and base in mega) or (isinstance(mega, str) and mega))


def _weight_hg(c: Combatant, ability: str, item: str, dex: Dex) -> int:
    kg = c.weight
    if kg is None:
        kg = float(_species_entry(dex, c.species).get("weightkg", 0.0))
    hg = round(kg * 10)
    if ability == "heavymetal":
        hg *= 2
    elif ability == "lightmetal":
        hg = hg // 2
    if item == "floatstone":
        hg = hg // 2
    return max(1, hg)


def _weight_power(ratio_hg: int) -> int:
    if ratio_hg >= 2000:
        return 120
    if ratio_hg >= 1000:
        return 100
    if ratio_hg >= 500:
        return 80
    if ratio_hg >= 250:
        return 60
    if ratio_hg >= 100:
        return 40
    return 20


# Long on purpose: the steps Showdown takes before the formula (Max Move, type-changing
# abilities and moves, weather and terrain in effect, Protean, charging turns), in the
# order of ``trySpreadMoveHit``, each of which reads what the one before it decided.
def _prepare(
    dex: Dex, atk: Combatant, dfn: Combatant, move_id: str, fld: Field, target_moved: bool | None
) -> tuple[_Ctx, _MoveData]:
    """The :class:`_Ctx` of one question and the move's data as it is used."""
    m = _move_data(dex, move_id)
    dynamax_note = ""
    if "dynamax" in atk.volatiles and m.category != "Status":
        if not dex.moves[m.id].get("isMax"):
            if {"onModifyType", "basePowerCallback"} & m.callbacks or atk.ability in _ATE:
                dynamax_note = f"max move from {m.id}"
            m = _max_move_data(dex, m)
    ctx = _Ctx()
    ctx.dex, ctx.gen, ctx.atk, ctx.dfn, ctx.fld, ctx.move = dex, dex.gen, atk, dfn, fld, m
    ctx.notes = []
    ctx.target_moved = target_moved
    if m.unsupported:
        ctx.note(f"move {m.id}")
    if dynamax_note:
        ctx.note(dynamax_note)
    atk_ability = _effective_ability(atk, dfn)
    def_ability = _effective_ability(dfn, atk)
    ignore_ability = m.ignore_ability or atk_ability in _MOLD_BREAKERS
    if ignore_ability and def_ability and dfn.item != "abilityshield":
        ability_entry = dex.abilities.get(def_ability) or {}
        if (ability_entry.get("flags") or {}).get("breakable"):
            def_ability = ""
    ctx.atk_ability, ctx.def_ability = atk_ability, def_ability
    for who, ability in (("attacker", atk_ability), ("defender", def_ability)):
        if _unmodelled(dex, "ability", ability, who):
            ctx.note(f"{who} ability {ability}")
    magic_room = fld.magic_room
    atk_item = (
        "" if magic_room or atk_ability == "klutz" or "embargo" in atk.volatiles else atk.item
    )
    def_item = (
        "" if magic_room or def_ability == "klutz" or "embargo" in dfn.volatiles else dfn.item
    )
    ctx.atk_item, ctx.def_item = atk_item, def_item
    for who, item in (("attacker", atk_item), ("defender", def_item)):
        if _unmodelled(dex, "item", item, who):
            ctx.note(f"{who} item {item}")

    weather = fld.weather
    if weather and (
        atk_ability in ("airlock", "cloudnine") or def_ability in ("airlock", "cloudnine")
    ):
        weather = ""
    ctx.weather = weather
    sun_rain = ("sunnyday", "raindance", "desolateland", "primordialsea")
    ctx.atk_weather = "" if weather in sun_rain and atk_item == "utilityumbrella" else weather
    ctx.def_weather = "" if weather in sun_rain and def_item == "utilityumbrella" else weather
    ctx.terrain = fld.terrain

    atk_types, atk_pre = _types_of(atk, dex)
    def_types, _ = _types_of(dfn, dex)
    ctx.atk_types, ctx.atk_pre_types, ctx.def_types = atk_types, atk_pre, def_types
    ctx.atk_grounded = _grounded(atk, atk_types, atk_ability, atk_item, fld)
    ctx.def_grounded = _grounded(dfn, def_types, def_ability, def_item, fld)
    ctx.atk_max_hp, ctx.def_max_hp = atk.max_hp, dfn.max_hp
    ctx.atk_hp, ctx.def_hp = atk.current_hp, dfn.current_hp
    ctx.atk_species = _species_entry(dex, atk.species)
    ctx.def_species = _species_entry(dex, dfn.species)
    ctx.atk_paradox = _paradox(atk, atk_ability, atk_item, fld, weather, dex)
    ctx.def_paradox = _paradox(dfn, def_ability, def_item, fld, weather, dex)
    # ``pokemon.speed``: the order in which effects of the two Pokémon run.
    ctx.atk_speed = action_speed(
        _speed(ctx, atk, atk_ability, atk_item, ctx.atk_paradox, fld.attacker_side),
        fld.trick_room,
    )
    ctx.def_speed = action_speed(
        _speed(ctx, dfn, def_ability, def_item, ctx.def_paradox, fld.defender_side),
        fld.trick_room,
    )
    if atk.status and atk.status not in ("brn", "par", "psn", "tox", "slp", "frz"):
        ctx.note(f"status {atk.status}")
    if "dynamax" in dfn.volatiles and m.id in _ANTI_DYNAMAX:
        ctx.note(f"move {m.id} on a Dynamaxed target")

    # ---- the active move: ModifyType / ModifyMove (move first, then the user's effects)
    mtype, category, bp = m.type, m.category, m.base_power
    flags = m.flags
    mid = m.id
    tera = atk.tera_type if atk.terastallized and ctx.gen >= 9 else ""
    species_name = ctx.atk_species.get("name", "")
    if mid == "weatherball":
        w = ctx.atk_weather
        if w in ("sunnyday", "desolateland"):
            mtype = "Fire"
        elif w in ("raindance", "primordialsea"):
            mtype = "Water"
        elif w == "sandstorm":
            mtype = "Rock"
        elif w in ("hail", "snowscape"):
            mtype = "Ice"
        if w in (
            "sunnyday",
            "desolateland",
            "raindance",
            "primordialsea",
            "sandstorm",
            "hail",
            "snowscape",
        ):
            bp *= 2
    elif mid == "terrainpulse":
        if ctx.atk_grounded and ctx.terrain:
            mtype = _TERRAIN_TYPES.get(ctx.terrain, mtype)
            bp *= 2
    elif mid == "terablast":
        if tera:
            mtype = tera
            if _stat_unmodified(atk, "atk") > _stat_unmodified(atk, "spa"):
                category = "Physical"
            if tera == "Stellar":
                ctx.note("stellar tera blast")
    elif mid == "ivycudgel":
        for suffix, kind in (
            ("Wellspring", "Water"),
            ("Hearthflame", "Fire"),
            ("Cornerstone", "Rock"),
        ):
            if species_name.startswith(f"Ogerpon-{suffix}"):
                mtype = kind
    elif mid == "ragingbull":
        mtype = {"Tauros-Paldea-Combat": "Fighting", "Tauros-Paldea-Blaze": "Fire",
                 "Tauros-Paldea-Aqua": "Water"}.get(species_name, mtype)  # fmt: skip
    elif mid == "aurawheel":
        mtype = "Dark" if species_name == "Morpeko-Hangry" else "Electric"
    elif mid == "revelationdance":
        mtype = atk_types[0] if atk_types else mtype
    elif mid == "photongeyser":
        if _stat_unmodified(atk, "atk") > _stat_unmodified(atk, "spa"):
            category = "Physical"
    elif mid == "terastarstorm":
        if species_name == "Terapagos-Stellar":
            mtype = "Stellar"
            ctx.note("stellar")
    elif mid == "shellsidearm":
        level_term = 2 * atk.level // 5 + 2
        a, s = _stat_unmodified(atk, "atk"), _stat_unmodified(atk, "spa")
        d, sd = _stat_unmodified(dfn, "def"), _stat_unmodified(dfn, "spd")
        physical = level_term * 90 * a // max(1, d) // 50
        special = level_term * 90 * s // max(1, sd) // 50
        if physical > special:
            category = "Physical"
            flags = flags | {"contact"}
        elif physical == special:
            ctx.note("shell side arm tie")
    elif mid in ("judgment", "multiattack"):
        item_entry = dex.items.get(atk_item) or {}
        held_type = item_entry.get("onPlate" if mid == "judgment" else "onMemory")
        if isinstance(held_type, str) and held_type:
            mtype = held_type
    elif mid == "technoblast":
        ctx.note(f"move {mid}")
    elif mid == "fling":
        # PrepareHit: the held item's Fling power; no item it can throw, no move.
        fling = (dex.items.get(atk_item) or {}).get("fling") if atk_item else None
        if fling and _item_removable(atk_item, atk, dex):
            bp = int(fling.get("basePower") or 0)
    elif mid == "struggle":
        mtype = "???"  # typeless: no STAB, no effectiveness, no immunity

    ate_boost = False
    if atk_ability == "normalize":
        if mid not in _NO_NORMALIZE and not (mid == "terablast" and tera):
            mtype = "Normal"
            ate_boost = True
    elif atk_ability in _ATE:
        if mtype == "Normal" and mid not in _NO_ATE and not (mid == "terablast" and tera):
            mtype = _ATE[atk_ability]
            ate_boost = True
    elif atk_ability == "liquidvoice" and "sound" in flags:
        mtype = "Water"
    ctx.ate_boost = ate_boost

    ignore_immunity = m.ignore_immunity
    infiltrates = False
    sheer_force = False
    multihit = m.multihit
    if atk_ability == "sheerforce" and m.has_secondaries:
        sheer_force = True
    if atk_ability in ("scrappy", "mindseye") and ignore_immunity is not True:
        ignore_immunity = frozenset(ignore_immunity or ()) | {"Fighting", "Normal"}
    if atk_ability == "infiltrator":
        infiltrates = True
    if atk_ability == "longreach" or (atk_item == "punchingglove" and "punch" in flags):
        flags = flags - {"contact"}
    ctx.mtype, ctx.category, ctx.bp_base, ctx.flags = mtype, category, bp, flags
    ctx.ignore_immunity, ctx.infiltrates, ctx.sheer_force = (
        ignore_immunity,
        infiltrates,
        sheer_force,
    )
    ctx.aura_break = atk_ability == "aurabreak" or def_ability == "aurabreak"
    if atk_ability == "stancechange" and ctx.atk_species.get("name") == "Aegislash":
        ctx.note("stance change")
    if def_ability == "terashell":
        ctx.note("ability terashell")
    if (
        atk_ability in ("protean", "libero")
        and mtype not in ("???", "Stellar")
        and atk_types != (mtype,)
        and not (atk.terastallized and ctx.gen >= 9)
        and not (atk.protean_used and ctx.gen >= 9)
        and "futuremove" not in flags
        and ctx.atk_species.get("num") not in (493, 773)  # Arceus, Silvally keep their type
    ):
        # PrepareHit: the user becomes the move's type before the hit.
        ctx.atk_types = ctx.atk_pre_types = (mtype,)
        ctx.atk_grounded = _grounded(atk, ctx.atk_types, atk_ability, atk_item, fld)
    # A charging move's first turn raised Special Attack (Simple doubles, Contrary inverts).
    ctx.spa_charge = 0
    if mid in _CHARGE_SPA and mid not in atk.volatiles:
        ctx.spa_charge = 2 if atk_ability == "simple" else -1 if atk_ability == "contrary" else 1
    ctx.def_boost = None
    del multihit
    return ctx, m


def _stat_unmodified(c: Combatant, stat: str) -> int:
    """``getStat(stat, false, true)``: boosted, before Modify* effects."""
    return _boosted(int(c.stats.get(stat, 0)), c.boosts.get(stat, 0) if c.boosts else 0)


def _fails(ctx: _Ctx) -> str:
    """Why the move does nothing to the defender ("" when it hits)."""
    m, mtype, dfn, atk = ctx.move, ctx.mtype, ctx.dfn, ctx.atk
    ability = ctx.def_ability
    if ctx.weather == "desolateland" and mtype == "Water" and ctx.category != "Status":
        return "evaporated"
    if ctx.weather == "primordialsea" and mtype == "Fire" and ctx.category != "Status":
        return "fizzled"
    # TryHit: absorbing abilities and other blocks
    if ability:
        if _ABSORB.get(ability) == mtype:
            return ability
        if ability == "levitate" and mtype == "Ground" and not ctx.def_grounded:
            return ability
        if ability == "bulletproof" and "bullet" in ctx.flags:
            return ability
        if ability == "soundproof" and "sound" in ctx.flags:
            return ability
        if ability == "windrider" and "wind" in ctx.flags:
            return ability
        if ability == "overcoat" and "powder" in ctx.flags:
            return ability
        if ability in ("dazzling", "queenlymajesty", "armortail") and m.priority > 0:
            return ability
        if ability == "wonderguard" and m.id != "struggle":
            if _type_mod_full(ctx) <= 0 or not _type_immunity_ok(ctx):
                return ability
    if ctx.terrain == "psychicterrain" and m.priority > 0 and ctx.def_grounded:
        return "psychic terrain"
    if "powder" in ctx.flags and ("Grass" in ctx.def_types or ctx.def_item == "safetygoggles"):
        return "powder"
    if m.id in _WEIGHT_MOVES and "dynamax" in dfn.volatiles:
        return "dynamax"
    mid = m.id
    if mid == "poltergeist" and not dfn.item:
        return "no item"
    if mid == "fling" and not ctx.bp_base:
        return "nothing to fling"
    if mid == "steelroller" and not ctx.terrain:
        return "no terrain"
    if not _type_immunity_ok(ctx):
        return "type"
    # TryImmunity, then the OHKO rules of the accuracy check
    if mid == "dreameater" and dfn.status != "slp" and _effective_ability(dfn, atk) != "comatose":
        return "target awake"
    if mid == "endeavor" and atk.current_hp >= dfn.current_hp:
        return "endeavor"
    if m.ohko and (
        ability == "sturdy"
        or dfn.level > atk.level
        or "dynamax" in dfn.volatiles
        or (m.ohko is not True and m.ohko in ctx.def_types)
    ):
        return "ohko"
    return ""


def _type_immunity_ok(ctx: _Ctx) -> bool:
    mtype = ctx.mtype
    ignore = ctx.ignore_immunity
    if ignore is True or (ignore and mtype in ignore):
        return True
    if mtype in ("???", "Stellar"):
        return True
    if mtype == "Ground":
        return ctx.def_grounded
    return not _immune_by_type(ctx.dex, mtype, ctx.def_types)


def _type_mod_full(ctx: _Ctx) -> int:
    """``runEffectiveness`` with the move's and effects' Effectiveness handlers."""
    dfn = ctx.dfn
    mtype = ctx.mtype
    if mtype == "Stellar":
        return 1 if dfn.terastallized else 0
    dex = ctx.dex
    total = 0
    mid = ctx.move.id
    for t in ctx.def_types:
        mod = _type_mod(dex, mtype, (t,))
        if mid == "freezedry" and t == "Water":
            mod = 1
        elif mid == "flyingpress":
            mod += _type_mod(dex, "Flying", (t,))
        if ctx.weather == "deltastream" and t == "Flying" and mod > 0:
            mod = 0
        total += mod
    return max(-6, min(6, total))


def _hits_substitute(ctx: _Ctx) -> bool:
    return (
        "substitute" in ctx.dfn.volatiles and "bypasssub" not in ctx.flags and not ctx.infiltrates
    )


def _intact_form(ctx: _Ctx) -> str:
    """Which intact form ("disguise", "iceface") takes this hit; "" when none."""
    ability = ctx.def_ability
    if ability not in ("disguise", "iceface"):
        return ""
    species = ctx.def_species.get("id") or ctx.dfn.species
    if ability == "disguise" and species in _DISGUISE_FORMS:
        return "" if _hits_substitute(ctx) else "disguise"
    if ability == "iceface" and species in _ICE_FACE_FORMS and ctx.category == "Physical":
        return "" if _hits_substitute(ctx) else "iceface"
    return ""


def _crit_chance(ctx: _Ctx) -> float:
    m = ctx.move
    if ctx.def_ability in ("battlearmor", "shellarmor") or _intact_form(ctx):
        return 0.0
    if m.will_crit:
        return 1.0
    ratio = m.crit_ratio
    ability, item = ctx.atk_ability, ctx.atk_item
    if ability == "superluck":
        ratio += 1
    if item in ("scopelens", "razorclaw"):
        ratio += 1
    elif item in ("leek", "stick") and ctx.atk_species.get("baseSpecies") in (
        "Farfetch\u2019d",
        "Sirfetch\u2019d",
    ):
        ratio += 2
    elif item == "luckypunch" and ctx.atk_species.get("baseSpecies") == "Chansey":
        ratio += 2
    vol = ctx.atk.volatiles
    if "focusenergy" in vol:
        ratio += 2
    if "dragoncheer" in vol:
        ratio += 2 if "Dragon" in ctx.atk_types else 1
    if ability == "merciless" and ctx.dfn.status in ("psn", "tox"):
        ratio = 5
    ratio = max(0, min(4, ratio))
    return _CRIT_CHANCE[ratio]
