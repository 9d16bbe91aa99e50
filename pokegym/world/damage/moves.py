"""Move and species data as the damage calculator needs it: each move's resolved entry
(cached), its Max Move, and which effects of Showdown's data it does not model.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Final

from pokegym.world.damage.tables import (
    _HANDLED_ABILITIES,
    _HANDLED_ITEMS,
    _HANDLED_MOVES,
    _INERT_ABILITIES,
    _INERT_ITEMS,
    _MOVE_CALLBACKS,
    _RELEVANT_CALLBACKS,
)
from pokegym.world.data import Dex, to_id


# ------------------------------------------------------------------ move data
@dataclass(frozen=True, slots=True)
class _MoveData:
    id: str
    type: str
    category: str
    base_power: int
    priority: int
    flags: frozenset[str]
    crit_ratio: int
    multihit: Any
    multiaccuracy: bool
    will_crit: bool
    ignore_defensive: bool
    ignore_offensive: bool
    ignore_immunity: Any
    ignore_ability: bool
    offensive_stat: str
    offensive_target: bool
    defensive_stat: str
    has_secondaries: bool
    sheer_force_boost: bool
    recoil: bool
    force_stab: bool
    ohko: Any  # False, True, or the type it cannot knock out (Sheer Cold: "Ice")
    fixed: Any
    callbacks: frozenset[str]
    unsupported: bool


_MOVE_CACHE: Final[dict[tuple[int, str], _MoveData]] = {}


def _move_data(dex: Dex, move_id: str) -> _MoveData:
    key = (dex.gen, move_id)
    data = _MOVE_CACHE.get(key)
    if data is not None:
        return data
    entry = dex.moves.get(move_id)
    if entry is None:
        entry = dex.move_entry(move_id)  # raises KeyError with a clear message
    callbacks = frozenset(entry.get("callbacks", ()))
    unsupported = bool(callbacks & _MOVE_CALLBACKS) and entry["id"] not in _HANDLED_MOVES
    unsupported = unsupported or bool(entry.get("isZ") or entry.get("isMax"))
    ignore_immunity = entry.get("ignoreImmunity", False)
    if isinstance(ignore_immunity, dict):
        ignore_immunity = frozenset(k for k, v in ignore_immunity.items() if v)
    data = _MoveData(
        id=entry["id"],
        type=entry.get("type", "???"),
        category=entry.get("category", "Physical"),
        base_power=int(entry.get("basePower", 0) or 0),
        priority=int(entry.get("priority", 0) or 0),
        flags=frozenset(k for k, v in (entry.get("flags") or {}).items() if v),
        crit_ratio=int(entry.get("critRatio", 1) or 0),
        multihit=tuple(entry["multihit"]) if isinstance(entry.get("multihit"), list)
        else entry.get("multihit"),
        multiaccuracy=bool(entry.get("multiaccuracy")),
        will_crit=bool(entry.get("willCrit")),
        ignore_defensive=bool(entry.get("ignoreDefensive")),
        ignore_offensive=bool(entry.get("ignoreOffensive")),
        ignore_immunity=ignore_immunity,
        ignore_ability=bool(entry.get("ignoreAbility")),
        offensive_stat=entry.get("overrideOffensiveStat") or "",
        offensive_target=entry.get("overrideOffensivePokemon") == "target",
        defensive_stat=entry.get("overrideDefensiveStat") or "",
        has_secondaries=bool(entry.get("secondaries")),
        sheer_force_boost=bool(entry.get("hasSheerForceBoost")),
        recoil=bool(entry.get("recoil") or entry.get("hasCrashDamage")),
        force_stab=bool(entry.get("forceSTAB")),
        ohko=entry.get("ohko") or False,
        fixed=entry.get("damage"),
        callbacks=callbacks,
        unsupported=unsupported,
    )  # fmt: skip
    _MOVE_CACHE[key] = data
    return data


_MAX_CACHE: Final[dict[tuple[int, str], _MoveData]] = {}


def max_move_of(dex: Dex, move_type: str) -> str:
    """The id of the Max Move a damaging move of ``move_type`` becomes ("" if none)."""
    for move_id, entry in dex.moves.items():
        if (
            entry.get("isMax") is True
            and entry.get("type") == move_type
            and entry.get("category") != "Status"
        ):
            return move_id
    return ""


def _max_move_data(dex: Dex, base: _MoveData) -> _MoveData:
    """The Max Move a Dynamaxed Pokémon uses for the damaging move ``base`` (Showdown's
    ``getMaxMove``): the base move's type and category, its ``maxMove.basePower``."""
    key = (dex.gen, base.id)
    data = _MAX_CACHE.get(key)
    if data is not None:
        return data
    max_id = max_move_of(dex, base.type)
    if not max_id:
        raise KeyError(f"Showdown's gen {dex.gen} data has no Max Move of type {base.type!r}")
    power = int(((dex.moves[base.id].get("maxMove") or {}).get("basePower")) or 0)
    data = dataclasses.replace(
        _move_data(dex, max_id), category=base.category, base_power=power, unsupported=False
    )
    _MAX_CACHE[key] = data
    return data


