"""The damage calculator against Showdown's own damage arithmetic.

Every case is asked twice in the same test: to :func:`pokegym.world.damage.calculate`
and to Showdown's simulator (the bridge's ``damage`` command calls Showdown's
``getDamage`` once per damage roll, with and without a critical hit). Most cases come
with a *control*: the same question without the effect under test. Showdown must give
different numbers for the two (so the effect really matters), and the calculator must
match Showdown on both. All questions go to the simulator in one batch.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest

from pokegym.world.damage import (
    Combatant,
    DamageResult,
    Field,
    calculate,
    damage_over_prior,
)
from pokegym.world.data import Dex, load_dex
from pokegym.world.sets import PokemonSet, compute_stats
from pokegym.world.showdown_reference import (
    DamageRequest,
    calculator_inputs,
    showdown_damage,
    showdown_damage_many,
)

PHYSICAL = (0, 252, 0, 0, 4, 252)
SPECIAL = (0, 0, 0, 252, 4, 252)
BULKY = (252, 0, 252, 0, 4, 0)
SP_BULKY = (252, 0, 4, 0, 252, 0)


def mon(
    species: str,
    item: str = "",
    ability: str = "",
    *,
    nature: str = "serious",
    evs: tuple[int, ...] = BULKY,
    level: int = 100,
    tera: str = "",
) -> PokemonSet:
    return PokemonSet(
        species=species, level=level, item=item, ability=ability, moves=("tackle",),
        nature=nature, evs=evs, tera_type=tera,
    )  # fmt: skip


def phys(species: str, item: str = "", ability: str = "", **kw: Any) -> PokemonSet:
    return mon(species, item, ability, nature="adamant", evs=PHYSICAL, **kw)


def spec(species: str, item: str = "", ability: str = "", **kw: Any) -> PokemonSet:
    return mon(species, item, ability, nature="modest", evs=SPECIAL, **kw)


CHOMP = phys("garchomp", "", "roughskin")
TTAR = mon("tyranitar", "", "sandstream", nature="impish")
HEATRAN = mon("heatran", "", "flashfire", nature="calm", evs=SP_BULKY)
CLEFABLE = mon("clefable", "", "magicguard", nature="bold")
PRIMARINA = spec("primarina", "", "torrent")


@dataclass(frozen=True)
class Case:
    name: str
    attacker: PokemonSet
    defender: PokemonSet
    move: str
    options: dict[str, Any] = field(default_factory=dict)
    gen: int = 9
    control: dict[str, Any] | None = None  # fields replaced to remove the effect

    def request(self) -> DamageRequest:
        return DamageRequest(self.attacker, self.defender, self.move, self.gen, self.options)

    def control_case(self) -> Case | None:
        if self.control is None:
            return None
        return dataclasses.replace(self, name=self.name + " (control)", control=None,
                                   **self.control)  # fmt: skip


CASES = [
    # formula, STAB, Tera
    Case("stab", CHOMP, TTAR, "earthquake"),
    Case("no stab, 4x", CHOMP, mon("ferrothorn", "", "ironbarbs"), "firefang"),
    Case(
        "tera into a new type",
        phys("garchomp", tera="Steel"),
        CLEFABLE,
        "ironhead",
        {"attacker": {"tera": True}},
        control={"options": {}},
    ),
    Case(
        "tera into its own type",
        phys("garchomp", tera="Dragon"),
        TTAR,
        "dragonclaw",
        {"attacker": {"tera": True}},
        control={"options": {}},
    ),
    Case(
        "adaptability",
        spec("porygonz", "", "adaptability"),
        CLEFABLE,
        "triattack",
        control={"attacker": spec("porygonz", "", "pressure")},
    ),
    Case(
        "adaptability + tera same type",
        spec("porygonz", "", "adaptability", tera="Normal"),
        CLEFABLE,
        "hypervoice",
        {"attacker": {"tera": True}},
        control={"options": {}},
    ),
    Case(
        "tera keeps old STAB",
        phys("garchomp", tera="Fairy"),
        TTAR,
        "earthquake",
        {"attacker": {"tera": True}},
    ),
    Case(
        "tera blast takes the tera type",
        phys("dragonite", "", "multiscale", tera="Flying"),
        phys("greattusk", "", "protosynthesis"),
        "terablast",
        {"attacker": {"tera": True}},
        control={"options": {}},
    ),
    Case(
        "tera 60 power floor",
        phys("greattusk", "", "protosynthesis", tera="Normal"),
        CLEFABLE,
        "rapidspin",
        {"attacker": {"tera": True}},
        control={"options": {}},
    ),
    # type effectiveness and immunities
    Case(
        "tera defender",
        phys("baxcalibur", "", "thermalexchange"),
        mon("garchomp", "", "roughskin", tera="Steel"),
        "iciclecrash",
        {"defender": {"tera": True}},
        control={"options": {}},
    ),
    Case("type immunity", CHOMP, mon("skarmory", "", "sturdy"), "earthquake"),
    Case(
        "levitate",
        CHOMP,
        mon("rotomwash", "", "levitate"),
        "earthquake",
        control={"defender": mon("rotomwash", "", "pressure")},
    ),
    Case(
        "freeze-dry", spec("kyurem", "", "pressure"), mon("toxapex", "", "regenerator"), "freezedry"
    ),
    # critical hits (every case also checks the crit rolls)
    Case(
        "crit ignores boosts",
        CHOMP,
        HEATRAN,
        "earthquake",
        {"attacker": {"boosts": {"atk": -2}}, "defender": {"boosts": {"def": 2}}},
        control={"options": {}},
    ),
    Case(
        "sniper",
        spec("kingdra", "", "sniper"),
        TTAR,
        "hydropump",
        control={"attacker": spec("kingdra", "", "swiftswim")},
    ),
    # burn, Guts, Facade
    Case(
        "burn halves physical",
        CHOMP,
        TTAR,
        "earthquake",
        {"attacker": {"status": "brn"}},
        control={"options": {}},
    ),
    Case(
        "guts + burn + facade",
        phys("ursaluna", "", "guts"),
        CLEFABLE,
        "facade",
        {"attacker": {"status": "brn"}},
        control={"options": {}},
    ),
    Case(
        "facade ignores burn",
        CHOMP,
        CLEFABLE,
        "facade",
        {"attacker": {"status": "brn"}},
        control={"options": {}},
    ),
    # weather
    Case(
        "sun boosts fire",
        spec("volcarona", "", "flamebody"),
        TTAR,
        "fireblast",
        {"weather": "sunnyday"},
        control={"options": {}},
    ),
    Case(
        "sun weakens water",
        PRIMARINA,
        CHOMP,
        "hydropump",
        {"weather": "sunnyday"},
        control={"options": {}},
    ),
    Case(
        "rain boosts water",
        phys("barraskewda", "", "propellertail"),
        TTAR,
        "liquidation",
        {"weather": "raindance"},
        control={"options": {}},
    ),
    Case(
        "sand raises rock spd",
        PRIMARINA,
        TTAR,
        "moonblast",
        {"weather": "sandstorm"},
        control={"options": {}},
    ),
    Case(
        "snow raises ice def",
        CHOMP,
        mon("baxcalibur", "", "thermalexchange"),
        "earthquake",
        {"weather": "snowscape"},
        control={"options": {}},
    ),
    # terrains
    Case(
        "electric terrain",
        spec("raichu", "", "static"),
        TTAR,
        "thunderbolt",
        {"terrain": "electricterrain"},
        control={"options": {}},
    ),
    Case(
        "grassy terrain halves earthquake",
        CHOMP,
        TTAR,
        "earthquake",
        {"terrain": "grassyterrain"},
        control={"options": {}},
    ),
    Case(
        "misty terrain halves dragon",
        CHOMP,
        TTAR,
        "outrage",
        {"terrain": "mistyterrain"},
        control={"options": {}},
    ),
    Case(
        "psychic terrain",
        spec("espeon", "", "magicbounce"),
        CHOMP,
        "psychic",
        {"terrain": "psychicterrain"},
        control={"options": {}},
    ),
    Case(
        "terrain skips a flying attacker",
        spec("zapdos", "", "static"),
        TTAR,
        "thunderbolt",
        {"terrain": "electricterrain"},
    ),
    # screens
    Case("reflect", CHOMP, TTAR, "earthquake", {"reflect": True}, control={"options": {}}),
    Case(
        "light screen", PRIMARINA, TTAR, "moonblast", {"lightScreen": True}, control={"options": {}}
    ),
    Case(
        "aurora veil", PRIMARINA, TTAR, "moonblast", {"auroraVeil": True}, control={"options": {}}
    ),
    Case("brick break ignores reflect", CHOMP, TTAR, "brickbreak", {"reflect": True}),
    # items
    Case(
        "choice band",
        phys("garchomp", "choiceband", "roughskin"),
        TTAR,
        "earthquake",
        control={"attacker": CHOMP},
    ),
    Case(
        "choice specs",
        spec("primarina", "choicespecs", "torrent"),
        TTAR,
        "moonblast",
        control={"attacker": PRIMARINA},
    ),
    Case(
        "life orb",
        phys("garchomp", "lifeorb", "roughskin"),
        TTAR,
        "earthquake",
        control={"attacker": CHOMP},
    ),
    Case(
        "expert belt",
        phys("garchomp", "expertbelt", "roughskin"),
        HEATRAN,
        "earthquake",
        control={"attacker": CHOMP},
    ),
    Case(
        "assault vest",
        PRIMARINA,
        mon("tyranitar", "assaultvest", "sandstream"),
        "moonblast",
        control={"defender": TTAR},
    ),
    Case(
        "eviolite",
        CHOMP,
        mon("porygon2", "eviolite", "download"),
        "earthquake",
        control={"defender": mon("porygon2", "", "download")},
    ),
    Case(
        "type-boosting item",
        spec("primarina", "mysticwater", "torrent"),
        CHOMP,
        "hydropump",
        control={"attacker": PRIMARINA},
    ),
    Case(
        "resist berry",
        CHOMP,
        mon("heatran", "shucaberry", "flashfire", nature="calm", evs=SP_BULKY),
        "earthquake",
        control={"defender": HEATRAN},
    ),
    Case(
        "booster energy",
        phys("greattusk", "boosterenergy", "protosynthesis"),
        CLEFABLE,
        "headlongrush",
        control={"attacker": phys("greattusk", "", "protosynthesis")},
    ),
    # abilities
    Case(
        "huge power",
        phys("azumarill", "", "hugepower"),
        CHOMP,
        "playrough",
        control={"attacker": phys("azumarill", "", "thickfat")},
    ),
    Case(
        "technician",
        phys("scizor", "", "technician"),
        CLEFABLE,
        "bulletpunch",
        control={"attacker": phys("scizor", "", "swarm")},
    ),
    Case(
        "multiscale at full HP",
        phys("baxcalibur", "", "thermalexchange"),
        mon("dragonite", "", "multiscale"),
        "iciclecrash",
        control={"options": {"defender": {"hp": 300}}},
    ),
    Case(
        "fur coat",
        CHOMP,
        mon("persianalola", "", "furcoat"),
        "earthquake",
        control={"defender": mon("persianalola", "", "technician")},
    ),
    Case(
        "thick fat",
        spec("volcarona", "", "flamebody"),
        mon("snorlax", "", "thickfat"),
        "fireblast",
        control={"defender": mon("snorlax", "", "immunity")},
    ),
    Case(
        "tough claws",
        phys("garchomp", "", "toughclaws"),
        TTAR,
        "dragonclaw",
        control={"attacker": CHOMP},
    ),
    Case(
        "sheer force + life orb",
        spec("landorus", "lifeorb", "sheerforce"),
        HEATRAN,
        "earthpower",
        control={"attacker": spec("landorus", "lifeorb", "sandforce")},
    ),
    Case(
        "tinted lens",
        spec("venomoth", "", "tintedlens"),
        HEATRAN,
        "bugbuzz",
        control={"attacker": spec("venomoth", "", "shielddust")},
    ),
    Case(
        "filter",
        CHOMP,
        mon("heatran", "", "filter"),
        "earthquake",
        control={"defender": mon("heatran", "", "flashfire")},
    ),
    Case(
        "ice scales",
        PRIMARINA,
        mon("frosmoth", "", "icescales"),
        "moonblast",
        control={"defender": mon("frosmoth", "", "shielddust")},
    ),
    Case(
        "fluffy",
        CHOMP,
        mon("bewear", "", "fluffy"),
        "dragonclaw",
        control={"defender": mon("bewear", "", "unnerve")},
    ),
    Case(
        "sword of ruin",
        phys("chienpao", "", "swordofruin"),
        CHOMP,
        "iciclecrash",
        control={"attacker": phys("chienpao", "", "pressure")},
    ),
    Case(
        "quark drive in electric terrain",
        phys("ironhands", "", "quarkdrive"),
        TTAR,
        "drainpunch",
        {"terrain": "electricterrain"},
        control={"attacker": phys("ironhands", "", "pressure")},
    ),
    Case(
        "mold breaker ignores multiscale",
        phys("excadrill", "", "moldbreaker"),
        mon("dragonite", "", "multiscale"),
        "ironhead",
        control={"attacker": phys("excadrill", "", "sandrush")},
    ),
    # multi-hit moves
    Case("skill link", phys("cinccino", "", "skilllink"), TTAR, "tailslap"),
    Case("triple axel third hit", phys("weavile", "", "pressure"), CHOMP, "tripleaxel", {"hit": 3}),
    # moves with their own rules
    Case(
        "knock off with an item",
        phys("kingambit", "", "pressure"),
        mon("clefable", "leftovers", "magicguard"),
        "knockoff",
        control={"options": {"defender": {"itemRemoved": True}}},
    ),
    Case(
        "acrobatics without an item",
        phys("hawlucha", "", "unburden"),
        TTAR,
        "acrobatics",
        control={"attacker": phys("hawlucha", "leftovers", "unburden")},
    ),
    Case(
        "hex on a statused target",
        spec("gengar", "", "cursedbody"),
        CLEFABLE,
        "hex",
        {"defender": {"status": "par"}},
        control={"options": {}},
    ),
    Case(
        "low kick on a heavy target",
        phys("greattusk", "", "protosynthesis"),
        mon("snorlax", "", "thickfat"),
        "lowkick",
    ),
    Case(
        "eruption at half HP",
        spec("typhlosion", "", "blaze"),
        TTAR,
        "eruption",
        {"attacker": {"hp": 150}},
        control={"options": {}},
    ),
    Case(
        "body press",
        mon("corviknight", "", "pressure", nature="impish"),
        TTAR,
        "bodypress",
        {"attacker": {"boosts": {"def": 2}}},
        control={"options": {}},
    ),
    Case(
        "foul play",
        mon("grimmsnarl", "", "prankster"),
        CHOMP,
        "foulplay",
        {"defender": {"boosts": {"atk": 2}}},
        control={"options": {}},
    ),
    Case(
        "psyshock",
        spec("alakazam", "", "magicguard"),
        mon("blissey", "", "naturalcure"),
        "psyshock",
    ),
    Case(
        "weather ball in rain",
        spec("pelipper", "", "drizzle"),
        CHOMP,
        "weatherball",
        {"weather": "raindance"},
        control={"options": {}},
    ),
    Case(
        "gyro ball",
        mon("ferrothorn", "", "ironbarbs", nature="brave"),
        phys("weavile", "", "pressure"),
        "gyroball",
    ),
    Case("seismic toss", mon("blissey", "", "naturalcure", level=88), TTAR, "seismictoss"),
    Case(
        "super fang",
        phys("rattataalola", "", "hustle"),
        TTAR,
        "superfang",
        {"defender": {"hp": 301}},
    ),
    # generation 8
    Case(
        "gen 8 choice band",
        phys("dragapult", "choiceband", "infiltrator"),
        TTAR,
        "dragondarts",
        gen=8,
        control={"attacker": phys("dragapult", "", "infiltrator")},
    ),
    Case(
        "gen 8 transistor",
        spec("regieleki", "", "transistor"),
        TTAR,
        "thunderbolt",
        gen=8,
        control={"attacker": spec("regieleki", "", "pressure")},
    ),
    Case(
        "gen 9 transistor",
        spec("regieleki", "", "transistor"),
        TTAR,
        "thunderbolt",
        control={"attacker": spec("regieleki", "", "pressure")},
    ),
    Case(
        "gen 8 heatproof",
        spec("volcarona", "", "flamebody"),
        mon("bronzong", "", "heatproof"),
        "fireblast",
        gen=8,
        control={"defender": mon("bronzong", "", "levitate")},
    ),
    Case(
        "gen 8 sun + life orb + crit",
        spec("charizard", "lifeorb", "solarpower"),
        TTAR,
        "fireblast",
        {"weather": "sunnyday"},
        gen=8,
    ),
]


def _all_cases() -> list[Case]:
    out: list[Case] = []
    for case in CASES:
        out.append(case)
        control = case.control_case()
        if control is not None:
            out.append(control)
    return out


@pytest.fixture(scope="module")
def reference() -> dict[str, dict[str, Any]]:
    """Showdown's answer to every case and control, asked in one batch."""
    cases = _all_cases()
    results = showdown_damage_many([case.request() for case in cases])
    return {case.name: result for case, result in zip(cases, results, strict=True)}


