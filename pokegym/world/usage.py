"""Smogon usage statistics ("chaos" JSON) as candidate sets.

Smogon publishes, per month, format and rating cutoff, a file such as
``https://www.smogon.com/stats/2024-05/chaos/gen9ou-1695.json``::

    {"info": {"metagame": "gen9ou", "cutoff": 1695, ...},
     "data": {"Great Tusk": {"Raw count": 51234,
                             "Abilities": {"protosynthesis": 41000.5},
                             "Items": {"boosterenergy": 12000.1, "nothing": 3.0, ...},
                             "Spreads": {"Jolly:0/252/0/0/4/252": 9000.2, ...},
                             "Moves": {"rapidspin": 30000.7, "": 10.0, ...},
                             "Tera Types": {"ground": 8000.3, ...},
                             "Teammates": {...}, "Checks and Counters": {...}, ...}}}

Weights are usage-weighted counts, not probabilities: every entry of a species
sums (roughly) to the species' total weight, except ``Moves``, where each set
contributes each of its (up to) four moves, so the move weights sum to about four
times the total. Nothing is downloaded here: users pass a file they fetched.

How candidate sets are built from these marginals (:meth:`UsageStats.candidate_sets`):

* Ability, item, spread (nature + EVs) and Tera Type: each marginal is normalised
  over its entries; the entries below ``min_share`` of the total are dropped (the
  most likely entry is always kept), and at most ``top_abilities`` / ``top_items`` /
  ``top_spreads`` / ``top_tera`` entries are kept.
* Moves: the top ``top_moves`` moves by weight (the empty slot ``""`` is ignored)
  define the move sets. A move set is 4 moves drawn *without replacement*, each
  draw picking a remaining move with probability proportional to its usage weight
  (successive sampling); the probability of a 4-move set is the sum over its 24
  draw orders. Every 4-subset of the kept moves is enumerated; the ``top_movesets``
  most likely are kept. A species with fewer than 4 recorded moves gets one move set
  with all of them.
* Joint sets: **the components are assumed independent** given the species: the
  probability of (ability, item, spread, Tera Type, move set) is the product of the
  component probabilities. Smogon's marginals do not say how the components
  co-occur (a Choice Scarf user's spread is not Smogon's overall spread), so this
  is an approximation. The ``max_sets`` most probable joint candidates are kept
  and their probabilities renormalised.
* Level 100 (Smogon formats); IVs 31, except Attack IVs 0 when the move set has no
  physical attack (Foul Play and Body Press do not count) and Speed IVs 0 when the
  move set has Trick Room or Gyro Ball, the nature lowers Speed and no Speed EVs are
  invested (the usual builder conventions; Smogon does not report IVs).
"""

from __future__ import annotations

import gzip
import heapq
import itertools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pokegym.world.data import STATS, TYPES, Dex, to_id
from pokegym.world.sets import PokemonSet

__all__ = ["UsageMarginals", "UsageStats", "load_chaos", "parse_spread"]

_TERA_NAMES = {to_id(name): name for name in (*TYPES, "Stellar")}
# Moves that use the Attack stat of the target or the user's Defense instead of
# the user's Attack: a set with only these still wants 0 Attack IVs.
_NOT_ATTACK_MOVES = frozenset({"foulplay", "bodypress"})


