"""The deterministic validity and balance evaluator for designed moves.

:func:`evaluate` judges a :class:`~pokegym.moves.schema.MoveDesign` (or its raw JSON)
in two steps. Nothing in it is random or learned: the same design always gets the same
answer, and every number below comes from Showdown's own data (how each was derived is
said next to it, and ``tests/test_moves_balance.py`` re-derives them).

Validity (violations)
---------------------
A design with any violation is invalid (never balanced). The ranges are those real
damaging moves use; a design that breaks one of them, or has no design shape at all,
scores 0, while one whose only problem is its name or description keeps its score (so
that "a fine move under a taken name" reads as such):

* the raw JSON must have the design's shape (:meth:`MoveDesign.from_dict`);
* ``name``: matches :data:`~pokegym.moves.schema.NAME_PATTERN` (3-24 letters, spaces,
  hyphens, apostrophes) and is no existing Showdown move (compared by id against every
  move of the data, past ones included);
* ``type``, ``category``, ``effect``: known words;
* ``power`` in 10..250 (:data:`POWER_RANGE`: Showdown's fixed powers run from 10 to
  Explosion's 250);
* ``accuracy`` in 30..100 (:data:`ACCURACY_RANGE`: the OHKO moves' 30 is the lowest);
* ``pp`` one of 5, 10, ..., 40 (:data:`PP_VALUES`: every damaging move but Struggle);
* ``effect_chance`` in 1..100 when there is an effect, 0 when ``effect`` is ``"none"``;
* ``description`` at most :data:`DESCRIPTION_MAX` characters.

Balance score (0-100)
---------------------
The move's **value** is what it is worth in base-power points, per use::

    value = power * accuracy / 100  +  EFFECT_VALUES[effect] * effect_chance / 100

(expected power, plus the power a real move gives up for its effect: a guaranteed
paralysis is worth 45 power, a 10 % burn 4.5). :data:`EFFECT_VALUES`, per 100 % chance:
sleep 60; freeze 50; paralysis, burn, badly_poison 45; flinch 40; confusion 35; poison,
raise_atk, raise_spa 30; lower_atk, lower_spa, raise_spe 25; lower_def, lower_spd,
lower_spe, lower_accuracy 20; raise_def, raise_spd 15. The **budget** is what real moves
with the same PP are worth::

    budget(pp) = BUDGET_INTERCEPT - BUDGET_SLOPE * ln(pp)  = 170.36 - 30.56 ln(pp)

(121 at 5 PP, 100 at 10, 88 at 15, 79 at 20, 58 at 40). It is the 80th percentile of the
value of real moves (:data:`BUDGET_QUANTILE`): :func:`fit_budget` fits it to the 179
standard Showdown moves that have a design's shape (:func:`real_designs`), as the line
in ``ln(pp)`` minimising the quantile (pinball) loss. With ``ratio = value / budget``
the score is::

    total = 100 + overpowered + underpowered + extremes + category + type
    score = clip(total, 0, 100), rounded half up

    overpowered  = -300 * (ratio - 1.10)   when ratio > 1.10, else 0
    underpowered = -100 * (0.80 - ratio)   when ratio < 0.80, else 0
    extremes     = -(power - 150)          power above 150
                   -2 * (50 - accuracy)    accuracy below 50
                   -(chance - cap)         effect chance above EFFECT_MAX_CHANCE[effect]
    category     = -min(50, 100 * (shortfall - 0.15))  when shortfall > 0.15, else 0
    type         = 0 (STAB or coverage), -10 (unusual), -35 (off-type)

* A move may be 10 % above the budget (real moves scatter around it) and 20 % below it
  for free; beyond that, strength costs 3 points per percent (a ratio over 1.20 fails)
  and weakness 1 point per percent (a ratio under 0.50 fails): an overpowered move
  spoils battles, a weak one only goes unused.
* ``extremes`` charges what the budget cannot see: power above 150 (no real move without
  a drawback hits harder), accuracy below 50 (no fixed-power move misses more often,
  OHKO moves aside), and effect chances above the highest a real move gives that effect
  (10 % sleep or freeze, 30 % flinch: a 100 % flinch or sleep rider is not a fair effect
  at any power). One point per unit over, two per point of accuracy below 50: a move
  that fails more often than it lands is frustrating at any power, which the expected
  power alone does not see. :data:`EFFECT_MAX_CHANCE`: sleep and freeze
  10, flinch 30, badly_poison 50, every other effect 100.
* ``category`` (only with a Pokémon): ``shortfall = 1 - used / stronger`` where ``used``
  is the species' base Attack for a physical move (Special Attack for a special one)
  and ``stronger`` the higher of the two. Mixed attackers (within 15 %) pay nothing; a
  physical move on a clearly special attacker (Alakazam: 50 Atk, 135 SpA, shortfall
  0.63) pays 48 points and cannot be balanced. This is a warning and a deduction, not a
  violation: the move is legal, only wasted on that Pokémon.
* ``type`` (only with a Pokémon): a move of one of the species' types (STAB) is in
  character. Otherwise the type counts as *coverage* when at least 10 % of the
  random-battle species sharing one of the Pokémon's types carry an attack of that type
  in Showdown's random-battle move pools, *unusual* from 5 % to 10 %, and *off-type*
  below 5 % (a Fairy attack on Garchomp, an Ice attack on Charizard).
  :data:`TYPE_COVERAGE` and :data:`TYPE_UNUSUAL` hold that table.

``balanced`` means valid and a score of at least :data:`BALANCED_SCORE` (70). Without a
Pokémon the category and type terms are 0 and a warning says they were not checked.
:attr:`Evaluation.parts` lists every term above plus ``value``, ``expected_power``,
``effect_value``, ``budget``, ``ratio`` and ``pokemon_checked`` (1 or 0), each rounded to
two decimals; the score is computed from the rounded terms, so they add up to it.

Warnings that cost nothing: an effect chance below 10 % (no real move has one) and an
empty description.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pokegym.moves.schema import (
    CATEGORIES,
    EFFECTS,
    NAME_PATTERN,
    MoveDesign,
    MoveFormatError,
    _effect_word,
)
from pokegym.world.data import TYPES, Dex, load_dex, to_id

BALANCED_SCORE = 70

# ------------------------------------------------------------------ validity ranges
POWER_RANGE = (10, 250)
ACCURACY_RANGE = (30, 100)
PP_VALUES = (5, 10, 15, 20, 25, 30, 35, 40)
CHANCE_RANGE = (1, 100)
NAME_MAX = 24  # NAME_PATTERN's limit; real move names are at most 27 characters
DESCRIPTION_MAX = 200  # Showdown's short descriptions are at most 55 characters

# ------------------------------------------------------------------ value of effects
# Base-power points a 100 % chance of the effect is worth. A least-squares fit of
# expected power on PP tier and effect chance over the real moves gives, per 100 %:
# major status 44, poison 45, confusion 56, flinch 40, a target's stat drop 20, a stat
# rise 21. The table keeps that scale and orders the words by how much they matter in
# battle: sleep above freeze above the other major statuses; poison and confusion
# (33 % self-hit) below them; dropping an attacking stat above a defensive one; raising
# the user's attacking stats or Speed above its defences. Effects that nothing in the
# data rewards more are not made cheaper than the fit says.
EFFECT_VALUES: dict[str, float] = {
    "none": 0.0,
    "sleep": 60.0,
    "freeze": 50.0,
    "paralysis": 45.0,
    "burn": 45.0,
    "badly_poison": 45.0,
    "poison": 30.0,
    "confusion": 35.0,
    "flinch": 40.0,
    "lower_atk": 25.0,
    "lower_spa": 25.0,
    "lower_def": 20.0,
    "lower_spd": 20.0,
    "lower_spe": 20.0,
    "lower_accuracy": 20.0,
    "raise_atk": 30.0,
    "raise_spa": 30.0,
    "raise_spe": 25.0,
    "raise_def": 15.0,
    "raise_spd": 15.0,
}

# The highest chance any real damaging move without priority gives the effect (standard
# and past moves, from ``secondaries``; see :func:`real_chance_caps`). No real move
# raises Special Defense as a side effect; it takes Defense's cap (its twin).
EFFECT_MAX_CHANCE: dict[str, int] = {
    "sleep": 10,
    "freeze": 10,
    "paralysis": 100,
    "burn": 100,
    "badly_poison": 50,
    "poison": 100,
    "confusion": 100,
    "flinch": 30,
    "lower_atk": 100,
    "lower_spa": 100,
    "lower_def": 100,
    "lower_spd": 100,
    "lower_spe": 100,
    "lower_accuracy": 100,
    "raise_atk": 100,
    "raise_spa": 100,
    "raise_spe": 100,
    "raise_def": 100,
    "raise_spd": 100,
}

# ------------------------------------------------------------------ the budget
# budget(pp) = BUDGET_INTERCEPT - BUDGET_SLOPE * ln(pp): ``fit_budget(real_designs(dex))``
# on gen 9 data (179 moves), the 80th-percentile line of value against ln(pp).
BUDGET_QUANTILE = 0.8
BUDGET_INTERCEPT = 170.36
BUDGET_SLOPE = 30.56

OVER_TOLERANCE = 0.10  # free above the budget
OVER_POINTS = 300.0  # points per unit of ratio beyond it (3 per percent)
UNDER_TOLERANCE = 0.20  # free below the budget
UNDER_POINTS = 100.0  # points per unit of ratio beyond it (1 per percent)
POWER_PLAIN_MAX = 150
ACCURACY_PLAIN_MIN = 50
ACCURACY_EXTREME_WEIGHT = 2.0  # extreme units per point of accuracy below ACCURACY_PLAIN_MIN
EXTREME_POINTS = 1.0  # per power point, accuracy point or chance point beyond the limits

# ------------------------------------------------------------------ the Pokémon
CATEGORY_MARGIN = 0.15
CATEGORY_POINTS = 100.0
CATEGORY_MAX = 50.0
TYPE_UNUSUAL_POINTS = 10.0
TYPE_OFF_POINTS = 35.0
TYPE_COVERAGE_SHARE = 0.10
TYPE_UNUSUAL_SHARE = 0.05

# For each species type, the other attack types that at least 10 % (coverage) or 5-10 %
# (unusual) of the gen 9 random-battle species of that type carry in their move pools
# (Showdown's data/random-battles/gen9/sets.json; see :func:`type_affinity`).
_COVERAGE_TEXT = """
Bug: Dark Electric Fighting Fire Flying Grass Ground Normal
Dark: Bug Fighting Fire Flying Grass Ground Ice Poison Psychic Water
Dragon: Bug Dark Electric Fighting Fire Flying Grass Ground Normal Steel Water
Electric: Bug Dark Dragon Fairy Fighting Fire Flying Grass Ground Ice Normal Water
Fairy: Bug Dark Electric Fighting Fire Ground Normal Psychic
Fighting: Bug Dark Electric Fire Flying Grass Ground Ice Normal Poison Psychic Rock Steel Water
Fire: Bug Dark Electric Fighting Flying Grass Ground Normal Poison Rock
Flying: Bug Dark Fighting Fire Ground Normal Psychic Rock
Ghost: Bug Dark Fairy Fighting Fire Grass Normal Poison Psychic
Grass: Bug Dark Dragon Fairy Fighting Ground Ice Normal Poison
Ground: Bug Dark Dragon Fighting Ice Normal Poison Rock Steel
Ice: Dark Dragon Electric Fighting Ground Normal Water
Normal: Bug Dark Fighting Flying Ghost Ground Psychic
Poison: Bug Dark Fighting Fire Ghost Grass Ground Normal Psychic Water
Psychic: Bug Dark Electric Fairy Fighting Fire Ghost Ground Ice Normal Steel Water
Rock: Dark Fighting Fire Ground Ice Normal Psychic
Steel: Bug Dark Dragon Electric Fairy Fighting Fire Ground Normal Psychic Rock
Water: Bug Dark Dragon Fighting Ground Ice Normal Poison
"""
_UNUSUAL_TEXT = """
Bug: Ice Poison Rock Steel Water
Dark: Dragon Electric Fairy Normal Rock Steel
Dragon: Ghost Ice Poison Rock
Electric: Ghost Poison
Fairy: Ghost Grass Ice Poison Steel Water
Fighting:
Fire: Dragon Ghost Psychic
Flying: Dragon Electric Grass Water
Ghost: Dragon Electric Flying Ground Ice Water
Grass: Fire Flying Ghost Psychic Rock
Ground: Electric Fire Ghost Grass Water
Ice: Bug Flying Grass Rock Steel
Normal: Electric Fairy Fire Grass Ice
Poison: Dragon Fairy Ice Rock
Psychic: Flying Grass Poison
Rock: Bug Dragon Electric Fairy Grass Water
Steel: Flying Ice Water
Water: Fairy Fire Flying Grass Psychic Rock
"""


def _type_table(text: str) -> dict[str, frozenset[str]]:
    rows = (line.split(":") for line in text.strip().splitlines())
    return {own.strip(): frozenset(types.split()) for own, types in rows}


TYPE_COVERAGE = _type_table(_COVERAGE_TEXT)
TYPE_UNUSUAL = _type_table(_UNUSUAL_TEXT)

# Terms that add up to the score (the other entries of ``parts`` explain them).
SCORE_TERMS = ("overpowered", "underpowered", "extremes", "category", "type")


@dataclass(frozen=True)
class Evaluation:
    """The evaluator's answer: problems, the score and the terms it is made of."""

    violations: tuple[str, ...]
    warnings: tuple[str, ...]
    score: int
    parts: dict[str, float] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return not self.violations

    @property
    def balanced(self) -> bool:
        return self.valid and self.score >= BALANCED_SCORE

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "balanced": self.balanced,
            "score": self.score,
            "violations": list(self.violations),
            "warnings": list(self.warnings),
            "parts": dict(self.parts),
        }


