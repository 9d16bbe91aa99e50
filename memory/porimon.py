"""Cross-battle experience memory for the ``porimon`` agent: items, similarity, retrieval.

After each battle the agent stores one :class:`ExperienceItem`: a summary of the end of
the battle log, tactical lessons, an importance score per Pokémon, both teams and the
outcome. Before a decision it retrieves the items whose teams look most like the current
battle's.

Similarity
----------
A Pokémon ``p`` is described by its six base stats ``b_p`` (HP, Atk, Def, SpA, SpD, Spe),
its HP fraction ``h_p`` and the set ``F_p`` of its types, ability and status. Two
Pokémon compare as::

    sim(p, q) = α · E(p, q) + (1 − α) · J(p, q)
    E(p, q)   = 1 − ‖x_p − x_q‖₂ / √7,   x = (b / 255, h)         (each coordinate in [0, 1])
    J(p, q)   = |F_p ∩ F_q| / |F_p ∪ F_q|                          (1 when both are empty)

with α = :data:`DEFAULT_ALPHA`. A team ``A`` compares with a team ``B`` by matching each
of its Pokémon with its most similar one in ``B``, uniformly or weighted by importance
``w`` (the importance scores stored with the item; uniform where none)::

    T_u(A → B) = (1 / |A|) Σ_{p∈A} max_{q∈B} sim(p, q)
    T_w(A → B) = Σ_{p∈A} w_p · max_{q∈B} sim(p, q) / Σ_{p∈A} w_p

Both are made symmetric by averaging the two directions: ``T(A, B) = ½ (T(A → B) +
T(B → A))``. An item's score for the current battle is the mean of the similarity of our
teams and of the opponents' teams (weighted or uniform, :meth:`ExperienceMemory.retrieve`).

Retrieval returns the top :data:`TOP_K` items, and nothing until at least
:data:`MIN_ITEMS` are stored (too few items are more noise than help).

Storage
-------
One JSON file (``{"format": "pokegym-porimon-memory", "version": 1, "items": [...]}``),
rewritten atomically (temporary file + rename) after each added item, so a crash never
leaves half a file. A file that is not valid JSON, has another format or version, or holds
malformed items raises :class:`MemoryFileError` naming the file and the problem; the
file is left untouched.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FORMAT = "pokegym-porimon-memory"
VERSION = 1
DEFAULT_ALPHA = 0.5
TOP_K = 3
MIN_ITEMS = 10
STAT_SCALE = 255.0


class MemoryFileError(ValueError):
    """The memory file cannot be read (corrupt, other format or version)."""


@dataclass(frozen=True)
class PokemonRecord:
    """What the similarity looks at for one Pokémon."""

    species: str
    base_stats: tuple[int, int, int, int, int, int]
    hp_fraction: float = 1.0
    types: tuple[str, ...] = ()
    ability: str = ""
    status: str = ""

    def features(self) -> frozenset[str]:
        """Types, ability and status as one set (for the Jaccard term)."""
        items = {f"type:{t.lower()}" for t in self.types}
        if self.ability:
            items.add(f"ability:{self.ability}")
        if self.status:
            items.add(f"status:{self.status}")
        return frozenset(items)

    def vector(self) -> tuple[float, ...]:
        return (*(min(1.0, b / STAT_SCALE) for b in self.base_stats), float(self.hp_fraction))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PokemonRecord:
        stats = tuple(int(v) for v in data["base_stats"])
        if len(stats) != 6:
            raise ValueError(f"base_stats needs 6 values, got {len(stats)}")
        return cls(
            species=str(data["species"]),
            base_stats=stats,  # type: ignore[arg-type]
            hp_fraction=float(data.get("hp_fraction", 1.0)),
            types=tuple(str(t) for t in data.get("types", ())),
            ability=str(data.get("ability", "")),
            status=str(data.get("status", "")),
        )


@dataclass
class ExperienceItem:
    """One battle remembered."""

    summary: str
    lessons: list[str]
    our_team: list[PokemonRecord]
    their_team: list[PokemonRecord]
    importance: dict[str, float] = field(default_factory=dict)  # species -> score
    outcome: float = 0.5  # 1 win, 0 loss, ½ tie
    battle_format: str = ""
    battle_tag: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ExperienceItem:
        return cls(
            summary=str(data["summary"]),
            lessons=[str(x) for x in data.get("lessons", [])],
            our_team=[PokemonRecord.from_json(p) for p in data["our_team"]],
            their_team=[PokemonRecord.from_json(p) for p in data["their_team"]],
            importance={str(k): float(v) for k, v in data.get("importance", {}).items()},
            outcome=float(data.get("outcome", 0.5)),
            battle_format=str(data.get("battle_format", "")),
            battle_tag=str(data.get("battle_tag", "")),
        )


# ---------------------------------------------------------------- similarity
def pokemon_similarity(p: PokemonRecord, q: PokemonRecord, alpha: float = DEFAULT_ALPHA) -> float:
    """``α · E + (1 − α) · J`` (see the module docstring), in [0, 1]."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    xp, xq = p.vector(), q.vector()
    euclid = 1.0 - math.dist(xp, xq) / math.sqrt(len(xp))
    fp, fq = p.features(), q.features()
    union = fp | fq
    jaccard = len(fp & fq) / len(union) if union else 1.0
    return alpha * euclid + (1.0 - alpha) * jaccard