def load_chaos(path: str | Path) -> dict[str, Any]:
    """Read a chaos JSON file (plain or ``.gz``) and check its shape.

    Raises:
        FileNotFoundError: no file at ``path``.
        ValueError: the file is not JSON, or not a Smogon chaos JSON (the message names
            the file and what is wrong).
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise FileNotFoundError(
            f"No usage statistics file at {path}. Pass the path of a Smogon chaos JSON "
            "(e.g. gen9ou-1695.json from https://www.smogon.com/stats/<month>/chaos/)."
        )
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            raw = json.load(handle)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(
            f"{path} is not a readable JSON file ({exc}); pass a Smogon chaos JSON such as "
            "gen9ou-1695.json (plain or .gz)."
        ) from exc
    _check_chaos(raw, str(path))
    return raw  # type: ignore[no-any-return]


# The fields of a species entry that candidate sets are built from.
_WEIGHT_FIELDS = ("Abilities", "Items", "Spreads", "Moves", "Tera Types")


def _check_chaos(raw: Any, source: str) -> None:
    """Raise ValueError naming ``source`` and the problem unless ``raw`` has the shape of
    a chaos JSON (``data``: species -> entries of name -> number weights)."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("data"), Mapping):
        raise ValueError(
            f"{source} is not a Smogon chaos JSON: it needs a top-level 'data' object "
            "mapping species to their usage entries."
        )
    data = raw["data"]
    if not data:
        raise ValueError(f"{source} is not usable: its 'data' object lists no species.")
    for name, entry in data.items():
        where = f"{source}: data[{name!r}]"
        if not isinstance(entry, Mapping):
            raise ValueError(f"{where} should be an object of usage entries, not {entry!r:.60}.")
        if "Raw count" in entry and not _is_number(entry["Raw count"]):
            raise ValueError(
                f"{where}['Raw count'] should be a number, not {entry['Raw count']!r}."
            )
        for key in _WEIGHT_FIELDS:
            weights = entry.get(key)
            if weights is None:
                continue
            if not isinstance(weights, Mapping):
                raise ValueError(
                    f"{where}[{key!r}] should map names to usage weights, not {weights!r:.60}."
                )
            for label, weight in weights.items():
                if not _is_number(weight):
                    raise ValueError(
                        f"{where}[{key!r}][{label!r}] should be a number, not {weight!r:.60}."
                    )
        if not any(entry.get(key) for key in _WEIGHT_FIELDS):
            raise ValueError(
                f"{where} has none of {', '.join(_WEIGHT_FIELDS)}: is this a chaos JSON "
                "(the 'chaos' folder of Smogon's statistics, not 'moveset' or the usage text)?"
            )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def parse_spread(text: str) -> tuple[str, tuple[int, ...]] | None:
    """``"Jolly:0/252/0/0/4/252"`` -> ``("jolly", (0, 252, 0, 0, 4, 252))``; None if malformed."""
    nature, sep, evs = text.partition(":")
    if not sep:
        return None
    parts = evs.split("/")
    if len(parts) != len(STATS):
        return None
    try:
        values = tuple(int(float(p)) for p in parts)
    except ValueError:
        return None
    if any(v < 0 or v > 255 for v in values):
        return None
    return to_id(nature), values


def _normalised(weights: Mapping[str, float]) -> dict[str, float]:
    clean = {k: float(v) for k, v in weights.items() if isinstance(v, int | float) and v > 0}
    total = sum(clean.values())
    if total <= 0:
        return {}
    return {k: v / total for k, v in sorted(clean.items(), key=lambda kv: -kv[1])}


def _truncate(probs: Mapping[Any, float], top: int, min_share: float) -> list[tuple[Any, float]]:
    ranked = sorted(probs.items(), key=lambda kv: -kv[1])
    kept = [kv for kv in ranked[:top] if kv[1] >= min_share]
    return kept or ranked[:1]


@dataclass(frozen=True)
class UsageMarginals:
    """One species' usage marginals, normalised.

    Attributes:
        species: Showdown id of the species.
        count: Smogon's "Raw count" (0 when absent).
        abilities / items / tera_types: probability of each value (item ``""`` = no item).
        spreads: probability of each ``(nature, EVs)`` pair.
        moves: probability that a set has the move (usage weight / species weight, ≤ 1).
        move_weights: the raw usage weights of the moves (for sampling move sets).
    """

    species: str
    count: int
    abilities: dict[str, float]
    items: dict[str, float]
    spreads: dict[tuple[str, tuple[int, ...]], float]
    tera_types: dict[str, float]
    moves: dict[str, float]
    move_weights: dict[str, float]