def evaluate(
    design: MoveDesign | Mapping[str, Any], *, pokemon: str | None = None, dex: Dex | None = None
) -> Evaluation:
    """Validity and balance of ``design`` (for ``pokemon``, a species name, when given).

    A raw mapping that is not a well-formed design is not an error: it comes back as an
    invalid :class:`Evaluation` saying why. An unknown species is the caller's mistake
    and raises :class:`ValueError`.
    """
    dex = dex or load_dex(9)
    species = _species(pokemon, dex) if pokemon is not None else None
    if not isinstance(design, MoveDesign):
        try:
            design = MoveDesign.from_dict(design)
        except MoveFormatError as error:
            return _refused(str(error))
        except (ValueError, TypeError, OverflowError) as error:  # NaN or infinite numbers
            return _refused(f"the move design is malformed: {error}")
    violations = _name_violations(design, dex)
    broken = _number_violations(design)
    if broken:
        violations += broken
        return Evaluation(
            violations=tuple(violations),
            warnings=(),
            score=0,
            parts={"violations": float(len(violations))},
        )

    warnings: list[str] = []
    parts: dict[str, float] = {}
    expected = design.power * design.accuracy / 100
    effect_value = EFFECT_VALUES[design.effect] * design.effect_chance / 100
    value = expected + effect_value
    limit = budget(design.pp)
    ratio = value / limit
    parts.update(
        expected_power=expected, effect_value=effect_value, value=value, budget=limit, ratio=ratio
    )

    parts["overpowered"] = -OVER_POINTS * max(0.0, ratio - 1 - OVER_TOLERANCE)
    if parts["overpowered"]:
        warnings.append(
            f"overpowered: worth {value:.0f} power per use, real moves with {design.pp} PP "
            f"are worth up to about {limit:.0f}"
        )
    parts["underpowered"] = -UNDER_POINTS * max(0.0, 1 - UNDER_TOLERANCE - ratio)
    if parts["underpowered"]:
        warnings.append(
            f"underpowered: worth {value:.0f} power per use, real moves with {design.pp} PP "
            f"are worth about {limit:.0f}"
        )
    parts["extremes"] = -EXTREME_POINTS * _extremes(design, warnings)

    if species is None:
        parts["category"] = parts["type"] = 0.0
        parts["pokemon_checked"] = 0.0
        warnings.append("no Pokémon given: category and type were not checked")
    else:
        parts["category"] = -_category_cost(design, species, warnings)
        parts["type"] = -_type_cost(design, species, warnings)
        parts["pokemon_checked"] = 1.0
    if design.has_effect and design.effect_chance < 10:
        warnings.append(
            f"a {design.effect_chance} % chance is below any real move's (10 % or more)"
        )
    if not design.description:
        warnings.append("the design has no description")

    # The score is computed from the rounded parts, so that they add up to it exactly.
    parts = {key: round(value, 2) + 0.0 for key, value in parts.items()}  # + 0.0: no -0.0
    total = 100 + sum(parts[term] for term in SCORE_TERMS)
    score = math.floor(min(100.0, max(0.0, total)) + 0.5)  # half up
    return Evaluation(
        violations=tuple(violations), warnings=tuple(warnings), score=score, parts=parts
    )