def directed_team_similarity(
    team: Sequence[PokemonRecord],
    other: Sequence[PokemonRecord],
    weights: Mapping[str, float] | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> float:
    """``T(A → B)``: each of ``team`` matched with its most similar Pokémon in ``other``,
    averaged uniformly or with ``weights`` by species (missing species weigh 0; all
    zero falls back to uniform)."""
    if not team or not other:
        return 0.0
    best = [max(pokemon_similarity(p, q, alpha) for q in other) for p in team]
    if weights:
        w = [max(0.0, float(weights.get(p.species, 0.0))) for p in team]
        if sum(w) > 0:
            return sum(wi * bi for wi, bi in zip(w, best, strict=True)) / sum(w)
    return sum(best) / len(best)


def team_similarity(
    a: Sequence[PokemonRecord],
    b: Sequence[PokemonRecord],
    weights_a: Mapping[str, float] | None = None,
    weights_b: Mapping[str, float] | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> float:
    """Symmetric team similarity: the mean of both directions."""
    return 0.5 * (
        directed_team_similarity(a, b, weights_a, alpha)
        + directed_team_similarity(b, a, weights_b, alpha)
    )


# -------------------------------------------------------------------- memory
class ExperienceMemory:
    """Items on disk at ``path`` (created on the first :meth:`add`)."""

    def __init__(self, path: str | Path, *, alpha: float = DEFAULT_ALPHA):
        self.path = Path(path)
        self.alpha = alpha
        self.items: list[ExperienceItem] = self._load() if self.path.exists() else []

    def __len__(self) -> int:
        return len(self.items)

    def _load(self) -> list[ExperienceItem]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MemoryFileError(
                f"{self.path}: not a readable memory file ({exc}). Move it aside to start a "
                "new memory; it was not changed."
            ) from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise MemoryFileError(f"{self.path}: not a {FORMAT} file; it was not changed.")
        if data.get("version") != VERSION:
            raise MemoryFileError(
                f"{self.path}: memory format version {data.get('version')!r}, this pokegym "
                f"reads version {VERSION}; it was not changed."
            )
        items = []
        for i, raw in enumerate(data.get("items", [])):
            try:
                items.append(ExperienceItem.from_json(raw))
            except (KeyError, TypeError, ValueError) as exc:
                raise MemoryFileError(
                    f"{self.path}: item {i} is malformed ({exc!r}); the file was not changed."
                ) from exc
        return items

    def add(self, item: ExperienceItem) -> None:
        """Store ``item`` and rewrite the file atomically."""
        self.items.append(item)
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"format": FORMAT, "version": VERSION,
                   "items": [item.to_json() for item in self.items]}  # fmt: skip
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".memory-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(payload, handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def score(
        self,
        item: ExperienceItem,
        our_team: Sequence[PokemonRecord],
        their_team: Sequence[PokemonRecord],
        *,
        weighted: bool = True,
    ) -> float:
        """How much ``item``'s battle looks like the current one (see the docstring)."""
        weights = item.importance if weighted else None
        ours = team_similarity(our_team, item.our_team, None, weights, self.alpha)
        theirs = team_similarity(their_team, item.their_team, None, weights, self.alpha)
        return 0.5 * (ours + theirs)

    def retrieve(
        self,
        our_team: Sequence[PokemonRecord],
        their_team: Sequence[PokemonRecord],
        *,
        k: int = TOP_K,
        weighted: bool = True,
        min_items: int = MIN_ITEMS,
    ) -> list[tuple[ExperienceItem, float]]:
        """The ``k`` most similar items with their scores, best first ([] while fewer than
        ``min_items`` are stored). Ties keep the older item first."""
        if len(self.items) < min_items:
            return []
        scored = [
            (item, self.score(item, our_team, their_team, weighted=weighted), -i)
            for i, item in enumerate(self.items)
        ]
        scored.sort(key=lambda t: (t[1], t[2]), reverse=True)
        return [(item, score) for item, score, _ in scored[:k]]


def records(pokemon: Iterable[Any], dex: Any) -> list[PokemonRecord]:
    """:class:`PokemonRecord` s of poke-env ``Pokemon`` objects (base stats from ``dex``)."""
    out = []
    for mon in pokemon:
        entry = dex.species_entry(mon.species)
        stats = entry.get("baseStats", {})
        status = mon.status.name.lower() if getattr(mon, "status", None) is not None else ""
        types = tuple(entry.get("types", ()))
        if getattr(mon, "is_terastallized", False) and getattr(mon, "tera_type", None):
            types = (mon.tera_type.name.capitalize(),)
        base = tuple(int(stats.get(k, 0)) for k in ("hp", "atk", "def", "spa", "spd", "spe"))
        out.append(
            PokemonRecord(
                species=entry.get("id", mon.species),
                base_stats=base,  # type: ignore[arg-type]
                hp_fraction=0.0 if mon.fainted else float(mon.current_hp_fraction),
                types=types,
                ability=(mon.ability or "").lower(),
                status=status,
            )
        )
    return out