_EFFECT_CACHE: Final[dict[tuple[int, str, str, str], bool]] = {}
# Callbacks that only act when the holder attacks / only when it is hit.
_ATTACKER_ONLY: Final = frozenset((
    "onBasePower", "onModifyAtk", "onModifySpA", "onModifyDamage", "onModifyType",
    "onModifyMove", "onModifySTAB", "onModifyCritRatio", "onPrepareHit", "onAllyBasePower",
    "onAllyModifyAtk",
))  # fmt: skip
_DEFENDER_ONLY: Final = frozenset((
    "onSourceBasePower", "onSourceModifyAtk", "onSourceModifySpA", "onModifyDef", "onModifySpD",
    "onSourceModifyDamage", "onTryHit", "onCriticalHit", "onEffectiveness", "onFoeTryMove",
    "onAllyModifySpD", "onFoeBasePower", "onSourceModifySecondaries",
))  # fmt: skip


def _unmodelled(dex: Dex, kind: str, effect_id: str, role: str) -> bool:
    """True when an ability/item of the attacker (``role`` "attacker") or defender
    changes damage in Showdown and is not modelled here."""
    if not effect_id:
        return False
    key = (dex.gen, kind, effect_id, role)
    cached = _EFFECT_CACHE.get(key)
    if cached is not None:
        return cached
    table = dex.abilities if kind == "ability" else dex.items
    handled = (
        _HANDLED_ABILITIES | _INERT_ABILITIES
        if kind == "ability"
        else _HANDLED_ITEMS | _INERT_ITEMS
    )
    entry = table.get(effect_id)
    result = False
    if entry is not None and effect_id not in handled:
        callbacks = set(entry.get("callbacks", ())) & _RELEVANT_CALLBACKS
        callbacks -= _DEFENDER_ONLY if role == "attacker" else _ATTACKER_ONLY
        result = bool(callbacks)
    _EFFECT_CACHE[key] = result
    return result


def known_species(dex: Dex, species: str) -> str:
    """``species`` as an id of Showdown's species table: a cosmetic forme missing from
    the table (e.g. ``florgesorange``) becomes the longest listed prefix (``florges``)."""
    sid = to_id(species)
    if sid in dex.species:
        return sid
    for end in range(len(sid) - 1, 2, -1):
        if sid[:end] in dex.species:
            return sid[:end]
    raise KeyError(f"Showdown's gen {dex.gen} data has no species {species!r}")


def _species_entry(dex: Dex, species: str) -> dict[str, Any]:
    entry = dex.species.get(species)
    if entry is None:
        entry = dex.species.get(to_id(species))
    return entry or {}