def _refused(message: str) -> Evaluation:
    return Evaluation(violations=(message,), warnings=(), score=0, parts={"violations": 1.0})


def budget(pp: int) -> float:
    """What a real move with ``pp`` PP is worth (base-power points per use)."""
    return BUDGET_INTERCEPT - BUDGET_SLOPE * math.log(pp)


# ---------------------------------------------------------------------------- checks
def _species(pokemon: str, dex: Dex) -> dict[str, Any]:
    entry = dex.species.get(to_id(pokemon))
    if entry is None:
        raise ValueError(
            f"unknown Pokémon {pokemon!r}: Showdown's gen {dex.gen} data has no such species"
        )
    return entry


def _name_violations(design: MoveDesign, dex: Dex) -> list[str]:
    """Problems with the words (the score is still computed)."""
    out: list[str] = []
    name = design.name.strip()
    if not name:
        out.append("name is empty")
    elif len(name) > NAME_MAX:
        out.append(f"name is {len(name)} characters long; at most {NAME_MAX}")
    elif not NAME_PATTERN.match(name):
        out.append(
            f"name {name!r} must be 3-{NAME_MAX} characters: letters, spaces, hyphens and "
            "apostrophes, starting and ending with a letter"
        )
    existing = dex.moves.get(design.id) if design.id else None
    if existing is not None:
        out.append(f"name copies the existing move {existing.get('name', design.name)!r}")
    if len(design.description) > DESCRIPTION_MAX:
        out.append(
            f"description is {len(design.description)} characters long; at most {DESCRIPTION_MAX}"
        )
    return out


