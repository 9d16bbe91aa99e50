"""Game data exactly as the installed Showdown ships it, one generation at a time.

The simulator bridge exports Showdown's own tables (species, moves, items,
abilities, natures, type chart) as JSON once; they are cached next to the Showdown
install (``$POKEGYM_HOME/data/<install>/gen<N>.json``) and loaded from there
afterwards. Nothing here is typed in by hand. Effects that Showdown implements as
code (an item's ``onBasePower``, an ability's ``onModifyAtk``) are not data; each
entry lists the names of its callbacks in ``callbacks`` so that code implementing
them can check which entries have them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from pokegym.files import atomic_write_json
from pokegym.showdown.install import cache_home, lock_hash
from pokegym.showdown.simulator import shared_simulator

TYPES = (
    "Bug", "Dark", "Dragon", "Electric", "Fairy", "Fighting", "Fire", "Flying", "Ghost",
    "Grass", "Ground", "Ice", "Normal", "Poison", "Psychic", "Rock", "Steel", "Water",
)  # fmt: skip
STATS = ("hp", "atk", "def", "spa", "spd", "spe")


def to_id(text: str) -> str:
    """Showdown's ``toID``: lower case, letters and digits only."""
    if type(text) is str:
        return _str_id(text)
    return _NON_ID.sub("", str(text).lower())


_NON_ID = re.compile(r"[^a-z0-9]")


@lru_cache(maxsize=1 << 16)
def _str_id(text: str) -> str:
    return _NON_ID.sub("", text.lower())


# Showdown's damageTaken codes: 0 normal, 1 weak (x2), 2 resists (x0.5), 3 immune.
_TAKEN = {0: 1.0, 1: 2.0, 2: 0.5, 3: 0.0}


@dataclass(frozen=True)
class Dex:
    """Showdown's data for one generation (dicts keyed by Showdown id)."""

    gen: int
    species: dict[str, dict[str, Any]]
    moves: dict[str, dict[str, Any]]
    items: dict[str, dict[str, Any]]
    abilities: dict[str, dict[str, Any]]
    natures: dict[str, dict[str, Any]]
    type_chart: dict[str, dict[str, int]]

    def effectiveness(self, move_type: str, defender_types: tuple[str, ...]) -> float:
        """Type multiplier of ``move_type`` against a Pokémon with ``defender_types``."""
        value = 1.0
        for defender in defender_types:
            taken = self.type_chart.get(defender)
            if taken is not None:
                value *= _TAKEN[taken.get(move_type, 0)]
        return value

    def species_entry(self, name: str) -> dict[str, Any]:
        entry = self.species.get(to_id(name))
        if entry is None:
            raise KeyError(f"Showdown's gen {self.gen} data has no species {name!r}")
        return entry

    def base_species(self, name: str) -> str:
        """The id of ``name``'s base species (``urshifurapidstrike`` → ``urshifu``); the id
        itself for a base species or a name the data lacks."""
        species = to_id(name)
        return to_id((self.species.get(species) or {}).get("baseSpecies") or species)

    def move_entry(self, name: str) -> dict[str, Any]:
        entry = self.moves.get(to_id(name))
        if entry is None:
            raise KeyError(f"Showdown's gen {self.gen} data has no move {name!r}")
        return entry


def _cache_file(gen: int) -> Path:
    return cache_home() / "data" / lock_hash() / f"gen{gen}.json"


@cache
def load_dex(gen: int) -> Dex:
    """Showdown's data for ``gen`` (exported through the simulator on first use)."""
    path = _cache_file(gen)
    if path.exists():
        raw = json.loads(path.read_text())
    else:
        sim = shared_simulator()
        sim.ensure_running()
        raw = sim.call([["dex", gen]], timeout=300)[0]
        if "error" in raw:
            raise RuntimeError(f"Could not export Showdown's gen {gen} data: {raw['error']}")
        atomic_write_json(path, raw)
    species = raw["species"]
    # Cosmetic formes (Florges-Blue, Gastrodon-East, ...) share their base entry; poke-env
    # and the protocol name them, Showdown's species table does not list them.
    for entry in list(species.values()):
        for forme in entry.get("cosmeticFormes") or ():
            species.setdefault(to_id(forme), entry)
    return Dex(
        gen=gen,
        species=species,
        moves=raw["moves"],
        items=raw["items"],
        abilities=raw["abilities"],
        natures=raw["natures"],
        type_chart=raw["typeChart"],
    )
