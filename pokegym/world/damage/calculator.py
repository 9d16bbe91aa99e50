"""The damage calculator: Showdown's damage formula for generations 8 and 9.

Every step follows Showdown 0.11.11's ``battle-actions.js`` (``getDamage`` and
``modifyDamage``) and the effect code in ``data/{items,abilities,moves,conditions}.js``,
with the same integer arithmetic:

* base damage ``floor(floor(floor(2 * level / 5 + 2) * power * attack / defense) / 50)``;
* ``+ 2``, weather (``WeatherModifyDamage``), critical hit ``floor(x * 1.5)``, the random
  roll ``floor(x * (85..100) / 100)``, STAB (Tera rules, Adaptability), type effectiveness
  (``x * 2`` per weakness, ``floor(x / 2)`` per resistance), burn, then the
  ``ModifyDamage`` event (Life Orb, Expert Belt, screens, Multiscale, resist berries...);
* every event (``BasePower``, ``ModifyAtk``/``SpA``/``Def``/``SpD``, ``ModifyDamage``)
  collects its handlers, orders them as Showdown does (priority, then the holder's speed,
  then effect kind), chains them with ``chainModify``'s 4096-based rounding
  (``(a * b + 2048) >> 12``) and applies the result with ``modify``
  (``(value * m + 2047) >> 12``).

Anything this module does not model (an ability, item or move effect that changes damage
in Showdown but has no implementation here) never raises: the plain formula is used and
the result is flagged :attr:`DamageResult.approximate`, with the reasons in
:attr:`DamageResult.notes`. Which effects matter is read from Showdown's data (each entry
lists its callbacks), so a new damage-relevant effect is flagged rather than ignored.

Before the formula come the move's own rules, in the order of Showdown's
``trySpreadMoveHit``: moves that fail (Steel Roller without a terrain, Dream Eater on a
target that is awake, Fling without an item it can throw, OHKO moves on a higher level,
a Dynamaxed target, Sturdy or — Sheer Cold — an Ice type), power set before the hit
(Fling), the user's type change (Protean, Libero), the +1 Special Attack of a charging
turn (Meteor Beam, Electro Shot), critical hits that always happen (Frost Breath...), a
Disguise or Ice Face that takes the first hit and breaks (the result reports the broken
form too), and Defense that changes between the hits of a multi-hit move (Weak Armor,
Stamina, Water Compaction).

Still flagged approximate, because the state they need is not in a :class:`Combatant`
or Showdown decides them at random:

* moves whose power or damage depends on the battle's history or on chance: Assurance,
  Beat Up, Echoed Voice, Fury Cutter, Ice Ball, Magnitude, Natural Gift, Present,
  Psywave, Punishment, Pursuit, Retaliate, Fickle Beam, Shell Trap, Spit Up, Trump Card,
  Techno Blast, Synchronoise, Thousand Arrows / Waves, Sky Drop, Razor Wind, Skull Bash,
  Smelling Salts, Wake-Up Slap, Secret Power, Core Enforcer, Flame Burst, Return /
  Frustration (most are not in generation 9); Shell Side Arm when both categories tie;
* the move order when ``target_moved`` is None (Analytic, Payback, Bolt Beak);
* Stance Change (Aegislash's forme before the hit), Tera Shell, Stellar Tera Blast and
  Tera Starstorm, Max Moves whose type or power a callback sets, anti-Dynamax moves on a
  Dynamaxed target, statuses other than brn/par/psn/tox/slp/frz;
* abilities and items whose damage callbacks have no implementation here (read from
  Showdown's data), and effects that change a multi-hit move between its hits other than
  the three above (Seed Sower and Sand Spit change the field, Mummy, Lingering Aroma and
  Wandering Spirit the attacker's ability);
* an Eiscue's Noice-form stats when ``broken_form_stats`` is not given (estimated with a
  neutral nature).

Results are cached per (attacker, defender, move, field) state; the world model calls
:func:`calculate` thousands of times per decision.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Final

from pokegym.world.damage.combatant import Combatant, DamageResult, Field
from pokegym.world.damage.context import (
    _crit_chance,
    _Ctx,
    _fails,
    _hits_substitute,
    _intact_form,
    _prepare,
    _type_mod_full,
)
from pokegym.world.damage.moves import _MoveData, _species_entry
from pokegym.world.damage.power import _RETURN_MOVES, _base_power
from pokegym.world.damage.stats import _attack_stat, _damage_mod, _defense_stat, _stab
from pokegym.world.damage.tables import (
    _BETWEEN_HITS,
    _DISGUISE_FORMS,
    _HALVING_MOVES,
    _ICE_FACE_FORMS,
    _TWO_TO_FIVE,
    _TWO_TO_FIVE_LOADED,
)
from pokegym.world.data import Dex, to_id

# The package's other modules hold the steps (see pokegym/world/damage/__init__.py); this
# one holds the formula, the hit tables and results, form breaks and the public API.


# ------------------------------------------------------------------- the formula
def _hit_rolls(
    ctx: _Ctx, hit: int, crit: bool, first_hit: bool, type_mod: int, stab: int, bp: int = -1
) -> tuple[tuple[int, ...], bool]:
    """The 16 damages of one hit and whether a resist berry was used up (``bp``: the
    hit's base power when the caller has it, which does not depend on the crit)."""
    if bp < 0:
        bp = _base_power(ctx, hit, first_hit)
    if not bp:
        return (0,) * 16, False
    attack = _attack_stat(ctx, crit)
    defense = _defense_stat(ctx, crit)
    level = ctx.atk.level
    base = ((2 * level // 5 + 2) * bp * attack // max(1, defense)) // 50
    base = base & 0xFFFFFFFF
    base += 2
    # WeatherModifyDamage
    mtype = ctx.mtype
    weather = ctx.weather
    if weather:
        dw = ctx.def_weather
        wmod = 4096
        if ctx.move.id == "hydrosteam" and ctx.atk_weather == "sunnyday" and weather == "sunnyday":
            wmod = 6144
        elif dw == "sunnyday":
            wmod = 6144 if mtype == "Fire" else 2048 if mtype == "Water" else 4096
        elif dw == "raindance":
            wmod = 6144 if mtype == "Water" else 2048 if mtype == "Fire" else 4096
        elif (dw == "desolateland" and mtype == "Fire") or (
            dw == "primordialsea" and mtype == "Water"
        ):
            wmod = 6144
        if wmod != 4096:
            base = (base * wmod + 2047) >> 12
    if crit:
        base = base * 3 // 2
    burn = (
        ctx.atk.status == "brn"
        and ctx.category == "Physical"
        and ctx.atk_ability != "guts"
        and ctx.move.id != "facade"
    )
    final_mod, berry = _damage_mod(ctx, crit, first_hit, type_mod)
    # A Max Move (or Unseen Fist) through Protect: x0.25 after the ModifyDamage event.
    through_protect = "protect" in ctx.dfn.volatiles and (
        bool(ctx.dex.moves.get(ctx.move.id, {}).get("isMax"))
        or (ctx.atk_ability == "unseenfist" and "contact" in ctx.flags)
    )
    rolls = []
    for r in range(85, 101):
        d = base * r // 100
        d = (d * stab + 2047) >> 12
        if type_mod > 0:
            d <<= type_mod
        elif type_mod < 0:
            d >>= -type_mod
        if burn:
            d = (d * 2048 + 2047) >> 12
        d = (d * final_mod + 2047) >> 12
        if through_protect:
            d = (d * 1024 + 2047) >> 12
        if not d:
            d = 1
        rolls.append(d & 0xFFFF)
    return tuple(rolls), berry


def _hit_distribution(ctx: _Ctx, m: _MoveData) -> tuple[tuple[int, float], ...]:
    multihit = m.multihit
    if not multihit:
        return ((1, 1.0),)
    skill_link = ctx.atk_ability == "skilllink"
    loaded = ctx.atk_item == "loadeddice"
    if isinstance(multihit, tuple):
        low, high = multihit
        if skill_link:
            return ((high, 1.0),)
        if (low, high) == (2, 5):
            return _TWO_TO_FIVE_LOADED if loaded else _TWO_TO_FIVE
        n = high - low + 1
        return tuple((k, 1.0 / n) for k in range(low, high + 1))
    count = int(multihit)
    if count == 10 and loaded:
        return tuple((k, 1.0 / 7) for k in range(4, 11))
    if m.multiaccuracy and not skill_link and not loaded:
        # Each hit after the first rolls accuracy again (given that the first landed).
        accuracy = _move_accuracy(ctx)
        if accuracy < 1.0:
            dist = []
            for k in range(1, count + 1):
                p = accuracy ** (k - 1) * ((1 - accuracy) if k < count else 1.0)
                dist.append((k, p))
            return tuple(dist)
    return ((count, 1.0),)


def _move_accuracy(ctx: _Ctx) -> float:
    entry = ctx.dex.moves.get(ctx.move.id) or {}
    accuracy = entry.get("accuracy", 100)
    if accuracy is True or ctx.atk_ability == "noguard" or ctx.def_ability == "noguard":
        return 1.0
    value = accuracy / 100.0
    if ctx.atk_item == "widelens":
        value *= 1.1
    return min(1.0, value)


def _zero_result(
    ctx: _Ctx | None, note: str = "", approximate: bool = False, effectiveness: float = 0.0
) -> DamageResult:
    zeros = (0,) * 16
    notes = tuple(ctx.notes) if ctx is not None else ()
    if note and note not in notes:
        notes = (*notes, note)
    return DamageResult(
        rolls=zeros, crit_rolls=zeros, hits=(1, 1.0), min=0, max=0, expected=0.0,
        effectiveness=effectiveness, approximate=approximate or bool(ctx and ctx.notes),
        move_type=ctx.mtype if ctx is not None else "",
        category=ctx.category if ctx is not None else "", notes=notes,
    )  # fmt: skip


def _holds_at_full_hp(ctx: _Ctx) -> int:
    """The defender's max HP when Sturdy / Focus Sash would leave it at 1 HP, else 0."""
    if ctx.def_hp >= ctx.def_max_hp and (
        ctx.def_item == "focussash" or ctx.def_ability == "sturdy"
    ):
        return ctx.def_max_hp
    return 0


def _fixed_result(ctx: _Ctx, damage: int, effectiveness: float) -> DamageResult:
    rolls = (damage,) * 16
    return DamageResult(
        rolls=rolls, crit_rolls=rolls, hits=(1, 1.0), min=damage, max=damage,
        expected=float(damage), effectiveness=effectiveness, approximate=bool(ctx.notes),
        move_type=ctx.mtype, category=ctx.category, notes=tuple(ctx.notes),
        blocks_ohko_at=_holds_at_full_hp(ctx),
    )  # fmt: skip


def _fixed_damage(ctx: _Ctx, m: _MoveData) -> int | None:
    """The damage of a move that ignores the formula (None: the formula applies; 0: the
    move does nothing here)."""
    mid = m.id
    if m.ohko:
        return ctx.def_max_hp
    if mid in _HALVING_MOVES:
        return max(1, ctx.def_hp // 2)
    if mid == "finalgambit":
        return ctx.atk_hp
    if mid == "endeavor":
        return ctx.def_hp - ctx.atk_hp
    if m.fixed == "level":
        return ctx.atk.level
    if isinstance(m.fixed, int) and m.fixed:
        return m.fixed
    if mid in _RETURN_MOVES:
        wanted = _RETURN_MOVES[mid]
        taken = [hp for hp, kind in ctx.atk.damage_taken_this_turn if not wanted or kind == wanted]
        if not taken:
            return 0
        returned = 2 * taken[-1] if wanted else math.floor(taken[-1] * 1.5)
        return max(1, returned)
    return None


def _defence_stages(ctx: _Ctx, hits: int) -> list[int] | None:
    """The defender's Defense stage at each of ``hits`` hits when its ability changes it
    after every hit (Weak Armor, Stamina, Water Compaction), else None."""
    ability = ctx.def_ability
    if ability == "weakarmor" and ctx.category == "Physical":
        step = -1
    elif ability == "stamina":
        step = 1
    elif ability == "watercompaction" and ctx.mtype == "Water":
        step = 2
    else:
        return None
    if hits < 2 or _hits_substitute(ctx):
        return None
    stage = ctx.dfn.boosts.get("def", 0) if ctx.dfn.boosts else 0
    stages = [stage]
    for _ in range(hits - 1):
        stage = max(-6, min(6, stage + step))
        stages.append(stage)
    return stages


def _hit_table(
    ctx: _Ctx, first: int, last: int, type_mod: int, stab: int, can_crit: bool
) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """The rolls without and with a crit of hits ``first``..``last`` (hit ``first`` is the
    first that reaches the target). Later hits are computed again only where something
    changes: the power (Triple Axel), a resist berry or Multiscale used up, the
    defender's Defense (Weak Armor)."""
    bp = _base_power(ctx, first, True)
    rolls, berry = _hit_rolls(ctx, first, False, True, type_mod, stab, bp)
    crits = _hit_rolls(ctx, first, True, True, type_mod, stab, bp)[0] if can_crit else rolls
    normal, critical = [rolls], [crits]
    if last <= first:
        return normal, critical
    varying = ctx.move.id in ("tripleaxel", "triplekick")
    stages = _defence_stages(ctx, last - first + 1)
    for effect in (ctx.def_ability, ctx.def_item):
        if effect in _BETWEEN_HITS:
            ctx.note(f"between hits: {effect}")
    first_only = berry or (
        ctx.def_ability in ("multiscale", "shadowshield") and ctx.def_hp >= ctx.def_max_hp
    )
    if not (varying or stages or first_only):
        count = last - first + 1
        return normal * count, critical * count
    for index, hit in enumerate(range(first + 1, last + 1), start=1):
        if index > 1 and not varying and not stages:
            normal.append(normal[-1])
            critical.append(critical[-1])
            continue
        ctx.def_boost = stages[index] if stages else None
        bp = _base_power(ctx, hit, False)
        rolls = _hit_rolls(ctx, hit, False, False, type_mod, stab, bp)[0]
        crits = _hit_rolls(ctx, hit, True, False, type_mod, stab, bp)[0] if can_crit else rolls
        normal.append(rolls)
        critical.append(crits)
    ctx.def_boost = None
    return normal, critical


def _result(
    ctx: _Ctx,
    dist: tuple[tuple[int, float], ...],
    normal: list[tuple[int, ...]],
    critical: list[tuple[int, ...]],
    crit_chance: float,
    use_crit: bool,
    effectiveness: float,
    *,
    form_break_hp: int = 0,
    broken_form: DamageResult | None = None,
) -> DamageResult:
    """Totals over hit counts, rolls and crits from the rolls of every hit."""
    if len(normal) == 1:  # one hit: most moves
        rolls, crits = normal[0], critical[0]
        mean = sum(rolls) / 16
        if crit_chance:
            mean = (1 - crit_chance) * mean + crit_chance * sum(crits) / 16
        use = crits if use_crit else rolls
        return DamageResult(
            rolls=rolls, crit_rolls=crits, hits=(1, 1.0), min=form_break_hp + min(use),
            max=form_break_hp + max(use), expected=form_break_hp + mean,
            effectiveness=effectiveness, approximate=bool(ctx.notes), crit_chance=crit_chance,
            move_type=ctx.mtype, category=ctx.category, notes=tuple(ctx.notes),
            blocks_ohko_at=0 if broken_form is not None else _holds_at_full_hp(ctx),
            form_break_hp=form_break_hp, broken_form=broken_form,
        )  # fmt: skip
    max_hits = max(k for k, _ in dist)
    min_hits = min(k for k, _ in dist)
    p_reach = [0.0] * (max_hits + 1)
    for k, p in dist:
        for h in range(1, k + 1):
            p_reach[h] += p
    expected = float(form_break_hp)
    for h in range(1, max_hits + 1):
        mean = sum(normal[h - 1]) / 16
        if crit_chance:
            mean = (1 - crit_chance) * mean + crit_chance * sum(critical[h - 1]) / 16
        expected += p_reach[h] * mean
    per_hit = critical if use_crit else normal
    low = form_break_hp + sum(min(per_hit[h]) for h in range(min_hits))
    high = form_break_hp + sum(max(per_hit[h]) for h in range(max_hits))
    expected_hits = sum(k * p for k, p in dist)
    typical = max(1, int(expected_hits + 0.5)) if len(dist) > 1 else dist[0][0]
    return DamageResult(
        rolls=normal[0],
        crit_rolls=critical[0],
        hits=(typical, expected_hits),
        min=low,
        max=high,
        expected=expected,
        effectiveness=effectiveness,
        approximate=bool(ctx.notes),
        crit_chance=crit_chance,
        hit_distribution=dist,
        hit_rolls=tuple(normal) if max_hits > 1 else (),
        hit_crit_rolls=tuple(critical) if max_hits > 1 else (),
        move_type=ctx.mtype,
        category=ctx.category,
        notes=tuple(ctx.notes),
        blocks_ohko_at=0 if broken_form is not None else _holds_at_full_hp(ctx),
        form_break_hp=form_break_hp,
        broken_form=broken_form,
    )


def _can_crit(ctx: _Ctx) -> bool:
    return ctx.def_ability not in ("battlearmor", "shellarmor")


def _crit_terms(
    ctx: _Ctx, m: _MoveData, crit: bool | None, can_crit: bool
) -> tuple[float, bool, bool]:
    """(crit chance, whether min/max use the crit rolls, whether every hit crits)."""
    if not can_crit:
        return 0.0, False, False
    if m.will_crit:  # Frost Breath, Wicked Blow...: a hit without a crit cannot happen
        return 1.0, True, True
    chance = _crit_chance(ctx) if crit is None else (1.0 if crit else 0.0)
    return chance, bool(crit), False


def _broken_defender(ctx: _Ctx, form: str, chip: int) -> Combatant:
    """The defender once its Disguise / Ice Face has broken."""
    dfn, dex = ctx.dfn, ctx.dex
    species = ctx.def_species.get("id") or dfn.species
    table = _DISGUISE_FORMS if form == "disguise" else _ICE_FACE_FORMS
    broken = table.get(species, "")
    if broken not in dex.species:  # the data lacks the form: keep the species, drop the ability
        return dataclasses.replace(dfn, ability="", hp=max(1, dfn.current_hp - chip))
    stats = dfn.stats
    if form == "iceface":
        if dfn.broken_form_stats:
            stats = dict(dfn.broken_form_stats)
        else:
            stats = _estimated_form_stats(dfn, _species_entry(dex, species), dex.species[broken])
    return dataclasses.replace(
        dfn, species=broken, stats=stats, hp=max(1, dfn.current_hp - chip), broken_form_stats=None
    )


def broken_form(
    dex: Dex, species: str, stats: dict[str, int], level: int = 100
) -> tuple[str, dict[str, int]]:
    """The species id and stats of a Pokémon once its Disguise or Ice Face has broken
    (Mimikyu-Busted keeps its stats; Eiscue-Noice's are estimated from Eiscue's with the
    same investment). ``("", stats)`` when ``species`` has no such form in the data."""
    broken = _DISGUISE_FORMS.get(species) or _ICE_FACE_FORMS.get(species, "")
    if broken not in dex.species:
        return "", stats
    if species in _ICE_FACE_FORMS:
        probe = Combatant(species=species, level=level, types=(), stats=dict(stats))
        stats = _estimated_form_stats(probe, _species_entry(dex, species), dex.species[broken])
    return broken, stats


def _estimated_form_stats(c: Combatant, old: dict[str, Any], new: dict[str, Any]) -> dict[str, int]:
    """Stats of another form from the current ones, assuming the same investment and a
    neutral nature (the caller did not give them)."""
    old_base, new_base = old.get("baseStats") or {}, new.get("baseStats") or {}
    stats = dict(c.stats)
    for stat, value in c.stats.items():
        delta = int(new_base.get(stat, 0)) - int(old_base.get(stat, 0))
        if stat != "hp" and delta:
            stats[stat] = max(1, value + 2 * delta * c.level // 100)
    return stats


def _form_blocked(
    ctx: _Ctx, m: _MoveData, move_id: str, form: str, crit: bool | None, effectiveness: float
) -> DamageResult:
    """The use of a move whose first hit an intact Disguise / Ice Face takes."""
    chip = max(1, ctx.def_max_hp // 8) if form == "disguise" else 0
    broken_dfn = _broken_defender(ctx, form, chip)
    broken = _compute(ctx.dex, ctx.atk, broken_dfn, move_id, ctx.fld, crit, ctx.target_moved)
    estimated = form == "iceface" and not ctx.dfn.broken_form_stats
    if estimated:
        broken = dataclasses.replace(
            broken, approximate=True, notes=(*broken.notes, "eiscue-noice stats estimated")
        )
    zeros: tuple[int, ...] = (0,) * 16
    dist = _hit_distribution(ctx, m)
    max_hits = max(k for k, _ in dist)
    normal: list[tuple[int, ...]] = [zeros]
    critical: list[tuple[int, ...]] = [zeros]
    crit_chance, use_crit = 0.0, False
    if max_hits > 1 and broken.max > 0:
        # Later hits strike the broken form (the first of them uses up berries).
        if estimated:
            ctx.note("eiscue-noice stats estimated")
        bctx, _ = _prepare(ctx.dex, ctx.atk, broken_dfn, move_id, ctx.fld, ctx.target_moved)
        can_crit = _can_crit(bctx)
        crit_chance, use_crit, always = _crit_terms(bctx, m, crit, can_crit)
        later, later_crit = _hit_table(
            bctx, 2, max_hits, _type_mod_full(bctx), _stab(bctx), can_crit
        )
        normal += later_crit if always else later
        critical += later_crit
    elif max_hits > 1:
        normal, critical = [zeros] * max_hits, [zeros] * max_hits
    return _result(
        ctx, dist, normal, critical, crit_chance, use_crit, effectiveness,
        form_break_hp=chip, broken_form=broken,
    )  # fmt: skip


def _compute(
    dex: Dex, atk: Combatant, dfn: Combatant, move_id: str, fld: Field, crit: bool | None,
    target_moved: bool | None,
) -> DamageResult:  # fmt: skip
    ctx, m = _prepare(dex, atk, dfn, move_id, fld, target_moved)
    if ctx.category == "Status":
        return _zero_result(ctx, effectiveness=1.0)
    why = _fails(ctx)
    if why:
        return _zero_result(ctx, f"no effect: {why}")
    type_mod = _type_mod_full(ctx)
    effectiveness = 2.0**type_mod
    form = _intact_form(ctx)
    if form:
        return _form_blocked(ctx, m, move_id, form, crit, effectiveness)

    fixed = _fixed_damage(ctx, m)
    if fixed is not None:
        if not fixed:
            return _zero_result(ctx, "no effect: no damage to return")
        return _fixed_result(ctx, fixed, effectiveness)
    if "damageCallback" in m.callbacks:
        return _zero_result(ctx, f"move {m.id}", approximate=True, effectiveness=effectiveness)

    if ctx.def_ability == "terashell" and ctx.def_hp >= ctx.def_max_hp and type_mod >= 0:
        if ctx.def_species.get("name") == "Terapagos-Terastal":
            type_mod = -1
    stab = _stab(ctx)
    can_crit = _can_crit(ctx)
    crit_chance, use_crit, always = _crit_terms(ctx, m, crit, can_crit)
    dist = _hit_distribution(ctx, m)
    max_hits = max(k for k, _ in dist)
    normal, critical = _hit_table(ctx, 1, max_hits, type_mod, stab, can_crit)
    if always:
        normal = critical
    return _result(ctx, dist, normal, critical, crit_chance, use_crit, effectiveness)


# ------------------------------------------------------------------ public API
_CACHE: Final[dict[tuple[Any, ...], DamageResult]] = {}
_CACHE_LIMIT: Final = 200_000
_DEFAULT_FIELD: Final = Field()


def calculate(
    dex: Dex,
    attacker: Combatant,
    defender: Combatant,
    move: str,
    field: Field | None = None,
    *,
    crit: bool | None = None,
    target_moved: bool | None = None,
    use_cache: bool = True,
) -> DamageResult:
    """Damage of ``move`` from ``attacker`` to ``defender`` (Showdown's formula).

    Args:
        crit: None weighs critical hits by their chance; True/False forces them.
        target_moved: whether the defender has already moved this turn (Analytic,
            Payback, Bolt Beak, Fishious Rend); None when unknown (flagged approximate
            for those effects).
        use_cache: reuse results for identical states (the objects may be reused
            afterwards; the key is built from their values).

    Raises:
        KeyError: the move is not in Showdown's data for this generation.
    """
    fld = field or _DEFAULT_FIELD
    move_id = move if move in dex.moves else to_id(move)
    if not use_cache:
        return _compute(dex, attacker, defender, move_id, fld, crit, target_moved)
    key = (dex.gen, attacker._key(), defender._key(), move_id, fld._key(), crit, target_moved)
    result = _CACHE.get(key)
    if result is None:
        result = _compute(dex, attacker, defender, move_id, fld, crit, target_moved)
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[key] = result
    return result


def clear_cache() -> None:
    """Forget cached results (e.g. after patching game data in tests)."""
    _CACHE.clear()


def damage_over_prior(
    dex: Dex,
    attacker: Combatant,
    defender_candidates: list[tuple[Combatant, float]],
    move: str,
    field: Field | None = None,
) -> tuple[int, int, float, float]:
    """Damage over a distribution of hidden defender sets: ``(min, max, expected,
    KO probability)``, min/max over candidates with positive weight, expected and KO
    probability weighted (each candidate at its own current HP)."""
    return _over_prior(
        [(calculate(dex, attacker, d, move, field), d, w) for d, w in defender_candidates]
    )


def damage_over_attacker_prior(
    dex: Dex,
    attacker_candidates: list[tuple[Combatant, float]],
    defender: Combatant,
    move: str,
    field: Field | None = None,
) -> tuple[int, int, float, float]:
    """Like :func:`damage_over_prior`, with the attacker's set unknown."""
    return _over_prior(
        [(calculate(dex, a, defender, move, field), defender, w) for a, w in attacker_candidates]
    )


def _over_prior(
    results: list[tuple[DamageResult, Combatant, float]],
) -> tuple[int, int, float, float]:
    results = [(r, d, w) for r, d, w in results if w > 0]
    if not results:
        raise ValueError("damage over a prior needs at least one candidate with positive weight")
    total = sum(w for _, _, w in results)
    low = min(r.min for r, _, _ in results)
    high = max(r.max for r, _, _ in results)
    expected = sum(r.expected * w for r, _, w in results) / total
    ko = sum(r.ko_chance(d.current_hp) * w for r, d, w in results) / total
    return low, high, expected, ko