def _number_violations(design: MoveDesign) -> list[str]:
    """Problems that leave the score undefined (it is 0)."""
    out: list[str] = []
    if design.type not in TYPES:
        out.append(f"type {design.type!r} is not one of {', '.join(TYPES)}")
    if design.category not in CATEGORIES:
        out.append(f"category {design.category!r} is not Physical or Special")
    if design.effect not in EFFECTS:
        out.append(f"effect {design.effect!r} is not one of {', '.join(EFFECTS)}")
    low, high = POWER_RANGE
    if not low <= design.power <= high:
        out.append(f"power {design.power} is outside {low}..{high}")
    low, high = ACCURACY_RANGE
    if not low <= design.accuracy <= high:
        out.append(f"accuracy {design.accuracy} is outside {low}..{high} (a percentage)")
    if design.pp not in PP_VALUES:
        out.append(f"pp {design.pp} is not one of {', '.join(map(str, PP_VALUES))}")
    low, high = CHANCE_RANGE
    if design.effect == "none":
        if design.effect_chance != 0:
            out.append(
                f"effect_chance is {design.effect_chance} but the effect is none (it must be 0)"
            )
    elif not low <= design.effect_chance <= high:
        out.append(
            f"effect_chance {design.effect_chance} is outside {low}..{high} "
            f"for effect {design.effect}"
        )
    return out


