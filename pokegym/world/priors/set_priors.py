"""The set priors: what a :class:`SetPrior` answers (the distribution of a species'
sets), and the kinds there are: a table of observed sets (:class:`TablePrior`, built
from Showdown's random-team generator or a team pool), Smogon usage statistics
(:class:`UsagePrior`), Showdown's own sets data (:class:`SetsJsonPrior`), a mixture, and
a generic prior from the species' data (:class:`GenericPrior`). Where each format's
prior comes from, and its build step, is :mod:`pokegym.world.priors.sources`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pokegym.showdown.install import showdown_package_dir
from pokegym.world.data import Dex, load_dex, to_id
from pokegym.world.priors.distribution import _TEMPLATE, SetDistribution
from pokegym.world.sets import PokemonSet
from pokegym.world.usage import UsageStats


# --------------------------------------------------------------------------- priors
class SetPrior:
    """Per species, a weighted list of candidate sets; unknown species go to ``fallback``.

    Subclasses provide :meth:`known_species` and :meth:`_sets`. A species the battle
    shows is resolved to the prior's keys through aliases (e.g. a cosmetic forme to
    its base), then Showdown's data (a battle-only forme such as ``palafinhero`` to
    ``palafin``, ``ogerponwellspringtera`` to ``ogerponwellspring``; a base species
    such as Team Preview's ``urshifu`` to all its formes). The sets returned carry
    the species as the battle shows it (so their stats are that forme's).
    """

    def __init__(self, name: str, gen: int, *, fallback: SetPrior | None = None):
        self.name = name
        self.gen = gen
        self.fallback = fallback
        self._cache: dict[str, SetDistribution] = {}
        self._known: frozenset[str] | None = None

    # subclass hooks
    def known_species(self) -> Iterable[str]:
        return ()

    def aliases(self) -> Mapping[str, Sequence[str]]:
        return {}

    def _sets(self, key: str) -> list[tuple[PokemonSet, float]]:
        raise KeyError(key)

    # resolution
    @property
    def dex(self) -> Dex:
        return load_dex(self.gen)

    def _keys(self, species: str) -> list[str]:
        if self._known is None:
            self._known = frozenset(self.known_species())
        known = self._known
        aliases = self.aliases()
        if species in aliases:
            return list(aliases[species])
        if species in known:
            return [species]
        entry = self.dex.species.get(species)
        if entry is None:
            return []
        candidates: list[str] = []
        battle_only = entry.get("battleOnly")
        if isinstance(battle_only, list):
            candidates += [to_id(x) for x in battle_only]
        elif battle_only:
            candidates.append(to_id(battle_only))
        for name in (entry.get("changesFrom"), entry.get("baseSpecies")):
            if name:
                candidates.append(to_id(name))
        for candidate in candidates:
            if candidate != species and candidate in known:
                return [candidate]
            if candidate in aliases:
                return list(aliases[candidate])
        if to_id(entry.get("baseSpecies", "")) == species:
            formes = [
                key
                for key in sorted(known)
                if to_id(self.dex.species.get(key, {}).get("baseSpecies", "")) == species
            ]
            if formes:
                return formes
        return []

    def covers(self, species: str) -> bool:
        """True when this prior (not its fallback) has sets for ``species``."""
        return bool(self._keys(to_id(species)))

    def __contains__(self, species: object) -> bool:
        return isinstance(species, str) and self.covers(species)

    def distribution(self, species: str) -> SetDistribution:
        """The prior distribution of ``species`` (a Showdown name or id)."""
        sid = to_id(species)
        cached = self._cache.get(sid)
        if cached is not None:
            return cached
        keys = self._keys(sid)
        if not keys:
            if self.fallback is None:
                raise KeyError(f"The {self.name} prior has no sets for {species!r}.")
            dist = self.fallback.distribution(sid)
        else:
            in_dex = sid in self.dex.species
            pairs = []
            for key in keys:
                for pset, weight in self._sets(key):
                    if in_dex and pset.species != sid:
                        pset = replace(pset, species=sid)
                    pairs.append((pset, weight))
            dist = SetDistribution.from_weighted(sid, pairs, gen=self.gen, source=self.name)
        self._cache[sid] = dist
        return dist

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, gen {self.gen})"


class TablePrior(SetPrior):
    """A prior from a fixed table ``species -> [(set, weight), ...]``.

    Attributes:
        meta: facts about how the table was built (format, teams, seconds, ...).
    """

    def __init__(
        self,
        name: str,
        gen: int,
        table: Mapping[str, Sequence[tuple[PokemonSet, float]]],
        *,
        aliases: Mapping[str, Sequence[str]] | None = None,
        fallback: SetPrior | None = None,
        meta: Mapping[str, Any] | None = None,
    ):
        super().__init__(name, gen, fallback=fallback)
        self.table = {key: list(rows) for key, rows in table.items()}
        self._aliases = {k: list(v) for k, v in (aliases or {}).items()}
        self.meta = dict(meta or {})

    def known_species(self) -> Iterable[str]:
        return self.table.keys()

    def aliases(self) -> Mapping[str, Sequence[str]]:
        return self._aliases

    def _sets(self, key: str) -> list[tuple[PokemonSet, float]]:
        return self.table[key]

    def counts(self, species: str) -> list[tuple[PokemonSet, float]]:
        """The raw rows (set, count) stored for a key of the table."""
        return list(self.table[to_id(species)])

    @classmethod
    def from_counts(cls, raw: Mapping[str, Any], fallback: SetPrior | None = None) -> TablePrior:
        """A prior from a table of generated set counts, as :func:`random_battle_prior`
        caches it (``{"format", "gen", "species": {id: [[count, set, roles], ...]},
        "formes": {...}}``); a subset of the species makes a smaller prior."""
        return _table_prior(raw, int(raw["gen"]), fallback)


class UsagePrior(SetPrior):
    """Candidate sets built from Smogon usage statistics (see :mod:`pokegym.world.usage`)."""

    def __init__(
        self,
        stats: UsageStats,
        gen: int,
        *,
        fallback: SetPrior | None = None,
        **candidate_options: Any,
    ):
        super().__init__("usage", gen, fallback=fallback)
        self.stats = stats
        self.options = candidate_options

    def known_species(self) -> Iterable[str]:
        return self.stats.species()

    def _sets(self, key: str) -> list[tuple[PokemonSet, float]]:
        return self.stats.candidate_sets(key, self.dex, **self.options)


class MixturePrior(SetPrior):
    """A weighted mixture of priors; only the components that know a species count.

    Args:
        components: ``(prior, weight)`` pairs. For a species, the components that
            cover it share the probability in proportion to their weights.
    """

    def __init__(
        self,
        components: Sequence[tuple[SetPrior, float]],
        *,
        name: str | None = None,
        fallback: SetPrior | None = None,
    ):
        if not components:
            raise ValueError("A mixture needs at least one component.")
        gen = components[0][0].gen
        super().__init__(name or "+".join(p.name for p, _ in components), gen, fallback=fallback)
        self.components = [(p, float(w)) for p, w in components]

    def known_species(self) -> Iterable[str]:
        out: set[str] = set()
        for prior, _ in self.components:
            out.update(prior.known_species())
        return out

    def covers(self, species: str) -> bool:
        return any(prior.covers(species) for prior, _ in self.components)

    def distribution(self, species: str) -> SetDistribution:
        sid = to_id(species)
        cached = self._cache.get(sid)
        if cached is not None:
            return cached
        parts = [(p.distribution(sid), w) for p, w in self.components if w > 0 and p.covers(sid)]
        if not parts:
            if self.fallback is None:
                raise KeyError(f"The {self.name} prior has no sets for {species!r}.")
            dist = self.fallback.distribution(sid)
        else:
            total = sum(w for _, w in parts)
            pairs = [
                (s, w * float(p) / total)
                for dist_, w in parts
                for s, p in dist_  # type: ignore[misc]
            ]
            names = "+".join(d.source for d, _ in parts)
            dist = SetDistribution.from_weighted(sid, pairs, gen=self.gen, source=names)
        self._cache[sid] = dist
        return dist


class GenericPrior(SetPrior):
    """Sets for any species from Showdown's data alone (see the module docstring).

    Args:
        gen: the generation.
        style: ``"random"`` (Showdown's random-battle spread) or ``"competitive"``
            (an offensive and a defensive spread, level 100).
        levels: per-species levels (random battles); default 100, or 80 for random.
    """

    def __init__(
        self, gen: int, *, style: str = "competitive", levels: Mapping[str, int] | None = None
    ):
        if style not in ("random", "competitive"):
            raise ValueError("style is 'random' or 'competitive'")
        super().__init__("generic", gen)
        self.style = style
        self.levels = dict(levels or {})

    def _keys(self, species: str) -> list[str]:
        return [species]

    def covers(self, species: str) -> bool:
        return True

    def _sets(self, key: str) -> list[tuple[PokemonSet, float]]:
        entry = self.dex.species.get(key)
        if entry is None:
            unknown = frozenset({"item", "moves", "tera_type", "level", "ability"})
            return [(PokemonSet(species=key, extra={_TEMPLATE: unknown}), 1.0)]
        abilities = list(dict.fromkeys(to_id(a) for a in (entry.get("abilities") or {}).values()))
        abilities = [a for a in abilities if a] or [""]
        teras = list(entry.get("types") or [""]) if self.gen >= 9 else [""]
        unknown = {"item", "moves"}
        if self.gen >= 9:
            unknown.add("tera_type")
        if self.style == "random":
            level = self.levels.get(key, 80)
            unknown.add("level")
            spreads = [("", (85,) * 6, (31,) * 6, 1.0)]
        else:
            level = self.levels.get(key, 100)
            spreads = _competitive_spreads(entry)
        out = []
        n = len(abilities) * len(teras)
        for ability, tera, (nature, evs, ivs, w) in itertools.product(abilities, teras, spreads):
            pset = PokemonSet(
                species=key,
                level=level,
                ability=ability,
                nature=nature,
                evs=evs,
                ivs=ivs,
                tera_type=tera,
                extra={_TEMPLATE: frozenset(unknown)},
            )
            out.append((pset, w / n))
        return out


def _competitive_spreads(
    entry: Mapping[str, Any],
) -> list[tuple[str, tuple[int, ...], tuple[int, ...], float]]:
    base = entry.get("baseStats") or {}
    physical = base.get("atk", 0) >= base.get("spa", 0)
    if physical:
        offensive = ("jolly", (4, 252, 0, 0, 0, 252), (31,) * 6)
    else:
        offensive = ("timid", (4, 0, 0, 252, 0, 252), (31, 0, 31, 31, 31, 31))
    if base.get("def", 0) >= base.get("spd", 0):
        nature = "impish" if physical else "bold"
        evs = (252, 0, 252, 0, 4, 0)
    else:
        nature = "careful" if physical else "calm"
        evs = (252, 0, 4, 0, 252, 0)
    ivs = (31,) * 6 if physical else (31, 0, 31, 31, 31, 31)
    return [(*offensive, 0.5), (nature, evs, ivs, 0.5)]


class SetsJsonPrior(SetPrior):
    """Random-battle sets from Showdown's ``sets.json`` (roles, move pools, abilities,
    Tera Types, levels), without the generator's rules: every 4-move subset of a
    role's move pool, uniform within a role, roles uniform; items unknown.
    Used for species the generated teams missed."""

    def __init__(self, gen: int, data: Mapping[str, Any], *, fallback: SetPrior | None = None):
        super().__init__(f"gen{gen} sets.json", gen, fallback=fallback)
        self.data = dict(data)

    @classmethod
    def load(cls, gen: int, *, fallback: SetPrior | None = None) -> SetsJsonPrior | None:
        """From the installed Showdown package; None when it ships no such file."""
        path = _sets_json_path(gen)
        if path is None:
            return None
        return cls(gen, json.loads(path.read_text()), fallback=fallback)

    def known_species(self) -> Iterable[str]:
        return self.data.keys()

    def levels(self) -> dict[str, int]:
        return {k: int(v.get("level") or 80) for k, v in self.data.items()}

    def _sets(self, key: str) -> list[tuple[PokemonSet, float]]:
        entry = self.data[key]
        level = int(entry.get("level") or 80)
        roles = entry.get("sets") or []
        out = []
        for role in roles:
            pool = sorted(dict.fromkeys(to_id(m) for m in role.get("movepool", [])))
            combos = list(itertools.combinations(pool, 4)) if len(pool) > 4 else [tuple(pool)]
            abilities = [to_id(a) for a in role.get("abilities", [])] or [""]
            teras = list(role.get("teraTypes") or [""]) if self.gen >= 9 else [""]
            n = len(combos) * len(abilities) * len(teras) * len(roles)
            for moves, ability, tera in itertools.product(combos, abilities, teras):
                pset = PokemonSet(
                    species=key,
                    level=level,
                    ability=ability,
                    moves=tuple(sorted(moves)),
                    evs=(85,) * 6,
                    tera_type=tera,
                    extra={_TEMPLATE: frozenset({"item"}), "roles": {role.get("role", ""): 1}},
                )
                out.append((pset, 1.0 / n))
        return out


def _sets_json_path(gen: int) -> Path | None:
    path = showdown_package_dir() / "dist" / "data" / "random-battles" / f"gen{gen}" / "sets.json"
    return path if path.is_file() else None


def set_from_json(species: str, data: Mapping[str, Any]) -> PokemonSet:
    """A set as the prior caches store it (see ``sources._set_to_json``)."""
    return PokemonSet(
        species=species,
        level=int(data["level"]),
        item=data["item"],
        ability=data["ability"],
        moves=tuple(data["moves"]),
        nature=data["nature"],
        evs=tuple(data["evs"]),
        ivs=tuple(data["ivs"]),
        tera_type=data["tera"],
    )


def _table_prior(raw: Mapping[str, Any], gen: int, fallback: SetPrior | None) -> TablePrior:
    table: dict[str, list[tuple[PokemonSet, float]]] = {}
    for key, rows in raw["species"].items():
        out = []
        for count, data, roles in rows:
            pset = replace(set_from_json(key, data), extra={"roles": dict(roles)})
            out.append((pset, float(count)))
        table[key] = out
    meta = {k: v for k, v in raw.items() if k not in ("species", "formes")}
    return TablePrior(
        str(raw["format"]), gen, table, aliases=raw.get("formes", {}), fallback=fallback, meta=meta
    )
