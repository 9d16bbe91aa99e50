"""poke-engine's damage calculator beside ours (``pokegym bench calc --engine``): the
converter on a hand-built hit whose range the formula gives, the in-range rule on the
engine's two numbers, the names the engine does not know, the report and the command
line, and real battles (slow)."""

from __future__ import annotations

import dataclasses
import io
import sys

import pytest

from bench import calc as calc_bench
from bench.engine_damage import (
    EngineRolls,
    engine_rolls,
    engine_state,
    score_hits,
)
from bench.log_state import Hit, Tally
from pokegym.cli import main as cli_main
from pokegym.engine import require_engine
from pokegym.world.damage import Combatant, Field, Side, calculate
from pokegym.world.data import load_dex

# Garchomp's Earthquake (100 power, Ground STAB) on a Snorlax (Normal: neutral), level 100.
CHOMP = Combatant(
    species="garchomp", level=100, types=("Dragon", "Ground"), ability="roughskin",
    stats={"hp": 357, "atk": 359, "def": 226, "spa": 176, "spd": 206, "spe": 333},
)  # fmt: skip
LAX = Combatant(
    species="snorlax", level=100, types=("Normal",), ability="thickfat", item="leftovers",
    stats={"hp": 524, "atk": 350, "def": 166, "spa": 166, "spd": 350, "spe": 96},
)  # fmt: skip
# Base damage floor(floor(floor(2 * 100 / 5 + 2) * 100 * 359 / 166) / 50) + 2
# = floor(9083 / 50) + 2 = 183. Largest roll: STAB, floor(183 * 1.5) = 274; smallest:
# floor(183 * 0.85) = 155, then STAB, 232 (= 274 * 85 // 100). Critical hit: 183 * 1.5
# (STAB) * 1.5 = 411.75, so 411, and 411 * 85 // 100 = 349 at the bottom.
LOW, HIGH, CRIT_LOW, CRIT_HIGH = 232, 274, 349, 411


@pytest.fixture(scope="module")
def pe():
    return require_engine()


@pytest.fixture(scope="module")
def dex():
    return load_dex(9)


def _hit(
    dex, lost: int, *, crit: bool = False, censored: bool = False, fld: Field | None = None,
    attacker: Combatant = CHOMP, defender: Combatant = LAX, fmt: str = "gen9ou",
    move: str = "earthquake", hit_number: int = 1, hp_before: int | None = None,
    target_moved: bool = False,
) -> Hit:  # fmt: skip
    """A hit of ``move`` that took ``lost`` HP, with our prediction filled in."""
    fld = fld or Field()
    before = defender.current_hp if hp_before is None else hp_before
    hit = Hit(
        format_id=fmt, turn=1, move=move, attacker=attacker, defender=defender,
        field=fld, target_moved=target_moved, hit_number=hit_number, crit=crit,
        hp_before=before, hp_after=before - lost, censored=censored,
    )  # fmt: skip
    result = calculate(dex, attacker, defender, move, fld, target_moved=target_moved)
    table = (result.hit_crit_rolls if crit else result.hit_rolls) or (
        result.crit_rolls if crit else result.rolls,
    )
    rolls = table[min(hit_number, len(table)) - 1]
    hit.rolls, hit.low, hit.high = rolls, min(rolls), max(rolls)
    return hit


def _rolls(pe, dex, attacker: Combatant, defender: Combatant, fld: Field) -> EngineRolls:
    state = engine_state(pe, dex, attacker, defender, "earthquake", fld)
    return engine_rolls(pe, state, "earthquake", attacker_first=True)


# ------------------------------------------------------------------ the in-range rule
def test_the_engine_range_is_its_largest_roll_and_85_percent_of_it():
    rolls = EngineRolls(HIGH, CRIT_HIGH)
    assert rolls.range(crit=False) == (LOW, HIGH)
    assert rolls.range(crit=True) == (CRIT_LOW, CRIT_HIGH)
    assert EngineRolls(100, None).range(crit=True) == (100, 100)  # fixed damage


