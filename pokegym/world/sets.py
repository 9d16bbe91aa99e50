"""Full Pokémon sets (species, level, item, ability, moves, nature, EVs, IVs, Tera
Type) and the stats they give."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from pokegym.world.data import STATS, Dex, to_id


def _stat_table(values: dict[str, int] | None, default: int) -> tuple[int, ...]:
    values = values or {}
    return tuple(int(values.get(stat, default)) for stat in STATS)


@dataclass(frozen=True)
class PokemonSet:
    """One set, with Showdown ids for species, item, ability and moves.

    ``evs`` and ``ivs`` are in ``STATS`` order (hp, atk, def, spa, spd, spe).
    An empty ``nature`` is neutral (random battles use no nature).
    """

    species: str
    level: int = 100
    item: str = ""
    ability: str = ""
    moves: tuple[str, ...] = ()
    nature: str = ""
    evs: tuple[int, ...] = (0, 0, 0, 0, 0, 0)
    ivs: tuple[int, ...] = (31, 31, 31, 31, 31, 31)
    tera_type: str = ""
    gender: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @classmethod
    def from_showdown(cls, data: dict[str, Any]) -> PokemonSet:
        """From Showdown's ``PokemonSet`` JSON (the bridge's ``teams``/``import``)."""
        return cls(
            species=to_id(data.get("species") or data.get("name", "")),
            level=int(data.get("level") or 100),
            item=to_id(data.get("item", "")),
            ability=to_id(data.get("ability", "")),
            moves=tuple(to_id(move) for move in data.get("moves", [])),
            nature=to_id(data.get("nature", "")),
            evs=_stat_table(data.get("evs"), 0),
            ivs=_stat_table(data.get("ivs"), 31),
            tera_type=str(data.get("teraType") or ""),
            gender=str(data.get("gender") or ""),
        )

    def stats(self, dex: Dex) -> dict[str, int]:
        """The six stats at this level (Showdown's gen 3+ formula, integer steps)."""
        return compute_stats(dex, self.species, self.level, self.evs, self.ivs, self.nature)


def compute_stats(
    dex: Dex,
    species: str,
    level: int,
    evs: tuple[int, ...] = (0, 0, 0, 0, 0, 0),
    ivs: tuple[int, ...] = (31, 31, 31, 31, 31, 31),
    nature: str = "",
) -> dict[str, int]:
    """Stats from base stats, EVs, IVs, level and nature, rounded as the games do."""
    entry = dex.species_entry(species)
    base = entry["baseStats"]
    plus = minus = None
    if nature:
        nature_entry = dex.natures.get(to_id(nature), {})
        plus, minus = nature_entry.get("plus"), nature_entry.get("minus")
    out: dict[str, int] = {}
    for i, stat in enumerate(STATS):
        core = (2 * base[stat] + ivs[i] + evs[i] // 4) * level // 100
        if stat == "hp":
            out[stat] = 1 if entry.get("maxHP") == 1 else core + level + 10
            continue
        value = core + 5
        if stat == plus:
            value = math.floor(value * 110 / 100)
        elif stat == minus:
            value = math.floor(value * 90 / 100)
        out[stat] = value
    return out
