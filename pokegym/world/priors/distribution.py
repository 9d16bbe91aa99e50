"""Distributions over an opponent Pokémon's full sets, and their updates on what was
revealed (:class:`SetDistribution`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from pokegym.world.data import STATS, TYPES, Dex, load_dex, to_id
from pokegym.world.priors.turn_order import TurnOrder, _order_distance, _our_side
from pokegym.world.sets import PokemonSet

if TYPE_CHECKING:
    pass


_TERA_NAMES = {to_id(name): name for name in (*TYPES, "Stellar")}
# Set fields a generic (template) set does not know.
_TEMPLATE = "unknown"


def _tera_name(value: Any) -> str:
    """A Tera Type as Showdown names it ("Ground"), from a name, id or poke-env enum."""
    name = getattr(value, "name", value)
    return _TERA_NAMES.get(to_id(str(name)), str(name).title())


def _unknown_fields(pset: PokemonSet) -> frozenset[str]:
    return pset.extra.get(_TEMPLATE, frozenset())  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- distributions
@dataclass(frozen=True, eq=False)
class SetDistribution:
    """A probability distribution over the full sets of one opponent Pokémon.

    Attributes:
        species: the species it describes (Showdown id, as the battle shows it).
        sets: the candidate sets (distinct), most probable first when built by a prior.
        weights: their probabilities (normalised on construction, read-only).
        gen: the generation (for stats).
        source: which prior produced it (e.g. "gen9randombattle", "pool+usage", "generic").
        off_support: True when some evidence contradicted every candidate and the
            closest ones were kept (see ``notes``).
        notes: what happened, for humans (each fallback adds one).
    """

    species: str
    sets: tuple[PokemonSet, ...]
    weights: np.ndarray
    gen: int = 9
    source: str = ""
    off_support: bool = False
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.sets:
            raise ValueError(f"A set distribution for {self.species!r} needs at least one set.")
        w = np.array(self.weights, dtype=np.float64).reshape(-1)
        if len(w) != len(self.sets):
            raise ValueError(f"{len(self.sets)} sets but {len(w)} weights")
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError("weights must be finite and non-negative")
        total = w.sum()
        w = w / total if total > 0 else np.full(len(w), 1.0 / len(w))
        w.setflags(write=False)
        object.__setattr__(self, "weights", w)

    @classmethod
    def from_weighted(
        cls,
        species: str,
        pairs: Iterable[tuple[PokemonSet, float]],
        *,
        gen: int = 9,
        source: str = "",
        off_support: bool = False,
        notes: tuple[str, ...] = (),
    ) -> SetDistribution:
        """From (set, weight) pairs: identical sets are merged, most probable first."""
        merged: dict[PokemonSet, float] = {}
        first: dict[PokemonSet, PokemonSet] = {}
        for pset, weight in pairs:
            if pset in merged:
                merged[pset] += float(weight)
            else:
                merged[pset] = float(weight)
                first[pset] = pset
        order = sorted(merged, key=lambda s: -merged[s])
        return cls(
            species=species,
            sets=tuple(first[s] for s in order),
            weights=np.array([merged[s] for s in order], dtype=np.float64),
            gen=gen,
            source=source,
            off_support=off_support,
            notes=notes,
        )

    # ----------------------------------------------------------------- basics
    def __len__(self) -> int:
        return len(self.sets)

    def __iter__(self) -> Iterable[tuple[PokemonSet, float]]:  # type: ignore[override]
        return iter(zip(self.sets, self.weights.tolist(), strict=True))

    def __repr__(self) -> str:
        flag = ", off_support" if self.off_support else ""
        return (
            f"SetDistribution({self.species}, {len(self.sets)} sets, "
            f"modal p={float(self.weights.max()):.2f}, source={self.source!r}{flag})"
        )

    def modal(self) -> PokemonSet:
        """The most probable set (the point estimate PokéChamp used)."""
        return self.sets[int(np.argmax(self.weights))]

    def top(self, k: int = 5) -> list[tuple[PokemonSet, float]]:
        """The ``k`` most probable sets with their probabilities."""
        order = np.argsort(-self.weights, kind="stable")[:k]
        return [(self.sets[i], float(self.weights[i])) for i in order]

    def sample(self, rng: np.random.Generator, n: int = 1) -> list[PokemonSet]:
        """``n`` determinizations drawn with the caller's generator (reproducible)."""
        if n < 0:
            raise ValueError(f"n must be non-negative, got {n}")
        index = rng.choice(len(self.sets), size=n, p=self.weights)
        return [self.sets[int(i)] for i in index]

    def probability(self, predicate: Callable[[PokemonSet], bool]) -> float:
        """Total probability of the sets for which ``predicate`` holds."""
        return float(sum(w for s, w in zip(self.sets, self.weights, strict=True) if predicate(s)))

    def _marginal(self, values: Callable[[PokemonSet], Iterable[Any]]) -> dict[Any, float]:
        out: dict[Any, float] = {}
        for pset, weight in zip(self.sets, self.weights.tolist(), strict=True):
            for value in set(values(pset)):
                out[value] = out.get(value, 0.0) + weight
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def move_probabilities(self) -> dict[str, float]:
        """P(the set has the move), per move (these sum to about 4, not 1)."""
        return self._marginal(lambda s: s.moves)

    def item_probabilities(self) -> dict[str, float]:
        """P(item); ``""`` is no item (or, for generic sets, no item knowledge)."""
        return self._marginal(lambda s: (s.item,))

    def ability_probabilities(self) -> dict[str, float]:
        return self._marginal(lambda s: (s.ability,))

    def tera_type_probabilities(self) -> dict[str, float]:
        return self._marginal(lambda s: (s.tera_type,))

    def level_probabilities(self) -> dict[int, float]:
        return self._marginal(lambda s: (s.level,))

    def spread_probabilities(self) -> dict[str, float]:
        """P(nature and EVs), keyed like Smogon's spreads: ``"jolly:0/252/0/0/4/252"``."""
        return self._marginal(lambda s: (f"{s.nature}:{'/'.join(map(str, s.evs))}",))

    def stats(self, dex: Dex | None = None) -> np.ndarray:
        """Each set's six stats, shape ``(len(sets), 6)`` in ``STATS`` order."""
        dex = dex or load_dex(self.gen)
        rows = [[pset.stats(dex)[stat] for stat in STATS] for pset in self.sets]
        return np.array(rows, dtype=np.int64)

    def stats_range(self, dex: Dex | None = None) -> dict[str, tuple[int, int]]:
        """Smallest and largest value of each stat over the sets with positive weight."""
        table = self.stats(dex)[self.weights > 0]
        return {
            stat: (int(table[:, i].min()), int(table[:, i].max())) for i, stat in enumerate(STATS)
        }

    def mean_stats(self, dex: Dex | None = None) -> dict[str, float]:
        """Expected value of each stat."""
        table = self.stats(dex).astype(np.float64)
        mean = self.weights @ table
        return {stat: float(mean[i]) for i, stat in enumerate(STATS)}

    # ------------------------------------------------------------ conditioning
    def _derive(
        self,
        pairs: Sequence[tuple[PokemonSet, float]],
        *,
        off_support: bool = False,
        note: str = "",
    ) -> SetDistribution:
        notes = self.notes + ((note,) if note else ())
        return SetDistribution.from_weighted(
            self.species,
            pairs,
            gen=self.gen,
            source=self.source,
            off_support=self.off_support or off_support,
            notes=notes,
        )

    def condition(self, distances: Sequence[float] | np.ndarray, note: str = "") -> SetDistribution:
        """Keep the sets whose distance to the evidence is 0 (consistent).

        When none is, keep the closest ones (the smallest distance), flag the result
        ``off_support`` and record ``note``: the "floor" that keeps a contradiction
        from wiping out the distribution.
        """
        d = np.asarray(distances, dtype=np.float64)
        if d.shape != (len(self.sets),):
            raise ValueError(f"need one distance per set ({len(self.sets)}), got {d.shape}")
        keep = d <= 0
        off = not keep.any()
        if off:
            keep = d <= d.min() + 1e-9
        if keep.all() and not off:
            return self
        pairs = [
            (s, w) for s, w, k in zip(self.sets, self.weights, keep, strict=True) if k and w > 0
        ]
        if not pairs:  # the kept sets all had zero weight
            pairs = [(s, 1.0) for s, k in zip(self.sets, keep, strict=True) if k]
        return self._derive(pairs, off_support=off, note=note if off else "")

    def reveal(
        self,
        *,
        moves: Iterable[str] = (),
        item: str | None = None,
        ability: str | None = None,
        tera_type: str | None = None,
        level: int | None = None,
    ) -> SetDistribution:
        """Condition on revealed facts (``None`` = not revealed; ``item=""``: held no item).

        Sets that contradict a fact are dropped; when every set contradicts something,
        the sets with the fewest contradictions are kept and patched to agree (see the
        module docstring). Generic (template) sets are filled in, never dropped, for
        the fields they do not know.
        """
        revealed = tuple(dict.fromkeys(to_id(m) for m in moves if m))[:4]
        item = None if item is None else to_id(item)
        ability = None if ability is None or not to_id(ability) else to_id(ability)
        tera = None if not tera_type else _tera_name(tera_type)
        level = None if not level else int(level)
        if not revealed and item is None and ability is None and tera is None and level is None:
            return self
        misses = np.zeros(len(self.sets))
        templates = False
        for i, pset in enumerate(self.sets):
            unknown = _unknown_fields(pset)
            templates = templates or bool(unknown)
            n = 0
            if "moves" not in unknown:
                n += sum(move not in pset.moves for move in revealed)
            if item is not None and "item" not in unknown and pset.item != item:
                n += 1
            if ability is not None and "ability" not in unknown and pset.ability != ability:
                n += 1
            if tera is not None and "tera_type" not in unknown and pset.tera_type != tera:
                n += 1
            if level is not None and "level" not in unknown and pset.level != level:
                n += 1
            misses[i] = n
        best = misses.min()
        if best == 0 and not templates:
            return self.condition(misses)
        move_p = self.move_probabilities()
        pairs = []
        for pset, weight, n in zip(self.sets, self.weights, misses, strict=True):
            if n == best:
                pairs.append(
                    (_patched(pset, revealed, item, ability, tera, level, move_p), float(weight))
                )
        what = []
        if best > 0:
            facts = [*revealed]
            facts += [f"item {item!r}"] if item is not None else []
            facts += [f"ability {ability}"] if ability else []
            facts += [f"tera {tera}"] if tera else []
            facts += [f"level {level}"] if level else []
            what.append(
                f"no {self.source or 'prior'} set of {self.species} matches "
                f"({', '.join(facts)}); kept the {len(pairs)} closest, patched"
            )
        return self._derive(pairs, off_support=best > 0, note=what[0] if what else "")

    def without_items(self, items: Iterable[str]) -> SetDistribution:
        """Rule out holding any of ``items`` (e.g. an Air Balloon never announced on entry).

        When every set holds one of them, the sets are kept holding nothing instead.
        """
        banned = {to_id(item) for item in items}
        if not banned:
            return self
        misses = [1.0 if pset.item in banned else 0.0 for pset in self.sets]
        if min(misses) > 0:
            return self.with_item("")
        return self.condition(misses)

    def with_item(self, item: str) -> SetDistribution:
        """The same sets holding ``item`` now (``""``: none), e.g. after Knock Off."""
        item = to_id(item)
        if all(s.item == item for s in self.sets):
            return self
        return self._derive(
            [
                (replace(s, item=item), float(w))
                for s, w in zip(self.sets, self.weights, strict=True)
            ]
        )

    def given_turn_order(self, order: TurnOrder, dex: Dex | None = None) -> SetDistribution:
        """Keep the sets that explain who moved first in ``order`` (see :class:`TurnOrder`)."""
        dex = dex or load_dex(self.gen)
        ours = _our_side(order, dex)
        distances = [_order_distance(pset, order, dex, ours) for pset in self.sets]
        return self.condition(
            distances,
            note=f"turn {order.turn}: no set explains the observed order; kept the closest",
        )

    def given_damage(
        self,
        damage_range: Callable[[PokemonSet], tuple[float, float]],
        observed_fraction: float,
        tolerance: float = 0.01,
        *,
        lower_bound: bool = False,
    ) -> SetDistribution:
        """Keep the sets whose predicted damage range contains the observation.

        Args:
            damage_range: ``candidate_set -> (min_fraction, max_fraction)`` of the
                defender's maximum HP (from the damage calculator, e.g.
                :func:`our_hit_range` / :func:`their_hit_range`), for the hit observed.
            observed_fraction: fraction of maximum HP the hit took.
            tolerance: slack on either side (one HP-percent step by default: the
                opponent's HP is shown in percent).
            lower_bound: the hit knocked the Pokémon out, so it could have done more:
                only sets that cannot do ``observed_fraction`` are dropped.
        """
        if not np.isfinite(observed_fraction) or observed_fraction < 0:
            raise ValueError(f"observed_fraction must be >= 0, got {observed_fraction}")
        distances = []
        for pset in self.sets:
            low, high = damage_range(pset)
            excess = observed_fraction - high - tolerance
            if not lower_bound:
                excess = max(excess, low - tolerance - observed_fraction)
            distances.append(max(0.0, excess))
        return self.condition(
            distances,
            note=f"no set explains losing {observed_fraction:.3f} of HP; kept the closest",
        )


