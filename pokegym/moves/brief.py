"""What the designer and the judge are told: a Pokémon's brief and the real moves
closest to a design (shared by :mod:`pokegym.moves.generate` and
:mod:`pokegym.moves.judge`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pokegym.llm.base import LLMError
from pokegym.moves.schema import MoveDesign
from pokegym.world.data import Dex, load_dex, to_id


class MoveGenerationError(LLMError):
    """Generation could not run (unknown Pokémon, bad arguments, a backend that failed)."""


@dataclass(frozen=True)
class PokemonBrief:
    """What the designer is told about a Pokémon."""

    name: str
    types: tuple[str, ...]
    base_stats: Mapping[str, int]

    @property
    def stronger_stat(self) -> str:
        return "Attack" if self.base_stats["atk"] >= self.base_stats["spa"] else "Sp. Atk"

    @property
    def category(self) -> str:
        return "Physical" if self.base_stats["atk"] >= self.base_stats["spa"] else "Special"

    @property
    def types_text(self) -> str:
        return f"a {'/'.join(self.types)}-type Pokémon"

    @classmethod
    def of(cls, name: str, dex: Dex | None = None) -> PokemonBrief:
        dex = dex or load_dex(9)
        entry = dex.species.get(to_id(name))
        if entry is None:
            raise MoveGenerationError(
                f"Unknown Pokémon {name!r}: use a species name as Showdown spells it "
                "(e.g. Garchomp)."
            )
        return cls(str(entry["name"]), tuple(entry["types"]), dict(entry["baseStats"]))


def similar_moves(design: MoveDesign, dex: Dex, k: int = 3) -> list[str]:
    """The ``k`` Showdown moves closest to ``design`` (same type first, then numbers).

    Shown to the judge so that "originality" is judged against real moves.
    """
    scored = []
    for entry in dex.moves.values():
        if entry.get("designed") or entry.get("category") not in ("Physical", "Special"):
            continue
        power = entry.get("basePower") or 0
        if not power:
            continue
        accuracy = 100 if entry.get("accuracy") is True else int(entry.get("accuracy") or 100)
        distance = (
            (0 if entry.get("type") == design.type else 100)
            + (0 if entry.get("category") == design.category else 20)
            + abs(power - design.power) / 2
            + abs(accuracy - design.accuracy) / 2
        )
        scored.append((distance, str(entry["name"]), entry))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [
        f"{name} ({entry['type']}, {entry['category']}, power {entry['basePower']}, "
        f"accuracy {entry['accuracy'] if entry['accuracy'] is not True else '-'}, pp {entry['pp']})"
        for _, name, entry in scored[:k]
    ]