def _calc(case: Case) -> DamageResult:
    dex = load_dex(case.gen)
    attacker, defender, fld = calculator_inputs(dex, case.attacker, case.defender, case.options)
    return calculate(dex, attacker, defender, case.move, fld, use_cache=False)


def _rolls_for(result: DamageResult, hit: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if hit > 1 and result.hit_rolls:
        index = min(hit, len(result.hit_rolls)) - 1
        return result.hit_rolls[index], result.hit_crit_rolls[index]
    return result.rolls, result.crit_rolls


def _showdown_rolls(answer: dict[str, Any]) -> tuple[list[int], list[int]]:
    # Showdown gives null for a move that does nothing; the calculator gives 0.
    return [r or 0 for r in answer["rolls"]], [r or 0 for r in answer["critRolls"]]


def _check(case: Case, answer: dict[str, Any]) -> DamageResult:
    result = _calc(case)
    rolls, crit_rolls = _rolls_for(result, int(case.options.get("hit", 1)))
    expected, expected_crit = _showdown_rolls(answer)
    assert list(rolls) == expected, f"{case.name}: rolls differ from Showdown's"
    assert list(crit_rolls) == expected_crit, f"{case.name}: crit rolls differ from Showdown's"
    assert result.move_type == answer["type"] or answer["immune"]
    return result


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_matches_showdown(case: Case, reference: dict[str, dict[str, Any]]) -> None:
    _check(case, reference[case.name])
    control = case.control_case()
    if control is not None:
        # The effect must change Showdown's numbers, and the calculator must follow both.
        with_effect, without = reference[case.name], reference[control.name]
        assert _showdown_rolls(with_effect) != _showdown_rolls(without), (
            f"{case.name}: the control gives the same damage, so the case tests nothing"
        )
        _check(control, reference[control.name])


@pytest.mark.slow
def test_hand_computed_earthquake(reference: dict[str, dict[str, Any]]) -> None:
    """Adamant 252 Atk Garchomp Earthquake on Impish 252/252 Tyranitar, by hand."""
    dex = load_dex(9)
    # Atk: floor((2*130 + 31 + 252/4) * 100/100 + 5) = 359, x1.1 (Adamant) -> 394.
    # Def: floor((2*110 + 31 + 252/4) * 100/100 + 5) = 319, x1.1 (Impish) -> 350.
    assert compute_stats(dex, "garchomp", 100, PHYSICAL, (31,) * 6, "adamant")["atk"] == 394
    assert compute_stats(dex, "tyranitar", 100, BULKY, (31,) * 6, "impish")["def"] == 350
    base = (2 * 100 // 5 + 2) * 100 * 394 // 350 // 50 + 2  # 42 * 100 * 394 / 350 = 4728
    assert base == 96
    by_hand = []
    for roll in range(85, 101):
        damage = base * roll // 100
        damage = (damage * 6144 + 2047) >> 12  # STAB x1.5, Showdown's rounding
        damage *= 2  # Ground on Rock/Dark: super effective
        by_hand.append(damage)
    assert by_hand[0] == 81 * 3 // 2 * 2 and by_hand[-1] == 144 * 2
    answer = reference["stab"]
    assert answer["rolls"] == by_hand
    attacker, defender, fld = calculator_inputs(dex, CHOMP, TTAR)
    result = calculate(dex, attacker, defender, "earthquake", fld)
    assert list(result.rolls) == by_hand
    assert (result.min, result.max) == (by_hand[0], by_hand[-1])
    # critical hit: x1.5 on the base damage, before the roll
    crit_base = base * 3 // 2
    assert result.crit_rolls[-1] == ((crit_base * 6144 + 2047) >> 12) * 2
    assert list(result.crit_rolls) == answer["critRolls"]


@pytest.mark.slow
def test_hand_computed_resisted_special_hit() -> None:
    """Modest 252 SpA Primarina Moonblast on Calm 252/252 Heatran (x0.25), by hand."""
    dex = load_dex(9)
    spa = compute_stats(dex, "primarina", 100, SPECIAL, (31,) * 6, "modest")["spa"]
    spd = compute_stats(dex, "heatran", 100, SP_BULKY, (31,) * 6, "calm")["spd"]
    assert (spa, spd) == (386, 342)  # (2*126+31+63+5)*1.1, (2*106+31+63+5)*1.1
    base = 42 * 95 * spa // spd // 50 + 2
    # STAB x1.5 (Showdown's rounding), then Fire and Steel each halve (floored each time)
    by_hand = [((base * r // 100 * 6144 + 2047) >> 12) // 2 // 2 for r in range(85, 101)]
    answer = showdown_damage(PRIMARINA, HEATRAN, "moonblast")
    assert answer["rolls"] == by_hand
    attacker, defender, fld = calculator_inputs(dex, PRIMARINA, HEATRAN)
    assert list(calculate(dex, attacker, defender, "moonblast", fld).rolls) == by_hand


@pytest.mark.slow
def test_multi_hit_distribution(reference: dict[str, dict[str, Any]]) -> None:
    dex = load_dex(9)
    attacker, defender, fld = calculator_inputs(dex, CHOMP, TTAR)
    result = calculate(dex, attacker, defender, "scaleshot", fld)
    assert result.hit_distribution == ((2, 0.35), (3, 0.35), (4, 0.15), (5, 0.15))
    assert result.hits == (3, pytest.approx(3.1))
    one = showdown_damage(CHOMP, TTAR, "scaleshot")
    assert list(result.rolls) == one["rolls"]
    assert result.min == 2 * min(one["rolls"]) and result.max == 5 * max(one["rolls"])
    linked = _calc(next(c for c in CASES if c.name == "skill link"))
    assert linked.hit_distribution == ((5, 1.0),)
    tail_slap = reference["skill link"]["rolls"]
    assert linked.max == 5 * max(tail_slap) and linked.min == 5 * min(tail_slap)


@pytest.mark.slow
def test_triple_axel_hits_grow(reference: dict[str, dict[str, Any]]) -> None:
    case = next(c for c in CASES if c.name == "triple axel third hit")
    result = _calc(case)
    assert len(result.hit_rolls) == 3
    assert max(result.hit_rolls[0]) < max(result.hit_rolls[1]) < max(result.hit_rolls[2])
    assert list(result.hit_rolls[2]) == reference[case.name]["rolls"]


@pytest.mark.slow
def test_ko_chance_from_showdown_rolls() -> None:
    dex = load_dex(9)
    answer = showdown_damage(CHOMP, TTAR, "earthquake")
    rolls, crits = answer["rolls"], answer["critRolls"]
    hp = rolls[8]  # a target HP in the middle of the roll range
    attacker, defender, fld = calculator_inputs(dex, CHOMP, TTAR, {"defender": {"hp": hp}})
    result = calculate(dex, attacker, defender, "earthquake", fld)
    crit = 1 / 24
    expected = (1 - crit) * sum(r >= hp for r in rolls) / 16 + crit * sum(
        r >= hp for r in crits
    ) / 16
    assert result.crit_chance == pytest.approx(crit)
    assert result.ko_chance(hp) == pytest.approx(expected)
    assert 0.0 < result.ko_chance(hp) < 1.0
    assert result.ko_chance(min(rolls)) == pytest.approx(1.0)
    assert result.ko_chance(max(crits) + 1) == 0.0
    # Two hits of a two-hit move: every pair of rolls.
    double = calculate(dex, attacker, defender, "dualwingbeat", fld)
    single = showdown_damage(CHOMP, TTAR, "dualwingbeat")
    target = 2 * single["rolls"][5]
    both = [a + b for a in single["rolls"] for b in single["rolls"]]
    no_crit = sum(s >= target for s in both) / 256
    assert double.hit_distribution == ((2, 1.0),)
    assert double.ko_chance(target) >= no_crit * (1 - crit) ** 2
    assert double.ko_chance(target) < 1.0


@pytest.mark.slow
def test_damage_over_prior() -> None:
    dex = load_dex(9)
    vest = mon("tyranitar", "assaultvest", "sandstream", nature="impish")
    answers = showdown_damage_many(
        [DamageRequest(PRIMARINA, TTAR, "moonblast"), DamageRequest(PRIMARINA, vest, "moonblast")]
    )
    attacker = Combatant.from_set(dex, PRIMARINA)
    candidates = [(Combatant.from_set(dex, TTAR, hp=200), 0.75),
                  (Combatant.from_set(dex, vest, hp=200), 0.25)]  # fmt: skip
    low, high, expected, ko = damage_over_prior(dex, attacker, candidates, "moonblast")
    plain, vested = answers[0], answers[1]
    assert low == min(vested["rolls"]) and high == max(plain["rolls"])
    crit = 1 / 24

    def mean(answer: dict[str, Any]) -> float:
        return (1 - crit) * sum(answer["rolls"]) / 16 + crit * sum(answer["critRolls"]) / 16

    def ko_of(answer: dict[str, Any]) -> float:
        return (1 - crit) * sum(r >= 200 for r in answer["rolls"]) / 16 + crit * sum(
            r >= 200 for r in answer["critRolls"]
        ) / 16

    assert expected == pytest.approx(0.75 * mean(plain) + 0.25 * mean(vested))
    assert ko == pytest.approx(0.75 * ko_of(plain) + 0.25 * ko_of(vested))
    assert ko > 0.0
    with pytest.raises(ValueError, match="positive weight"):
        damage_over_prior(dex, attacker, [(candidates[0][0], 0.0)], "moonblast")


@pytest.mark.slow
def test_immune_result(reference: dict[str, dict[str, Any]]) -> None:
    result = _calc(next(c for c in CASES if c.name == "type immunity"))
    assert reference["type immunity"]["immune"]
    assert result.immune and result.max == 0 and result.ko_chance(1) == 0.0


def test_status_move_does_no_damage() -> None:
    dex = load_dex(9)
    result = calculate(dex, Combatant.from_set(dex, CHOMP), Combatant.from_set(dex, TTAR),
                       "swordsdance")  # fmt: skip
    assert result.max == 0 and result.category == "Status"


def test_unknown_move_and_species_are_clear_errors() -> None:
    dex = load_dex(9)
    attacker, defender = Combatant.from_set(dex, CHOMP), Combatant.from_set(dex, TTAR)
    with pytest.raises(KeyError, match="no move 'notamove'"):
        calculate(dex, attacker, defender, "notamove")
    with pytest.raises(KeyError, match="no species 'xx'"):
        Combatant.from_set(dex, PokemonSet("xx"))
    with pytest.raises(ValueError, match="Unknown state keys"):
        calculator_inputs(dex, CHOMP, TTAR, {"attacker": {"hpp": 3}})
    with pytest.raises(KeyError, match="no move 'notamove'"):
        showdown_damage(CHOMP, TTAR, "notamove")
    with pytest.raises(KeyError, match="no species 'notamon'"):
        showdown_damage(CHOMP, PokemonSet("notamon"), "earthquake")


def test_cache_is_keyed_by_value() -> None:
    dex: Dex = load_dex(9)
    attacker, defender = Combatant.from_set(dex, CHOMP), Combatant.from_set(dex, TTAR)
    first = calculate(dex, attacker, defender, "earthquake", Field())
    defender.boosts = {"def": 2}
    second = calculate(dex, attacker, defender, "earthquake", Field())
    assert second.max < first.max
    assert calculate(dex, attacker, defender, "earthquake", Field()) == second