def _extremes(design: MoveDesign, warnings: list[str]) -> float:
    """Units beyond what real moves do (power, accuracy, effect chance)."""
    units = 0.0
    if design.power > POWER_PLAIN_MAX:
        units += design.power - POWER_PLAIN_MAX
        warnings.append(
            f"power {design.power} is above {POWER_PLAIN_MAX}, "
            "which no real move without a drawback exceeds"
        )
    if design.accuracy < ACCURACY_PLAIN_MIN:
        units += ACCURACY_EXTREME_WEIGHT * (ACCURACY_PLAIN_MIN - design.accuracy)
        warnings.append(
            f"accuracy {design.accuracy} is below {ACCURACY_PLAIN_MIN}, "
            "lower than any real fixed-power move"
        )
    cap = EFFECT_MAX_CHANCE.get(design.effect, 100)
    if design.has_effect and design.effect_chance > cap:
        units += design.effect_chance - cap
        warnings.append(
            f"a {design.effect_chance} % chance of {design.effect} "
            f"is above any real move's ({cap} %)"
        )
    return units


def _category_cost(design: MoveDesign, species: Mapping[str, Any], warnings: list[str]) -> float:
    stats = species["baseStats"]
    used, other = (
        (stats["atk"], stats["spa"])
        if design.category == "Physical"
        else (stats["spa"], stats["atk"])
    )
    shortfall = 1 - used / max(used, other)
    cost = min(CATEGORY_MAX, CATEGORY_POINTS * max(0.0, shortfall - CATEGORY_MARGIN))
    if cost:
        stat, better = (
            ("Attack", "Special Attack")
            if design.category == "Physical"
            else ("Special Attack", "Attack")
        )
        warnings.append(
            f"a {design.category.lower()} move on {species['name']}, whose {stat} ({used}) is "
            f"{shortfall:.0%} below its {better} ({other})"
        )
    return cost


