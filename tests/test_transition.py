"""The transition model: hazards, residuals, priority, pivots, faints, on hand-built states,
and its fidelity against Showdown's simulator on real battles."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pokegym.world.data import load_dex
from pokegym.world.sets import compute_stats
from pokegym.world.speed import action_speed, effective_speed
from pokegym.world.state import BattleState, MonState, SideState
from pokegym.world.transition import TransitionModel
from policies.core.lookahead import one_step_lookahead


@pytest.fixture(scope="module")
def dex():
    return load_dex(9)


@pytest.fixture(scope="module")
def model(dex):
    return TransitionModel(dex)


def make_mon(dex, species, moves=("tackle",), *, item="", ability="", level=100, evs=None,
             nature="", tera="", hp_fraction=1.0, status=""):  # fmt: skip
    entry = dex.species_entry(species)
    raw = compute_stats(dex, species, level, evs or (84,) * 6, (31,) * 6, nature)
    stats = (raw["hp"], raw["atk"], raw["def"], raw["spa"], raw["spd"], raw["spe"])
    return MonState(
        species=species, level=level, types=tuple(entry["types"]), stats=stats,
        hp=stats[0] * hp_fraction, moves=tuple(moves), item=item,
        ability=ability or next(iter(entry["abilities"].values())).lower().replace(" ", ""),
        status=status, status_turns=1 if status == "tox" else 0, tera_type=tera,
        weight=float(entry.get("weightkg", 100.0)),
    )  # fmt: skip


def make_state(ours, theirs, **field):
    return BattleState(sides=[SideState(mons=list(ours)), SideState(mons=list(theirs))], **field)


STAY = ("move", "splash", False)


# ------------------------------------------------------------------ hazards
def test_stealth_rock_on_switch_in_scales_with_rock_effectiveness(dex, model):
    blissey = make_mon(dex, "blissey", ("splash",))
    charizard = make_mon(dex, "charizard", ("splash",))  # Fire/Flying: 4x weak to Rock
    boots = make_mon(dex, "volcarona", ("splash",), item="heavydutyboots")
    excadrill = make_mon(dex, "excadrill", ("splash",), ability="sandrush")  # resists Rock 4x
    state = make_state(
        [blissey, charizard, boots, excadrill], [make_mon(dex, "snorlax", ("splash",))]
    )
    state.sides[0].stealth_rock = True
    after = model.step(state, ("switch", 1, False), STAY)
    assert after.sides[0].active == 1
    assert after.sides[0].active_mon.hp_fraction == pytest.approx(0.5)
    after = model.step(state, ("switch", 2, False), STAY)
    assert after.sides[0].active_mon.hp_fraction == pytest.approx(1.0)
    after = model.step(state, ("switch", 3, False), STAY)
    assert after.sides[0].active_mon.hp_fraction == pytest.approx(1 - 1 / 32)
    assert state.sides[0].active == 0, "step must not change the state it was given"


def test_spikes_layers_and_flying_immunity(dex, model):
    team = [make_mon(dex, "blissey", ("splash",)), make_mon(dex, "garchomp", ("splash",)),
            make_mon(dex, "corviknight", ("splash",))]  # fmt: skip
    state = make_state(team, [make_mon(dex, "snorlax", ("splash",))])
    for layers, share in ((1, 1 / 8), (2, 1 / 6), (3, 1 / 4)):
        state.sides[0].spikes = layers
        grounded = model.step(state, ("switch", 1, False), STAY).sides[0].active_mon
        assert grounded.hp_fraction == pytest.approx(1 - share)
        flying = model.step(state, ("switch", 2, False), STAY).sides[0].active_mon
        assert flying.hp_fraction == pytest.approx(1.0)


def test_toxic_spikes_poison_and_are_absorbed_by_poison_types(dex, model):
    team = [make_mon(dex, "blissey", ("splash",)), make_mon(dex, "garchomp", ("splash",)),
            make_mon(dex, "toxapex", ("splash",))]  # fmt: skip
    state = make_state(team, [make_mon(dex, "snorlax", ("splash",))])
    state.sides[0].toxic_spikes = 2
    after = model.step(state, ("switch", 1, False), STAY)
    assert after.sides[0].active_mon.status == "tox"
    after = model.step(state, ("switch", 2, False), STAY)
    assert after.sides[0].active_mon.status == ""
    assert after.sides[0].toxic_spikes == 0


def test_setting_and_removing_hazards(dex, model):
    ours = make_mon(dex, "garchomp", ("stealthrock", "spikes"))
    theirs = make_mon(dex, "cinccino", ("tidyup",), ability="technician")
    state = make_state([ours], [theirs])
    after = model.step(state, ("move", "stealthrock", False), STAY)
    assert after.sides[1].stealth_rock and not after.sides[0].stealth_rock
    after = model.step(after, ("move", "spikes", False), STAY)
    assert after.sides[1].spikes == 1
    cleared = model.step(after, ("move", "spikes", False), ("move", "tidyup", False))
    # Cinccino is faster: Tidy Up clears first, then Garchomp's Spikes lays one layer again.
    assert not cleared.sides[1].stealth_rock and cleared.sides[1].spikes == 1


# ---------------------------------------------------------------- residuals
def test_end_of_turn_residuals(dex, model):
    lefties = make_mon(dex, "snorlax", ("splash",), item="leftovers", hp_fraction=0.5)
    burned = make_mon(dex, "garchomp", ("splash",), status="brn")
    state = make_state([lefties], [burned])
    after = model.step(state, STAY, STAY)
    assert after.sides[0].active_mon.hp_fraction == pytest.approx(0.5 + 1 / 16, abs=1e-3)
    assert after.sides[1].active_mon.hp_fraction == pytest.approx(1 - 1 / 16, abs=1e-3)


def test_toxic_damage_grows_each_turn(dex, model):
    victim = make_mon(dex, "blissey", ("splash",), status="tox")
    state = make_state([victim], [make_mon(dex, "snorlax", ("splash",))])
    one = model.step(state, STAY, STAY)
    two = model.step(one, STAY, STAY)
    assert one.sides[0].active_mon.hp_fraction == pytest.approx(1 - 1 / 16, abs=1e-3)
    assert two.sides[0].active_mon.hp_fraction == pytest.approx(1 - 3 / 16, abs=1e-3)


def test_sandstorm_chips_all_but_rock_ground_steel_and_runs_out(dex, model):
    state = make_state([make_mon(dex, "blissey", ("splash",))],
                       [make_mon(dex, "tyranitar", ("splash",))], weather="sandstorm",
                       weather_turns=1)  # fmt: skip
    after = model.step(state, STAY, STAY)
    assert after.sides[0].active_mon.hp_fraction == pytest.approx(1 - 1 / 16, abs=1e-3)
    assert after.sides[1].active_mon.hp_fraction == pytest.approx(1.0)
    assert after.weather == ""


# ------------------------------------------------------------ move order
def _first_mover(model, state, a0, a1):
    """Which side's move hit first, read from who took damage when both OHKO."""
    after = model.step(state, a0, a1)
    alive = [side.mons[0].hp > 0 for side in after.sides]
    assert alive.count(True) == 1, alive
    return alive.index(True)