# ------------------------------------------------------------------ the converter
def test_a_neutral_stab_hit_gets_the_formula_range_from_both_calculators(pe, dex):
    assert _rolls(pe, dex, CHOMP, LAX, Field()) == EngineRolls(HIGH, CRIT_HIGH)
    ours = calculate(dex, CHOMP, LAX, "earthquake", Field())
    assert (min(ours.rolls), max(ours.rolls)) == (LOW, HIGH)
    assert max(ours.crit_rolls) == CRIT_HIGH

    tally = score_hits(pe, dex, [
        _hit(dex, LOW), _hit(dex, HIGH), _hit(dex, LOW - 1), _hit(dex, HIGH + 1),
        _hit(dex, 380, crit=True), _hit(dex, CRIT_LOW - 2, crit=True),
        _hit(dex, 200, censored=True), _hit(dex, HIGH + 1, censored=True),
    ])  # fmt: skip
    assert tally.given == 8 and not tally.not_given
    assert [p.in_range for p in tally.scored] == [True, True, False, False, True, False,
                                                  True, False]  # fmt: skip
    # Ours agrees on every one of these.
    assert [p.hit.in_range for p in tally.scored] == [p.in_range for p in tally.scored]
    assert [(p.low, p.high) for p in tally.scored[4:6]] == [(CRIT_LOW, CRIT_HIGH)] * 2
    # Where they differ: Showdown rolls before STAB, the engine takes 85 % of its largest
    # roll. The crit's smallest roll is floor(floor(274 * 0.85) * 1.5) = 348 for us, one
    # below the engine's 349.
    assert min(ours.crit_rolls) == CRIT_LOW - 1
    edge = score_hits(pe, dex, [_hit(dex, CRIT_LOW - 1, crit=True)]).scored[0]
    assert edge.hit.in_range and not edge.in_range


def test_boosts_screens_weather_tera_and_status_reach_the_engine(pe, dex):
    plain = _rolls(pe, dex, CHOMP, LAX, Field()).max_damage
    # +2 Attack: 718 Attack, base floor(floor(42 * 100 * 718 / 166) / 50) + 2 = 365; x1.5.
    boosted = dataclasses.replace(CHOMP, boosts={"atk": 2})
    assert _rolls(pe, dex, boosted, LAX, Field()).max_damage == 547
    # Reflect on the defender's side halves it (the attacker's own does nothing).
    assert _rolls(pe, dex, CHOMP, LAX, Field(defender_side=Side(reflect=True))).max_damage \
        == int(183 * 1.5 * 0.5)  # fmt: skip
    assert _rolls(pe, dex, CHOMP, LAX, Field(attacker_side=Side(reflect=True))).max_damage \
        == plain  # fmt: skip
    # A burn halves physical damage; -1 Defense raises it.
    assert _rolls(pe, dex, dataclasses.replace(CHOMP, status="brn"), LAX, Field()).max_damage \
        == int(183 * 1.5 * 0.5)  # fmt: skip
    assert _rolls(pe, dex, CHOMP, dataclasses.replace(LAX, boosts={"def": -1}),
                  Field()).max_damage > plain  # fmt: skip
    # Tera Ground on top of Ground STAB: x2 instead of x1.5.
    tera = dataclasses.replace(CHOMP, terastallized=True, tera_type="Ground",
                               original_types=("Dragon", "Ground"))  # fmt: skip
    assert _rolls(pe, dex, tera, LAX, Field()).max_damage == 183 * 2
    # A defender terastallized into Flying is immune to Ground.
    flying = dataclasses.replace(LAX, terastallized=True, tera_type="Flying")
    assert _rolls(pe, dex, CHOMP, flying, Field()).max_damage == 0
    # Sand does not change Earthquake; Grassy Terrain halves it.
    assert _rolls(pe, dex, CHOMP, LAX, Field(weather="sandstorm")).max_damage == plain
    assert _rolls(pe, dex, CHOMP, LAX, Field(terrain="grassyterrain")).max_damage \
        == int(183 * 1.5 * 0.5)  # fmt: skip