class UsageStats:
    """A parsed chaos file, keyed by Showdown species id.

    Args:
        raw: the decoded JSON (see :func:`load_chaos`).
        source: where it came from (for messages).
    """

    def __init__(self, raw: Mapping[str, Any], source: str = "usage statistics"):
        _check_chaos(raw, source)
        self.source = source
        info = raw.get("info")
        self.info: dict[str, Any] = dict(info) if isinstance(info, Mapping) else {}
        self._data: dict[str, Mapping[str, Any]] = {}
        for name, entry in raw["data"].items():
            self._data[to_id(name)] = entry
        self._marginals: dict[str, UsageMarginals] = {}
        self._candidates: dict[tuple[Any, ...], list[tuple[PokemonSet, float]]] = {}

    @classmethod
    def from_file(cls, path: str | Path) -> UsageStats:
        return cls(load_chaos(path), source=str(path))

    @property
    def metagame(self) -> str:
        return str(self.info.get("metagame") or "")

    @property
    def gen(self) -> int | None:
        """The generation named by ``info.metagame`` ("gen9ou" -> 9), if any."""
        meta = self.metagame
        if meta.startswith("gen") and meta[3:4].isdigit():
            return int(meta[3])
        return None

    def species(self) -> list[str]:
        return list(self._data)

    def __contains__(self, species: object) -> bool:
        return isinstance(species, str) and to_id(species) in self._data

    def marginals(self, species: str) -> UsageMarginals:
        """The normalised marginals of ``species`` (KeyError if absent)."""
        key = to_id(species)
        cached = self._marginals.get(key)
        if cached is not None:
            return cached
        entry = self._data[key]
        abilities = _normalised({to_id(k): v for k, v in (entry.get("Abilities") or {}).items()})
        items_raw: dict[str, float] = {}
        for name, weight in (entry.get("Items") or {}).items():
            item = to_id(name)
            item = "" if item in ("nothing", "noitem", "") else item
            items_raw[item] = items_raw.get(item, 0.0) + float(weight)
        spreads_raw: dict[tuple[str, tuple[int, ...]], float] = {}
        for text, weight in (entry.get("Spreads") or {}).items():
            spread = parse_spread(str(text))
            if spread is not None:
                spreads_raw[spread] = spreads_raw.get(spread, 0.0) + float(weight)
        tera_raw: dict[str, float] = {}
        for name, weight in (entry.get("Tera Types") or {}).items():
            tera = _TERA_NAMES.get(to_id(name))
            if tera is not None:
                tera_raw[tera] = tera_raw.get(tera, 0.0) + float(weight)
        move_weights = {
            to_id(k): float(v)
            for k, v in (entry.get("Moves") or {}).items()
            if to_id(k) and isinstance(v, int | float) and v > 0
        }
        total = sum(float(v) for v in (entry.get("Abilities") or {}).values()) or sum(
            items_raw.values()
        )
        if total <= 0:
            total = sum(move_weights.values()) / 4 or 1.0
        moves = {
            k: min(1.0, v / total) for k, v in sorted(move_weights.items(), key=lambda kv: -kv[1])
        }
        out = UsageMarginals(
            species=key,
            count=int(entry.get("Raw count") or 0),
            abilities=abilities,
            items=_normalised(items_raw),
            spreads=_normalised(spreads_raw),  # type: ignore[arg-type]
            tera_types=_normalised(tera_raw),
            moves=moves,
            move_weights=move_weights,
        )
        self._marginals[key] = out
        return out

    def candidate_sets(
        self,
        species: str,
        dex: Dex,
        *,
        max_sets: int = 64,
        top_abilities: int = 3,
        top_items: int = 6,
        top_spreads: int = 6,
        top_tera: int = 4,
        top_moves: int = 12,
        top_movesets: int = 16,
        min_share: float = 0.02,
        level: int = 100,
    ) -> list[tuple[PokemonSet, float]]:
        """The most probable joint sets of ``species`` with normalised probabilities.

        See the module docstring for the construction and its independence assumption.
        """
        key = (to_id(species), dex.gen, max_sets, top_abilities, top_items, top_spreads)
        key += (top_tera, top_moves, top_movesets, min_share, level)
        cached = self._candidates.get(key)
        if cached is not None:
            return cached
        m = self.marginals(species)
        abilities = _truncate(m.abilities, top_abilities, min_share) if m.abilities else [("", 1.0)]
        items = _truncate(m.items, top_items, min_share) if m.items else [("", 1.0)]
        spreads = (
            _truncate(m.spreads, top_spreads, min_share)
            if m.spreads
            else [(("", (0, 0, 0, 0, 0, 0)), 1.0)]
        )
        if dex.gen >= 9 and m.tera_types:
            teras = _truncate(m.tera_types, top_tera, min_share)
        elif dex.gen >= 9:
            types = dex.species.get(to_id(species), {}).get("types") or [""]
            teras = [(types[0], 1.0)]
        else:
            teras = [("", 1.0)]
        movesets = _movesets(m.move_weights, top_moves)[:top_movesets] or [((), 1.0)]
        scored = []
        for (ability, pa), (item, pi), ((nature, evs), ps), (tera, pt), (
            moves,
            pm,
        ) in itertools.product(abilities, items, spreads, teras, movesets):
            scored.append((pa * pi * ps * pt * pm, ability, item, nature, evs, tera, moves))
        best = heapq.nlargest(max_sets, scored, key=lambda row: row[0])
        total = sum(row[0] for row in best) or 1.0
        out = []
        for prob, ability, item, nature, evs, tera, moves in best:
            out.append(
                (
                    PokemonSet(
                        species=to_id(species),
                        level=level,
                        item=item,
                        ability=ability,
                        moves=tuple(sorted(moves)),
                        nature=nature,
                        evs=evs,
                        ivs=_conventional_ivs(moves, nature, evs, dex),
                        tera_type=tera,
                    ),
                    prob / total,
                )
            )
        self._candidates[key] = out
        return out