def test_priority_beats_speed_and_trick_room_reverses_speed(dex, model):
    fast = make_mon(dex, "weavile", ("iceshard", "tripleaxel", "suckerpunch"), hp_fraction=0.05)
    slow = make_mon(dex, "garchomp", ("earthquake", "extremespeed"), hp_fraction=0.05)
    state = make_state([fast], [slow])
    assert _first_mover(model, state, ("move", "tripleaxel", False),
                        ("move", "earthquake", False)) == 0  # fmt: skip
    assert _first_mover(model, state, ("move", "tripleaxel", False),
                        ("move", "extremespeed", False)) == 1  # fmt: skip
    state.trick_room = 3
    assert _first_mover(model, state, ("move", "tripleaxel", False),
                        ("move", "earthquake", False)) == 1  # fmt: skip
    assert _first_mover(model, state, ("move", "iceshard", False),
                        ("move", "earthquake", False)) == 0  # fmt: skip


def test_speed_is_showdown_s_number(dex, model):
    """The model's Speed is the one rule of speed.py (checked against Showdown in
    tests/test_speed.py): whole numbers, 4096ths modifiers, paralysis last."""
    mon = make_mon(dex, "garchomp", ("earthquake",))
    state = make_state([mon], [make_mon(dex, "blissey", ("splash",))])
    base = model.speed(state, 0)
    assert base == mon.stats[5] and isinstance(base, int)
    mon.item = "choicescarf"
    assert model.speed(state, 0) == effective_speed(base, item="choicescarf") == base * 3 // 2
    mon.item = ""
    state.sides[0].tailwind = 2
    assert model.speed(state, 0) == 2 * base
    state.sides[0].tailwind = 0
    mon.status = "par"
    assert model.speed(state, 0) == base // 2
    mon.status = ""
    mon.boosts = (0, 0, 0, 0, 2, 0, 0)
    assert model.speed(state, 0) == 2 * base
    mon.boosts = (0, 0, 0, 0, 0, 0, 0)
    mon.ability, mon.item = "chlorophyll", "utilityumbrella"
    state.weather = "sunnyday"
    assert model.speed(state, 0) == base  # the umbrella hides the sun from its holder