def _patched(
    pset: PokemonSet,
    moves: tuple[str, ...],
    item: str | None,
    ability: str | None,
    tera: str | None,
    level: int | None,
    move_p: Mapping[str, float],
) -> PokemonSet:
    unknown = set(_unknown_fields(pset))
    changes: dict[str, Any] = {}
    missing = [m for m in moves if m not in pset.moves]
    if missing:
        if "moves" in unknown:
            new = list(dict.fromkeys([*moves, *pset.moves]))[:4]
        else:
            keep = list(pset.moves)
            room = 4 - len(keep)
            drop = len(missing) - room
            if drop > 0:
                droppable = sorted(
                    (m for m in keep if m not in moves), key=lambda m: move_p.get(m, 0.0)
                )
                for m in droppable[:drop]:
                    keep.remove(m)
            new = [*keep, *missing][:4]
        changes["moves"] = tuple(sorted(new))
    if "moves" in unknown and len(changes.get("moves", pset.moves)) >= 4:
        unknown.discard("moves")
    for name, value in (
        ("item", item),
        ("ability", ability),
        ("tera_type", tera),
        ("level", level),
    ):
        if value is not None and getattr(pset, name) != value:
            changes[name] = value
        if value is not None:
            unknown.discard(name)
    if not changes and unknown == set(_unknown_fields(pset)):
        return pset
    extra = dict(pset.extra)
    if unknown:
        extra[_TEMPLATE] = frozenset(unknown)
    else:
        extra.pop(_TEMPLATE, None)
    return replace(pset, extra=extra, **changes)