def test_the_engine_sees_the_defender_before_this_hit_and_a_switch_in(pe, dex):
    # Dragon Claw on a Multiscale Dragonite at full HP: halved. A second hit (Dragon Darts
    # here) finds it below full HP: not halved. The engine computes one hit, from the HP
    # before it.
    nite = Combatant(
        species="dragonite", level=100, types=("Dragon", "Flying"), ability="multiscale",
        stats={"hp": 386, "atk": 403, "def": 226, "spa": 212, "spd": 236, "spe": 259},
    )  # fmt: skip
    first = _hit(dex, 50, defender=nite, move="dragondarts")
    second = _hit(dex, 100, defender=nite, move="dragondarts", hit_number=2, hp_before=336)
    one, two = score_hits(pe, dex, [first, second]).scored
    assert two.high == two.hit.high == 204  # both calculators, nothing halved
    assert two.high > 1.8 * one.high  # the engine halves the power: 105, not 102
    # Stakeout doubles against a Pokémon that came in this turn; the engine reads that from
    # the defender's choice, a switch.
    staker = dataclasses.replace(CHOMP, ability="stakeout")
    came_in = dataclasses.replace(LAX, just_switched_in=True)
    stayed, switched = score_hits(pe, dex, [
        _hit(dex, 250, attacker=staker), _hit(dex, 500, attacker=staker, defender=came_in,
                                              target_moved=True),
    ]).scored  # fmt: skip
    # 200 power: floor(floor(42 * 200 * 359 / 166) / 50) + 2 = 365, x1.5 STAB.
    assert stayed.high == HIGH and switched.high == switched.hit.high == 547
    assert stayed.in_range and switched.in_range and switched.hit.in_range


def test_names_the_engine_does_not_know_are_counted(pe, dex):
    # Light Clay is unknown to the engine and changes no damage: the hit is given.
    clay = _hit(dex, 250, defender=dataclasses.replace(LAX, item="lightclay"))
    # Scope Lens is unknown to the engine and changes critical hits: the hit is not given.
    lens = _hit(dex, 250, attacker=dataclasses.replace(CHOMP, item="scopelens"))
    gen8 = _hit(dex, 250, fmt="gen8randombattle")
    tally = score_hits(pe, dex, [clay, lens, gen8])
    assert [p.hit for p in tally.scored] == [clay]
    assert tally.given_unknown == {"item lightclay": 1}
    assert tally.not_given == {
        "unknown to the engine: item scopelens": 1,
        "not generation 9 (the engine is built for it)": 1,
    }
    assert tally.not_given_example["unknown to the engine: item scopelens"] is lens


# ------------------------------------------------------------------ the report
def test_the_report_puts_the_engine_beside_ours(pe, dex):
    tally = Tally(battles=1)
    tally.formats["gen9ou"] += 1
    # One hit inside both ranges, one 5 HP below both smallest rolls (232 for each).
    tally.hits = [_hit(dex, 250), _hit(dex, LOW - 5)]
    out = io.StringIO()
    final = calc_bench.report(tally, out=out)
    assert final == "calc_in_range=0.500 hits=2 battles=1"
    engine = score_hits(pe, dex, tally.hits)
    out = io.StringIO()
    final = calc_bench.report(tally, out=out, engine=engine)
    assert final == "calc_in_range=0.500 hits=2 battles=1 engine_in_range=0.500 engine_hits=2"
    text = out.getvalue()
    assert "both in range 1, only ours 0, only the engine 0, neither 1" in text
    assert text.rstrip().endswith(final)


def test_engine_without_the_engine_is_one_line_and_status_2(monkeypatch, capsys):
    for name in [n for n in sys.modules if n == "poke_engine" or n.startswith("poke_engine.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "poke_engine", None)  # import poke_engine fails
    assert cli_main(["bench", "calc", "--engine", "--battles", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pokegym: error: ") and "pokegym engine build" in err
    assert err.count("\n") == 1


# ------------------------------------------------------------------ real battles
@pytest.mark.slow
def test_engine_on_real_battles_counts_add_up(capsys):
    assert calc_bench.main(["--battles", "4", "--engine", "--no-progress", "--seed", "3"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    figures = dict(item.split("=") for item in lines[-1].split())
    hits, given = int(figures["hits"]), int(figures["engine_hits"])
    assert hits > 40 and float(figures["calc_in_range"]) >= 0.95
    assert float(figures["engine_in_range"]) >= 0.9
    header = next(line for line in lines if line.startswith("poke-engine beside"))
    assert header.startswith(f"poke-engine beside the calculator: {given} of {hits} hits")
    not_given = next(line for line in lines if line.startswith("hits not given to the engine"))
    assert given + int(not_given.split(": ")[1]) == hits
    split = next(line for line in lines if line.strip().startswith("both in range"))
    counts = [int(part.split()[-1]) for part in split.strip().split(", ")]
    assert sum(counts) == given
    in_range = next(line for line in lines if line.strip().startswith("in range "))
    ours, engine = (float(x) for x in in_range.split()[2:4])
    assert round(ours * given) == counts[0] + counts[1]  # both + only ours
    assert round(engine * given) == counts[0] + counts[2]  # both + only the engine