def test_trick_room_orders_by_showdown_s_action_speed(dex, model):
    """Under Trick Room the slower Pokémon moves first, except that a Speed of 1,809 or
    more does not wrap around Showdown's 13 bits and moves before slow ones."""
    fast = make_mon(dex, "weavile", ("tripleaxel",), hp_fraction=0.05)
    slow = make_mon(dex, "garchomp", ("earthquake",), hp_fraction=0.05)
    state = make_state([fast], [slow])
    state.trick_room = 3
    assert not model.faster(state, 0) and model.faster(state, 1)
    assert _first_mover(model, state, ("move", "tripleaxel", False),
                        ("move", "earthquake", False)) == 1  # fmt: skip
    fast.stats = (*fast.stats[:5], 1809)
    assert model.action_speed(state, 0) == action_speed(1809, True) > model.action_speed(state, 1)
    assert _first_mover(model, state, ("move", "tripleaxel", False),
                        ("move", "earthquake", False)) == 0  # fmt: skip


# ------------------------------------------------------------- pivots etc.
def test_uturn_pivots_to_the_healthiest_and_the_reply_hits_the_newcomer(dex, model):
    pivot = make_mon(dex, "meowscarada", ("uturn",))  # faster than Garchomp
    hurt = make_mon(dex, "blissey", ("splash",), hp_fraction=0.3)
    healthy = make_mon(dex, "corviknight", ("splash",))
    foe = make_mon(dex, "garchomp", ("earthquake",))
    state = make_state([pivot, hurt, healthy], [foe])
    after = model.step(state, ("move", "uturn", False), ("move", "earthquake", False))
    assert after.sides[0].active == 2
    assert after.sides[0].mons[0].hp_fraction == pytest.approx(1.0)  # left before Earthquake
    assert after.sides[0].mons[2].hp_fraction == pytest.approx(1.0)  # Flying: immune
    assert after.sides[1].active_mon.hp < foe.hp


def test_faint_brings_in_a_replacement_and_ends_the_battle_when_none_left(dex, model):
    attacker = make_mon(dex, "garchomp", ("earthquake",))
    victim = make_mon(dex, "heatran", ("splash",), hp_fraction=0.1)
    backup = make_mon(dex, "blissey", ("splash",))
    state = make_state([attacker], [victim, backup])
    after = model.step(state, ("move", "earthquake", False), STAY)
    assert after.sides[1].mons[0].hp <= 0 and after.sides[1].active == 1
    assert not after.finished
    final = make_state([attacker], [victim])
    done = model.step(final, ("move", "earthquake", False), STAY)
    assert done.finished and done.winner() == 0


def test_protect_blocks_and_tera_changes_the_defending_type(dex, model):
    attacker = make_mon(dex, "garchomp", ("outrage",))
    defender = make_mon(dex, "dragonite", ("protect", "splash"), tera="Fairy")
    state = make_state([attacker], [defender])
    hit = model.step(state, ("move", "outrage", False), STAY).sides[1].active_mon
    assert hit.hp < defender.hp
    guarded = model.step(state, ("move", "outrage", False), ("move", "protect", False))
    assert guarded.sides[1].active_mon.hp == defender.hp
    tera = model.step(state, ("move", "outrage", False), ("move", "splash", True))
    assert tera.sides[1].active_mon.terastallized and tera.sides[1].tera_used
    assert tera.sides[1].active_mon.hp == defender.hp  # Fairy is immune to Dragon