def _type_cost(design: MoveDesign, species: Mapping[str, Any], warnings: list[str]) -> float:
    own = tuple(species["types"])
    if design.type in own:
        return 0.0
    if any(design.type in TYPE_COVERAGE.get(t, ()) for t in own):
        return 0.0
    if any(design.type in TYPE_UNUSUAL.get(t, ()) for t in own):
        warnings.append(
            f"a {design.type} attack is unusual for a {'/'.join(own)} Pokémon "
            f"like {species['name']}"
        )
        return TYPE_UNUSUAL_POINTS
    warnings.append(
        f"a {design.type} attack is off-type for a {'/'.join(own)} Pokémon like {species['name']}"
    )
    return TYPE_OFF_POINTS


# ---------------------------------------------------------------------------- derivations
# How the constants above were obtained; the tests run these on Showdown's data and
# compare. Re-run them (and update the constants) when the pinned Showdown changes.
def real_designs(dex: Dex) -> list[MoveDesign]:
    """The standard Showdown moves that have a design's shape, sorted by id."""
    designs = (MoveDesign.from_showdown(entry) for entry in dex.moves.values())
    return sorted((d for d in designs if d is not None), key=lambda d: d.id)


def move_value(design: MoveDesign) -> float:
    """``power * accuracy / 100 + EFFECT_VALUES[effect] * effect_chance / 100``."""
    return (
        design.power * design.accuracy / 100
        + EFFECT_VALUES[design.effect] * design.effect_chance / 100
    )


def fit_budget(
    designs: Iterable[MoveDesign], quantile: float = BUDGET_QUANTILE
) -> tuple[float, float]:
    """``(intercept, slope)`` of the ``quantile`` line of :func:`move_value` against ln(pp).

    Quantile regression by exhaustion: the pinball loss is convex and piecewise linear,
    so an optimal line passes through two of the points; every line through two moves
    of different PP is tried and the one with the least loss kept (the first on ties,
    in id order), which makes the fit exact and reproducible.
    """
    points = [(math.log(d.pp), move_value(d)) for d in designs]
    best: tuple[float, float, float] | None = None
    for i, (x1, y1) in enumerate(points):
        for x2, y2 in points[i + 1 :]:
            if x1 == x2:
                continue
            slope = (y2 - y1) / (x2 - x1)
            intercept = y1 - slope * x1
            loss = 0.0
            for x, y in points:
                residual = y - (intercept + slope * x)
                loss += quantile * residual if residual >= 0 else (quantile - 1) * residual
            if best is None or loss < best[0] - 1e-9:
                best = (loss, intercept, -slope)
    if best is None:
        raise ValueError("fitting the budget needs moves of at least two PP values")
    return best[1], best[2]


def real_chance_caps(dex: Dex) -> dict[str, int]:
    """The highest chance of each effect word among real damaging moves without priority."""
    caps: dict[str, int] = {}
    for entry in dex.moves.values():
        if entry.get("category") not in CATEGORIES or entry.get("isNonstandard") not in (
            None,
            "Past",
        ):
            continue
        if entry.get("priority", 0) != 0:
            continue
        for secondary in entry.get("secondaries") or ():
            word = _effect_word(secondary)
            if word is not None:
                caps[word] = max(caps.get(word, 0), int(secondary.get("chance", 100)))
    return caps


def type_affinity(dex: Dex, random_sets: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """``share[species_type][attack_type]``: the share of random-battle species of that type
    whose move pools (all roles) hold a damaging move of that attack type.

    ``random_sets`` is Showdown's ``data/random-battles/gen9/sets.json``.
    """
    count = dict.fromkeys(TYPES, 0)
    carrying = {t: dict.fromkeys(TYPES, 0) for t in TYPES}
    for species_id, entry in random_sets.items():
        species = dex.species.get(to_id(species_id))
        if species is None:
            continue
        attack_types = set()
        for role in entry.get("sets", ()):
            for name in role.get("movepool", ()):
                move = dex.moves.get(to_id(name))
                if move and move.get("category") in CATEGORIES and move.get("basePower"):
                    attack_types.add(move["type"])
        for own in species["types"]:
            count[own] += 1
            for attack in attack_types:
                carrying[own][attack] += 1
    return {t: {u: carrying[t][u] / count[t] if count[t] else 0.0 for u in TYPES} for t in TYPES}
