"""Moves and abilities with rules of their own, against Showdown's own numbers.

Each question goes to :func:`pokegym.world.damage.calculate` and to Showdown's simulator
(the bridge's ``damage`` command: Showdown's ``getDamage`` per roll, after the move's own
Try / PrepareHit / TryImmunity checks; ``priorHits`` plays the earlier hits of a multi-hit
move for real, ``chargeTurn`` runs a charging move's first turn, ``damageEvent`` passes
each roll through the target's Damage event). All questions are asked in one batch.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pokegym.world.damage import Combatant, DamageResult, calculate
from pokegym.world.data import load_dex
from pokegym.world.sets import PokemonSet
from pokegym.world.showdown_reference import (
    DamageRequest,
    calculator_inputs,
    showdown_damage_many,
)

PHYSICAL = (0, 252, 0, 0, 4, 252)
SPECIAL = (0, 0, 0, 252, 4, 252)
BULKY = (252, 0, 252, 0, 4, 0)


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
        species=species,
        level=level,
        item=item,
        ability=ability,
        moves=("tackle",),
        nature=nature,
        evs=evs,
        tera_type=tera,
    )


def phys(species: str, item: str = "", ability: str = "", **kw: Any) -> PokemonSet:
    return mon(species, item, ability, nature="adamant", evs=PHYSICAL, **kw)


def spec(species: str, item: str = "", ability: str = "", **kw: Any) -> PokemonSet:
    return mon(species, item, ability, nature="modest", evs=SPECIAL, **kw)


TTAR = mon("tyranitar", "", "sandstream", nature="impish")
CLEFABLE = mon("clefable", "", "magicguard", nature="bold")
CHOMP = phys("garchomp", "", "roughskin")
KINGAMBIT = phys("kingambit", "", "pressure")
MIMIKYU = mon("mimikyu", "", "disguise", nature="jolly")
EISCUE = mon("eiscue", "", "iceface", nature="impish")


def ask(
    attacker: PokemonSet,
    defender: PokemonSet,
    move: str,
    options: dict[str, Any] | None = None,
    gen: int = 9,
) -> DamageRequest:
    return DamageRequest(attacker, defender, move, gen, options or {})


# Every question of this module, by name; answered in one batch by the fixture below.
QUESTIONS: dict[str, DamageRequest] = {
    # Fling: the power is the held item's (Life Orb still boosts it: the item leaves after)
    "fling iron ball": ask(phys("kingambit", "ironball", "pressure"), CLEFABLE, "fling"),
    "fling life orb": ask(phys("kingambit", "lifeorb", "pressure"), TTAR, "fling"),
    "fling no item": ask(KINGAMBIT, CLEFABLE, "fling"),
    "fling klutz": ask(phys("lopunny", "ironball", "klutz"), CLEFABLE, "fling"),
    "fling a mask": ask(
        phys("ogerponwellspring", "wellspringmask", "waterabsorb"), CLEFABLE, "fling"
    ),
    # Moves that always crit
    "frost breath": ask(spec("glaceon", "", "icebody"), CHOMP, "frostbreath"),
    "storm throw": ask(phys("throh", "", "moldbreaker"), TTAR, "stormthrow"),
    "wicked blow": ask(phys("urshifu", "", "unseenfist"), CLEFABLE, "wickedblow"),
    "flower trick": ask(
        phys("meowscarada", "", "protean"), mon("quagsire", "", "unaware"), "flowertrick"
    ),
    "surging strikes": ask(phys("urshifurapidstrike", "", "unseenfist"), TTAR, "surgingstrikes"),
    "frost breath on shell armor": ask(
        spec("glaceon", "", "icebody"), mon("lapras", "", "shellarmor"), "frostbreath"
    ),
    "wicked blow on battle armor": ask(
        phys("urshifu", "", "unseenfist"), mon("kabutops", "", "battlearmor"), "wickedblow"
    ),
    # Dream Eater needs a sleeping target
    "dream eater awake": ask(spec("gengar", "", "cursedbody"), CLEFABLE, "dreameater"),
    "dream eater asleep": ask(
        spec("gengar", "", "cursedbody"), CLEFABLE, "dreameater", {"defender": {"status": "slp"}}
    ),
    "dream eater comatose": ask(
        spec("gengar", "", "cursedbody"), mon("komala", "", "comatose"), "dreameater"
    ),
    # Steel Roller needs a terrain
    "steel roller": ask(phys("copperajah", "", "heavymetal"), CLEFABLE, "steelroller"),
    "steel roller in terrain": ask(
        phys("copperajah", "", "heavymetal"),
        CLEFABLE,
        "steelroller",
        {"terrain": "psychicterrain"},
    ),
    # OHKO moves
    "sheer cold on ice": ask(
        mon("lapras", "", "waterabsorb"), mon("baxcalibur", "", "thermalexchange"), "sheercold"
    ),
    "sheer cold gen 8 on ice": ask(
        mon("lapras", "", "waterabsorb"), mon("glaceon", "", "icebody"), "sheercold", gen=8
    ),
    "sheer cold": ask(mon("lapras", "", "waterabsorb"), TTAR, "sheercold"),
    "guillotine on a higher level": ask(
        phys("kingler", "", "hypercutter", level=80), TTAR, "guillotine"
    ),
    "guillotine on sturdy": ask(
        phys("kingler", "", "hypercutter"), mon("skarmory", "", "sturdy"), "guillotine"
    ),
    "guillotine on a focus sash": ask(
        phys("kingler", "", "hypercutter"),
        mon("tyranitar", "focussash", "sandstream"),
        "guillotine",
        {"damageEvent": True},
    ),
    # Defences that change between the hits of a multi-hit move
    **{
        f"weak armor hit {n}": ask(
            phys("cinccino", "", "skilllink"),
            mon("skarmory", "", "weakarmor", nature="impish"),
            "tailslap",
            {"hit": n, "priorHits": True},
        )
        for n in (1, 2, 3, 4, 5)
    },
    **{
        f"stamina hit {n}": ask(
            phys("cinccino", "", "skilllink"),
            mon("mudsdale", "", "stamina"),
            "tailslap",
            {"hit": n, "priorHits": True},
        )
        for n in (1, 2, 5)
    },
    **{
        f"water compaction hit {n}": ask(
            phys("palafin", "", "zerotohero"),
            mon("palossand", "", "watercompaction"),
            "tripledive",
            {"hit": n, "priorHits": True},
        )
        for n in (1, 2, 3)
    },
    **{
        f"seed sower hit {n}": ask(
            phys("breloom", "", "poisonheal"),
            mon("arboliva", "", "seedsower"),
            "bulletseed",
            {"hit": n, "priorHits": True},
        )
        for n in (1, 2)
    },
    "weak armor white herb hit 3": ask(
        phys("cinccino", "", "skilllink"),
        mon("skarmory", "whiteherb", "weakarmor"),
        "tailslap",
        {"hit": 3, "priorHits": True},
    ),
    # Charging moves that raise Special Attack first
    "meteor beam": ask(
        spec("gengar", "", "cursedbody"), CLEFABLE, "meteorbeam", {"chargeTurn": True}
    ),
    "meteor beam no charge": ask(spec("gengar", "", "cursedbody"), CLEFABLE, "meteorbeam"),
    "meteor beam simple": ask(
        spec("swoobat", "", "simple"), CLEFABLE, "meteorbeam", {"chargeTurn": True}
    ),
    "electro shot": ask(
        spec("archaludon", "", "stamina"), CLEFABLE, "electroshot", {"chargeTurn": True}
    ),
    "electro shot in rain": ask(
        spec("archaludon", "", "stamina"),
        CLEFABLE,
        "electroshot",
        {"chargeTurn": True, "weather": "raindance"},
    ),
    "electro shot no charge": ask(spec("archaludon", "", "stamina"), CLEFABLE, "electroshot"),
    # Protean / Libero
    "protean": ask(spec("greninja", "", "protean"), CLEFABLE, "icebeam"),
    "protean control": ask(spec("greninja", "", "torrent"), CLEFABLE, "icebeam"),
    "libero": ask(phys("cinderace", "", "libero"), CLEFABLE, "gunkshot"),
    "libero gen 8": ask(phys("cinderace", "", "libero"), CLEFABLE, "gunkshot", gen=8),
    "protean terastallized": ask(
        spec("greninja", "", "protean", tera="Water"),
        CLEFABLE,
        "icebeam",
        {"attacker": {"tera": True}},
    ),
    # Disguise and Ice Face
    "disguise": ask(CHOMP, MIMIKYU, "earthquake", {"damageEvent": True}),
    "disguise broken": ask(
        CHOMP,
        mon("mimikyubusted", "", "disguise", nature="jolly"),
        "earthquake",
        {"defender": {"hp": 275}},
    ),
    "disguise triple axel hit 1": ask(
        phys("weavile", "", "pressure"), MIMIKYU, "tripleaxel", {"damageEvent": True}
    ),
    "disguise triple axel hit 2": ask(
        phys("weavile", "", "pressure"), MIMIKYU, "tripleaxel", {"hit": 2, "priorHits": True}
    ),
    "disguise triple axel hit 3": ask(
        phys("weavile", "", "pressure"), MIMIKYU, "tripleaxel", {"hit": 3, "priorHits": True}
    ),
    "disguise ruination": ask(
        spec("tinglu", "", "vesselofruin"), MIMIKYU, "ruination", {"damageEvent": True}
    ),
    "disguise mold breaker": ask(phys("excadrill", "", "moldbreaker"), MIMIKYU, "ironhead"),
    "ice face": ask(CHOMP, EISCUE, "earthquake", {"damageEvent": True}),
    "ice face broken": ask(CHOMP, mon("eiscuenoice", "", "iceface", nature="impish"), "earthquake"),
    "ice face special": ask(
        spec("volcarona", "", "flamebody"), EISCUE, "fireblast", {"damageEvent": True}
    ),
    # Fixed damage
    "nature's madness": ask(
        spec("tapulele", "", "psychicsurge"),
        TTAR,
        "naturesmadness",
        {"defender": {"hp": 301}},
        gen=8,
    ),
    "nature's madness at 1 hp": ask(
        spec("tapulele", "", "psychicsurge"), TTAR, "naturesmadness", {"defender": {"hp": 1}}, gen=8
    ),
    "ruination": ask(
        spec("tinglu", "", "vesselofruin"), CLEFABLE, "ruination", {"defender": {"hp": 333}}
    ),
    "super fang at 1 hp": ask(
        phys("rattataalola", "", "hustle"), TTAR, "superfang", {"defender": {"hp": 1}}
    ),
    "endeavor": ask(
        phys("rattataalola", "", "hustle"),
        TTAR,
        "endeavor",
        {"attacker": {"hp": 20}, "defender": {"hp": 300}},
    ),
    "endeavor at more hp": ask(
        phys("rattataalola", "", "hustle"),
        TTAR,
        "endeavor",
        {"attacker": {"hp": 200}, "defender": {"hp": 150}},
    ),
    "final gambit on a focus sash": ask(
        mon("blissey", "", "naturalcure"),
        mon("tyranitar", "focussash", "sandstream"),
        "finalgambit",
        {"damageEvent": True},
    ),
    "round": ask(spec("primarina", "", "liquidvoice"), TTAR, "round"),
    "round control": ask(spec("primarina", "", "torrent"), TTAR, "round"),
}


@pytest.fixture(scope="module")
def showdown() -> dict[str, dict[str, Any]]:
    answers = showdown_damage_many(list(QUESTIONS.values()))
    return dict(zip(QUESTIONS, answers, strict=True))


def calc(name: str, *, crit: bool | None = None, **attacker_state: Any) -> DamageResult:
    request = QUESTIONS[name]
    dex = load_dex(request.gen)
    attacker, defender, fld = calculator_inputs(
        dex, request.attacker, request.defender, request.options
    )
    if attacker_state:
        attacker = dataclasses.replace(attacker, **attacker_state)
    return calculate(dex, attacker, defender, request.move, fld, crit=crit, use_cache=False)


def rolls(answer: dict[str, Any]) -> list[int]:
    return [r or 0 for r in answer["rolls"]]


def crit_rolls(answer: dict[str, Any]) -> list[int]:
    return [r or 0 for r in answer["critRolls"]]


def hit_rolls(result: DamageResult, hit: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if hit == 1 or not result.hit_rolls:
        return result.rolls, result.crit_rolls
    return result.hit_rolls[hit - 1], result.hit_crit_rolls[hit - 1]


def assert_no_damage(result: DamageResult, answer: dict[str, Any]) -> None:
    assert answer["immune"] and answer["fail"], "Showdown lets this move hit"
    assert result.max == 0 and result.min == 0 and result.expected == 0
    assert not any(result.rolls) and not any(result.crit_rolls)
    assert result.ko_chance(1) == 0.0


# ------------------------------------------------------------------ Fling
@pytest.mark.slow
@pytest.mark.parametrize("name", ["fling iron ball", "fling life orb"])
def test_fling_power_comes_from_the_held_item(
    name: str, showdown: dict[str, dict[str, Any]]
) -> None:
    answer = showdown[name]
    result = calc(name)
    assert max(rolls(answer)) > 0
    assert list(result.rolls) == rolls(answer)
    assert list(result.crit_rolls) == crit_rolls(answer)
    assert not result.approximate, result.notes


@pytest.mark.slow
@pytest.mark.parametrize("name", ["fling no item", "fling klutz", "fling a mask"])
def test_fling_fails_without_an_item_it_can_throw(
    name: str, showdown: dict[str, dict[str, Any]]
) -> None:
    assert_no_damage(calc(name), showdown[name])


# ------------------------------------------------------------------ always-critical moves
@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["frost breath", "storm throw", "wicked blow", "flower trick", "surging strikes"]
)
@pytest.mark.parametrize("crit", [None, False])
def test_moves_that_always_crit(
    name: str, crit: bool | None, showdown: dict[str, dict[str, Any]]
) -> None:
    answer = showdown[name]
    expected = crit_rolls(answer)
    assert expected != rolls(answer), "Showdown's crit must matter here"
    result = calc(name, crit=crit)
    hits = 3 if name == "surging strikes" else 1
    assert list(result.rolls) == expected and list(result.crit_rolls) == expected
    assert result.min == hits * min(expected) and result.max == hits * max(expected)
    assert result.expected == pytest.approx(hits * sum(expected) / 16)
    assert result.crit_chance == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["frost breath on shell armor", "wicked blow on battle armor"])
def test_an_ability_that_prevents_crits_stops_an_always_critical_move(
    name: str, showdown: dict[str, dict[str, Any]]
) -> None:
    answer = showdown[name]
    assert crit_rolls(answer) == rolls(answer)
    result = calc(name)
    assert list(result.rolls) == rolls(answer) and list(result.crit_rolls) == rolls(answer)
    assert result.crit_chance == 0.0


# ------------------------------------------------------------------ moves that can fail
@pytest.mark.slow
def test_dream_eater_fails_on_a_target_that_is_awake(showdown: dict[str, dict[str, Any]]) -> None:
    assert_no_damage(calc("dream eater awake"), showdown["dream eater awake"])
    for name in ("dream eater asleep", "dream eater comatose"):
        answer, result = showdown[name], calc(name)
        assert max(rolls(answer)) > 0
        assert list(result.rolls) == rolls(answer), name
        assert list(result.crit_rolls) == crit_rolls(answer), name
        assert not result.approximate, result.notes


@pytest.mark.slow
def test_steel_roller_fails_without_a_terrain(showdown: dict[str, dict[str, Any]]) -> None:
    assert_no_damage(calc("steel roller"), showdown["steel roller"])
    answer, result = showdown["steel roller in terrain"], calc("steel roller in terrain")
    assert max(rolls(answer)) > 0
    assert list(result.rolls) == rolls(answer)


# ------------------------------------------------------------------ OHKO moves
@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "sheer cold on ice",
        "sheer cold gen 8 on ice",
        "guillotine on a higher level",
        "guillotine on sturdy",
    ],
)
def test_ohko_moves_fail(name: str, showdown: dict[str, dict[str, Any]]) -> None:
    assert_no_damage(calc(name), showdown[name])


@pytest.mark.slow
def test_ohko_moves_hit_for_the_target_max_hp(showdown: dict[str, dict[str, Any]]) -> None:
    answer, result = showdown["sheer cold"], calc("sheer cold")
    assert list(result.rolls) == rolls(answer) == [404] * 16
    assert result.ko_chance(404) == 1.0


@pytest.mark.slow
def test_a_focus_sash_survives_fixed_damage(showdown: dict[str, dict[str, Any]]) -> None:
    # Showdown's Damage event leaves the target at 1 HP.
    for name, hp in (("guillotine on a focus sash", 404), ("final gambit on a focus sash", 404)):
        answer, result = showdown[name], calc(name)
        assert rolls(answer) == [hp - 1] * 16, name
        assert result.blocks_ohko_at == hp, name
        assert result.ko_chance(hp) == 0.0, name


# ------------------------------------------------------------------ between the hits
@pytest.mark.slow
@pytest.mark.parametrize(
    ("prefix", "hits"), [("weak armor", 5), ("stamina", 5), ("water compaction", 3)]
)
def test_defence_changes_between_the_hits_of_a_multi_hit_move(
    prefix: str, hits: int, showdown: dict[str, dict[str, Any]]
) -> None:
    asked = [int(n.rsplit(" ", 1)[1]) for n in QUESTIONS if n.startswith(f"{prefix} hit ")]
    result = calc(f"{prefix} hit 1")
    assert len(result.hit_rolls) == hits
    assert rolls(showdown[f"{prefix} hit 1"]) != rolls(showdown[f"{prefix} hit {asked[-1]}"])
    for n in asked:
        answer = showdown[f"{prefix} hit {n}"]
        normal, critical = hit_rolls(result, n)
        assert list(normal) == rolls(answer), f"{prefix}: hit {n}"
        assert list(critical) == crit_rolls(answer), f"{prefix}: hit {n} (crit)"
    assert result.max == sum(max(hit_rolls(result, n)[0]) for n in range(1, hits + 1))


@pytest.mark.slow
def test_white_herb_waits_until_the_move_ends(showdown: dict[str, dict[str, Any]]) -> None:
    # White Herb restores lowered stats after the whole move, not between its hits.
    answer = showdown["weak armor white herb hit 3"]
    assert answer["defender"]["boosts"]["def"] == -2
    result = calc("weak armor white herb hit 3")
    assert list(hit_rolls(result, 3)[0]) == rolls(answer)


@pytest.mark.slow
def test_effects_between_hits_that_are_not_modelled_are_flagged(
    showdown: dict[str, dict[str, Any]],
) -> None:
    # Seed Sower sets Grassy Terrain after the first hit: Showdown's later hits grow.
    assert rolls(showdown["seed sower hit 2"]) != rolls(showdown["seed sower hit 1"])
    result = calc("seed sower hit 1")
    assert result.approximate and "between hits: seedsower" in result.notes
    dex = load_dex(9)
    request = QUESTIONS["seed sower hit 1"]
    attacker, defender, _ = calculator_inputs(dex, request.attacker, request.defender)
    single = calculate(dex, attacker, defender, "seedbomb", use_cache=False)
    assert not single.approximate, single.notes


# ------------------------------------------------------------------ charging moves
@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "control"),
    [
        ("meteor beam", "meteor beam no charge"),
        ("electro shot", "electro shot no charge"),
        ("electro shot in rain", None),
        ("meteor beam simple", None),
    ],
)
def test_the_charge_turn_raises_special_attack_before_the_hit(
    name: str, control: str | None, showdown: dict[str, dict[str, Any]]
) -> None:
    answer = showdown[name]
    if control is not None:
        assert rolls(answer) != rolls(showdown[control])
    result = calc(name)
    assert list(result.rolls) == rolls(answer)
    assert list(result.crit_rolls) == crit_rolls(answer)
    # After the charging turn the boost is in the attacker's boosts already.
    request = QUESTIONS[name]
    stage = 2 if request.attacker.ability == "simple" else 1
    charged = calc(name, boosts={"spa": stage}, volatiles=frozenset({request.move}))
    assert list(charged.rolls) == rolls(answer)


# ------------------------------------------------------------------ Protean / Libero
@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "control"),
    [
        ("protean", "protean control"),
        ("libero", "protean control"),
        ("libero gen 8", None),
        ("protean terastallized", None),
    ],
)
def test_protean_changes_type_before_the_hit(
    name: str, control: str | None, showdown: dict[str, dict[str, Any]]
) -> None:
    answer, result = showdown[name], calc(name)
    assert list(result.rolls) == rolls(answer)
    assert list(result.crit_rolls) == crit_rolls(answer)
    assert not result.approximate, result.notes
    if control == "protean control":
        assert rolls(showdown["protean"]) != rolls(showdown["protean control"])


@pytest.mark.slow
def test_protean_only_once_per_switch_in_from_gen_9(showdown: dict[str, dict[str, Any]]) -> None:
    spent = calc("protean", protean_used=True)
    assert list(spent.rolls) == rolls(showdown["protean control"])


# ------------------------------------------------------------------ Disguise / Ice Face
@pytest.mark.slow
def test_disguise_blocks_the_first_hit_and_reports_the_broken_form(
    showdown: dict[str, dict[str, Any]],
) -> None:
    result = calc("disguise")
    assert rolls(showdown["disguise"]) == [0] * 16  # Showdown's Damage event
    assert result.rolls == (0,) * 16 and result.crit_rolls == (0,) * 16
    # The form breaks and Mimikyu loses 1/8 of its max HP (Showdown: hp after the break).
    after = showdown["disguise triple axel hit 2"]["defender"]
    assert after["species"] == "mimikyubusted"
    assert result.form_break_hp == after["maxhp"] - after["hp"] == 314 // 8
    assert result.min == result.max == result.expected == 314 // 8
    assert result.ko_chance(314 // 8) == 1.0 and result.ko_chance(314 // 8 + 1) == 0.0
    assert not result.approximate, result.notes
    broken = result.broken_form
    assert broken is not None and broken.broken_form is None
    assert list(broken.rolls) == rolls(showdown["disguise broken"])
    assert list(broken.crit_rolls) == crit_rolls(showdown["disguise broken"])
    assert max(broken.rolls) > 0


@pytest.mark.slow
def test_disguise_on_a_multi_hit_move(showdown: dict[str, dict[str, Any]]) -> None:
    result = calc("disguise triple axel hit 1")
    assert rolls(showdown["disguise triple axel hit 1"]) == [0] * 16
    assert hit_rolls(result, 1) == ((0,) * 16, (0,) * 16)
    for n in (2, 3):
        answer = showdown[f"disguise triple axel hit {n}"]
        normal, critical = hit_rolls(result, n)
        assert list(normal) == rolls(answer), f"hit {n}"
        assert list(critical) == crit_rolls(answer), f"hit {n} (crit)"
    assert result.form_break_hp == 314 // 8


@pytest.mark.slow
def test_disguise_blocks_fixed_damage_and_mold_breaker_ignores_it(
    showdown: dict[str, dict[str, Any]],
) -> None:
    ruination = calc("disguise ruination")
    answer = showdown["disguise ruination"]
    assert not answer["immune"] and rolls(answer) == [0] * 16
    assert ruination.rolls == (0,) * 16 and ruination.form_break_hp == 314 // 8
    assert ruination.broken_form is not None
    assert ruination.broken_form.max == (314 - 314 // 8) // 2  # half of what is left
    breaker = calc("disguise mold breaker")
    assert list(breaker.rolls) == rolls(showdown["disguise mold breaker"])
    assert breaker.broken_form is None and breaker.form_break_hp == 0


@pytest.mark.slow
def test_ice_face_blocks_physical_hits_and_reports_the_noice_form(
    showdown: dict[str, dict[str, Any]],
) -> None:
    result = calc("ice face")
    assert rolls(showdown["ice face"]) == [0] * 16
    assert result.max == 0 and result.form_break_hp == 0
    assert result.broken_form is not None
    assert list(result.broken_form.rolls) == rolls(showdown["ice face broken"])
    assert not result.broken_form.approximate, result.broken_form.notes
    special = calc("ice face special")
    assert special.broken_form is None
    assert list(special.rolls) == rolls(showdown["ice face special"])


def test_ice_face_without_the_set_estimates_the_noice_stats() -> None:
    dex = load_dex(9)
    attacker = Combatant.from_set(dex, CHOMP)
    eiscue = Combatant.from_set(dex, EISCUE)
    bare = dataclasses.replace(eiscue, broken_form_stats=None)
    exact = calculate(dex, attacker, eiscue, "earthquake", use_cache=False).broken_form
    estimate = calculate(dex, attacker, bare, "earthquake", use_cache=False).broken_form
    assert exact is not None and estimate is not None
    assert estimate.approximate and any("eiscue" in note for note in estimate.notes)
    assert abs(max(estimate.rolls) - max(exact.rolls)) <= max(exact.rolls) // 10


# ------------------------------------------------------------------ fixed damage and Round
@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "nature's madness",
        "nature's madness at 1 hp",
        "ruination",
        "super fang at 1 hp",
        "endeavor",
        "round",
    ],
)
def test_fixed_damage_and_round(name: str, showdown: dict[str, dict[str, Any]]) -> None:
    answer, result = showdown[name], calc(name)
    assert max(rolls(answer)) > 0
    assert list(result.rolls) == rolls(answer)
    assert list(result.crit_rolls) == crit_rolls(answer)
    assert not result.approximate, result.notes
    if name == "round":
        assert rolls(answer) != rolls(showdown["round control"])  # Liquid Voice: Water


@pytest.mark.slow
def test_endeavor_fails_when_the_user_has_more_hp(showdown: dict[str, dict[str, Any]]) -> None:
    assert_no_damage(calc("endeavor at more hp"), showdown["endeavor at more hp"])