def test_sleep_clause_stops_a_second_sleep_on_the_same_side(dex, model):
    spore = ("move", "spore", False)
    amoonguss = make_mon(dex, "amoonguss", ("spore",))

    def after(bench_status, bench_hp=1.0):
        target = make_mon(dex, "snorlax", ("splash",))
        bench = make_mon(dex, "blissey", ("splash",), status=bench_status, hp_fraction=bench_hp)
        state = make_state([amoonguss], [target, bench])
        return model.step(state, spore, STAY).sides[1].mons[0].status

    assert after("") == "slp"
    assert after("slp") == ""  # Sleep Clause Mod: one foe asleep at a time
    assert after("slp", bench_hp=0.0) == "slp"  # a fainted sleeper does not count
    assert after("par") == "slp"


def test_drain_recoil_and_recovery(dex, model):
    user = make_mon(dex, "amoonguss", ("gigadrain", "recover"), hp_fraction=0.5)
    foe = make_mon(dex, "swampert", ("splash",))
    state = make_state([user], [foe])
    after = model.step(state, ("move", "gigadrain", False), STAY)
    dealt = foe.hp - after.sides[1].active_mon.hp
    healed = after.sides[0].active_mon.hp - user.hp
    assert dealt > 0 and healed == pytest.approx(dealt / 2, rel=1e-6)
    user2 = make_mon(dex, "slowbro", ("slackoff",), hp_fraction=0.3)
    after = model.step(make_state([user2], [foe]), ("move", "slackoff", False), STAY)
    assert after.sides[0].active_mon.hp_fraction == pytest.approx(0.8)


def test_sample_mode_is_seeded_and_expected_mode_deterministic(dex):
    a = make_mon(dex, "garchomp", ("stoneedge", "dragonclaw"))
    b = make_mon(dex, "heatran", ("lavaplume", "earthpower"))
    state = make_state([a], [b])
    expected = TransitionModel(dex)
    x = expected.step(state, ("move", "stoneedge", False), ("move", "lavaplume", False))
    y = expected.step(state, ("move", "stoneedge", False), ("move", "lavaplume", False))
    assert x.sides[1].active_mon.hp == y.sides[1].active_mon.hp
    sampler = TransitionModel(dex, mode="sample")
    with pytest.raises(ValueError, match="rng"):
        sampler.step(state, ("move", "stoneedge", False), STAY)
    runs = [sampler.step(state, ("move", "dragonclaw", False), STAY,
                         rng=np.random.default_rng(seed)).sides[1].active_mon.hp
            for seed in (1, 1, 2, 3, 4, 5)]  # fmt: skip
    assert runs[0] == runs[1]
    assert len(set(runs)) > 1 and min(runs) > 0, "damage rolls should vary across seeds"


def test_lookahead_turns_to_ko_and_text(dex, model):
    ours = make_mon(dex, "garchomp", ("earthquake", "dragonclaw", "swordsdance"), tera="Steel")
    theirs = make_mon(dex, "heatran", ("lavaplume", "earthpower"), tera="Flying")
    bench = make_mon(dex, "blissey", ("seismictoss",))
    state = make_state([ours, bench], [theirs])
    look = one_step_lookahead(model, state)
    best = look.best_move()
    assert best is not None and best.move == "earthquake"  # 4x against Heatran
    assert best.turns_to_ko == 1
    assert look.matchup(False, True).best_ours().move != "earthquake"  # Tera Flying: immune
    assert [s.index for s in look.switches] == [1]
    text = look.text()
    assert "Garchomp" in text and "Earthquake" in text and "Blissey" in text
    assert not look.outmatched()


# ------------------------------------------------------- real battles
@pytest.mark.slow
def test_fidelity_on_real_battles_with_true_sets():
    """Replays real simulator battles: both actives' HP after each turn and faints."""
    from bench.worldmodel import play_and_score

    scores, samples = play_and_score(6, ["gen9randombattle", "gen9ou"], seed=11)
    assert scores.turns >= 60
    assert scores.hp_mae_median <= 0.05
    assert scores.faint_accuracy >= 0.9
    assert len(samples) == scores.turns