def _conventional_ivs(
    moves: tuple[str, ...], nature: str, evs: tuple[int, ...], dex: Dex
) -> tuple[int, ...]:
    ivs = [31] * 6
    physical = False
    for move in moves:
        entry = dex.moves.get(move)
        if entry is None:
            physical = True  # unknown move: assume it may be physical
        elif entry.get("category") == "Physical" and move not in _NOT_ATTACK_MOVES:
            physical = True
    if moves and not physical:
        ivs[1] = 0
    minus = (dex.natures.get(nature) or {}).get("minus")
    if minus == "spe" and evs[5] == 0 and ({"trickroom", "gyroball"} & set(moves)):
        ivs[5] = 0
    return tuple(ivs)


def _movesets(weights: Mapping[str, float], top: int) -> list[tuple[tuple[str, ...], float]]:
    """4-move sets by successive sampling without replacement, most likely first."""
    ranked = sorted(weights.items(), key=lambda kv: -kv[1])[:top]
    if not ranked:
        return []
    if len(ranked) <= 4:
        return [(tuple(sorted(name for name, _ in ranked)), 1.0)]
    names = tuple(name for name, _ in ranked)
    w = tuple(weight for _, weight in ranked)
    total = sum(w)
    out = [
        (tuple(sorted(names[i] for i in combo)), _subset_probability(combo, w, total))
        for combo in itertools.combinations(range(len(names)), 4)
    ]
    norm = sum(p for _, p in out)
    out = [(moves, p / norm) for moves, p in out] if norm > 0 else out
    out.sort(key=lambda row: -row[1])
    return out


def _subset_probability(combo: tuple[int, ...], w: tuple[float, ...], total: float) -> float:
    prob = 0.0
    for order in itertools.permutations(combo):
        remaining = total
        p = 1.0
        for i in order:
            if remaining <= 0:
                p = 0.0
                break
            p *= w[i] / remaining
            remaining -= w[i]
        prob += p
    return prob