def test_steps_never_change_the_states_they_start_from(dex, model):
    """Children share benched Pokémon with their parent (copy on write): a deep search
    over siblings must leave every ancestor as it was."""
    ours = [make_mon(dex, "garchomp", ("earthquake", "uturn")),
            make_mon(dex, "blissey", ("softboiled",)),
            make_mon(dex, "charizard", ("flamethrower",))]  # fmt: skip
    theirs = [make_mon(dex, "heatran", ("lavaplume", "stealthrock")),
              make_mon(dex, "toxapex", ("toxic", "recover"))]  # fmt: skip
    root = make_state(ours, theirs)
    root.sides[0].stealth_rock = True
    root.sides[0].spikes = 2
    snapshot = root.copy()
    children = [model.step(root, a0, a1) for a0 in model.legal_actions(root, 0)
                for a1 in model.legal_actions(root, 1)]  # fmt: skip
    grandchildren = [model.step(c, a0, a1) for c in children for a0 in model.legal_actions(c, 0)
                     for a1 in model.legal_actions(c, 1)]  # fmt: skip
    assert len(grandchildren) > 50
    assert root == snapshot
    again = [model.step(root, a0, a1) for a0 in model.legal_actions(root, 0)
             for a1 in model.legal_actions(root, 1)]  # fmt: skip
    assert again == children


def test_ko_rule_knocks_out_when_most_outcomes_do(dex):
    plain, ruled = TransitionModel(dex), TransitionModel(dex, ko_rule=True)
    attacker = make_mon(dex, "garchomp", ("stoneedge",))  # 80 % accurate
    full = make_state([attacker], [make_mon(dex, "heatran", ("splash",))])
    result = plain.damage(full, 0, "stoneedge")
    rolls = sorted(result.rolls)
    # HP just above the 5th-lowest roll: 11 of 16 rolls KO, so with the 80 % accuracy the
    # chance is a little over one half, while 80 % of the mean damage falls short.
    hp = rolls[4] + 0.5
    chance = 0.8 * result.ko_chance(math.ceil(hp))
    assert 0.5 <= chance < 0.6
    assert result.expected * 0.8 < hp
    target = make_mon(dex, "heatran", ("splash",))
    target.hp = hp
    state = make_state([attacker], [target, make_mon(dex, "blissey", ("splash",))])
    move = ("move", "stoneedge", False)
    assert plain.step(state, move, STAY).sides[1].mons[0].hp > 0  # a sliver left
    assert ruled.step(state, move, STAY).sides[1].mons[0].hp <= 0  # knocked out
    # Above every roll only a critical hit KOs: the rule leaves the target standing.
    target.hp = max(result.crit_rolls) - 1
    assert 0.8 * result.ko_chance(math.ceil(target.hp)) < 0.5
    assert ruled.step(state, move, STAY).sides[1].mons[0].hp > 0


# ----------------------------------------------------------- Disguise / Ice Face
@pytest.mark.parametrize("mode", ["expected", "sample"])
def test_disguise_takes_the_first_hit_then_breaks(dex, mode):
    model = TransitionModel(dex, mode=mode)
    rng = np.random.default_rng(0) if mode == "sample" else None
    attacker = make_mon(dex, "garchomp", ("earthquake",))
    mimikyu = make_mon(dex, "mimikyu", ("splash",), ability="disguise")
    state = make_state([attacker], [mimikyu])
    first = model.step(state, ("move", "earthquake", False), STAY, rng=rng)
    target = first.sides[1].active_mon
    assert target.species == "mimikyubusted"
    # The broken disguise costs an eighth of its HP, not the hit.
    assert target.hp == pytest.approx(mimikyu.max_hp * 7 / 8, abs=1.0)
    second = model.step(first, ("move", "earthquake", False), STAY, rng=rng)
    assert second.sides[1].active_mon.hp < target.hp - mimikyu.max_hp / 4


def test_ice_face_blocks_one_physical_hit_then_eiscue_is_faster(dex, model):
    attacker = make_mon(dex, "garchomp", ("earthquake",))
    eiscue = make_mon(dex, "eiscue", ("splash",), ability="iceface")
    state = make_state([attacker], [eiscue])
    first = model.step(state, ("move", "earthquake", False), STAY)
    noice = first.sides[1].active_mon
    assert noice.species == "eiscuenoice"
    assert noice.hp == eiscue.hp  # Ice Face took the whole hit
    assert noice.stats[5] > eiscue.stats[5]  # Noice Face: base Speed 130 instead of 50
    assert model.step(first, ("move", "earthquake", False), STAY).sides[1].active_mon.hp < noice.hp
