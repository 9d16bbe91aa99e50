"""Priors over the opponent's hidden sets and their updates on revealed information.

The random-battle prior is built here from teams that Showdown's own generator makes
(a small number of teams, in a temporary cache); battles are played on the embedded
simulator, whose omniscient view gives the true sets to check the beliefs against.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from poke_env.battle import AbstractBattle

from pokegym.actions import ActionCodec
from pokegym.agents import make_agent
from pokegym.backends.sim import SimBattleSession
from pokegym.env import opponent_choice
from pokegym.formats import resolve_format
from pokegym.showdown.simulator import Simulator
from pokegym.teams import builtin_pool
from pokegym.world import priors
from pokegym.world.data import load_dex, to_id
from pokegym.world.priors import SetDistribution, SpeedFacts, TurnOrder
from pokegym.world.sets import PokemonSet, compute_stats
from pokegym.world.state import state_from_battle
from pokegym.world.usage import UsageStats, load_chaos

DATA = Path(__file__).parent / "data"
CHAOS = DATA / "gen9ou-tiny-chaos.json"
TEST_TEAMS = 3000  # teams behind the test's random-battle prior (the default is 20,000)


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def prior_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("priors")


@pytest.fixture(scope="module")
def random_prior(prior_cache: Path) -> priors.TablePrior:
    return priors.random_battle_prior(
        "gen9randombattle", n_teams=TEST_TEAMS, cache_dir=prior_cache, quiet=True
    )


@pytest.fixture(scope="module")
def simulator() -> Iterator[Simulator]:
    sim = Simulator()
    sim.ensure_running()
    yield sim
    sim.close()


def _comparable(pset: PokemonSet, *, with_item: bool = True) -> tuple[object, ...]:
    """What a set determines, without gender and bookkeeping."""
    return (
        pset.level, pset.item if with_item else None, pset.ability, tuple(sorted(pset.moves)),
        pset.nature, tuple(pset.evs), tuple(pset.ivs), pset.tera_type,
    )  # fmt: skip


def _species_with_choices(prior: priors.SetPrior) -> tuple[str, SetDistribution]:
    """A species whose sets disagree on moves, item and Tera Type (chosen from the data)."""
    for species in sorted(prior.known_species()):  # type: ignore[attr-defined]
        dist = prior.distribution(species)
        if len(dist) < 6:
            continue
        moves = dist.move_probabilities()
        items = dist.item_probabilities()
        teras = dist.tera_type_probabilities()
        if any(0.2 < p < 0.8 for p in moves.values()) and len(items) > 1 and len(teras) > 1:
            return species, dist
    raise AssertionError("no species of the prior has sets that differ in moves, item and Tera")


# ----------------------------------------------------------------------------- the random prior
@pytest.mark.slow
def test_random_prior_is_built_from_showdown_and_cached(
    random_prior: priors.TablePrior, prior_cache: Path
) -> None:
    assert random_prior.meta["n_teams"] == TEST_TEAMS
    assert random_prior.gen == 9
    # Each generated team has 6 Pokémon: the counts add up to 6 per team.
    total = sum(count for rows in random_prior.table.values() for _, count in rows)
    assert total == 6 * TEST_TEAMS
    # Showdown's random battles give each species one level, at most 85 EVs per stat
    # and no nature.
    for rows in list(random_prior.table.values())[:50]:
        assert len({pset.level for pset, _ in rows}) == 1
        assert all(pset.nature == "" and max(pset.evs) == 85 for pset, _ in rows)
    # The cache file holds the same table, and the same arguments reuse the prior.
    path = priors.random_prior_cache_path("gen9randombattle", TEST_TEAMS, 0, prior_cache)
    raw = json.loads(path.read_text())
    assert raw["n_teams"] == TEST_TEAMS and set(raw["species"]) == set(random_prior.table)
    again = priors.random_battle_prior(
        "gen9randombattle", n_teams=TEST_TEAMS, cache_dir=prior_cache, quiet=True
    )
    assert again is random_prior


@pytest.fixture(scope="module")
def gen8_prior(prior_cache: Path) -> priors.TablePrior:
    return priors.random_battle_prior(
        "gen8randombattle", n_teams=200, cache_dir=prior_cache, quiet=True
    )


@pytest.mark.slow
def test_random_prior_for_gen8_has_no_tera(gen8_prior: priors.TablePrior) -> None:
    assert gen8_prior.gen == 8
    sets = [pset for rows in gen8_prior.table.values() for pset, _ in rows]
    assert len(sets) > 300
    assert all(pset.tera_type == "" for pset in sets)
    assert all(len(pset.moves) <= 4 and pset.ability for pset in sets)


@pytest.mark.slow
def test_random_prior_refuses_team_formats(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not generate random teams"):
        priors.random_battle_prior("gen9ou", n_teams=10, cache_dir=tmp_path, quiet=True)


@pytest.mark.slow
def test_species_missing_from_generated_teams_fall_back_to_sets_json(
    gen8_prior: priors.TablePrior,
) -> None:
    sets_json = priors.SetsJsonPrior.load(8)
    assert sets_json is not None
    # 200 teams (1,200 sets) cannot cover all of gen 8's random-battle species.
    missing = [s for s in sorted(sets_json.known_species()) if not gen8_prior.covers(s)]
    assert missing
    species = missing[0]
    dist = gen8_prior.distribution(species)
    assert dist.source == "gen8 sets.json"
    entry = sets_json.data[species]
    pool = {to_id(m) for role in entry["sets"] for m in role["movepool"]}
    for pset in dist.sets:
        assert set(pset.moves) <= pool and pset.level == entry["level"]
    # The item is not in sets.json: a revealed one fills it in rather than contradicting.
    post = dist.reveal(item="leftovers")
    assert not post.off_support and {p.item for p in post.sets} == {"leftovers"}


# ----------------------------------------------------------------------------- revealing facts
@pytest.mark.slow
def test_revealing_a_move_keeps_exactly_the_sets_with_it(random_prior: priors.TablePrior) -> None:
    _, prior = _species_with_choices(random_prior)
    move = next(m for m, p in prior.move_probabilities().items() if 0.2 < p < 0.8)
    post = prior.reveal(moves=[move])
    assert not post.off_support
    assert all(move in pset.moves for pset in post.sets)
    assert post.move_probabilities()[move] == pytest.approx(1.0)
    assert len(post) == sum(move in pset.moves for pset in prior.sets)
    # Bayes: each kept set keeps its prior weight, renormalised by the move's probability.
    mass = prior.move_probabilities()[move]
    before = dict(zip(prior.sets, prior.weights, strict=True))
    for pset, weight in zip(post.sets, post.weights, strict=True):
        assert weight == pytest.approx(before[pset] / mass)


@pytest.mark.slow
def test_revealing_item_ability_and_tera_narrows(random_prior: priors.TablePrior) -> None:
    _, prior = _species_with_choices(random_prior)
    item = next(iter(prior.item_probabilities()))
    post = prior.reveal(item=item)
    assert {pset.item for pset in post.sets} == {item}
    assert len(post) < len(prior)
    tera = next(t for t in post.tera_type_probabilities())
    post2 = post.reveal(tera_type=tera.lower())  # names, ids and poke-env enums all work
    assert {pset.tera_type for pset in post2.sets} == {tera}
    ability = next(iter(post2.ability_probabilities()))
    post3 = post2.reveal(ability=ability)
    assert {pset.ability for pset in post3.sets} == {ability}
    assert not post3.off_support
    # Nothing revealed: the same distribution.
    assert prior.reveal() is prior


@pytest.mark.slow
def test_facts_outside_the_support_keep_the_closest_sets_patched(
    random_prior: priors.TablePrior,
) -> None:
    _, prior = _species_with_choices(random_prior)
    dex = load_dex(9)
    known = next(m for m, p in prior.move_probabilities().items() if 0.2 < p < 0.8)
    stranger = next(
        m
        for m in sorted(dex.moves)
        if m not in prior.move_probabilities()
        and not dex.moves[m].get("isZ")
        and not dex.moves[m].get("isMax")
        and dex.moves[m].get("category") != "Status"
    )
    post = prior.reveal(moves=[known, stranger])
    assert post.off_support
    assert post.notes and stranger in post.notes[-1]
    for pset in post.sets:
        assert known in pset.moves and stranger in pset.moves
        assert len(pset.moves) <= 4
    # The patched sets are the closest ones (one contradiction): those that held the
    # known move, each with one move swapped for the stranger.
    closest = [s for s in prior.sets if known in s.moves]
    assert 0 < len(post) <= len(closest)
    for pset in post.sets:
        rest = set(pset.moves) - {stranger}
        assert any(rest <= set(s.moves) for s in closest)
    # An impossible item on top: still a distribution, still flagged.
    post2 = post.reveal(item="nonexistentitem")
    assert post2.off_support and {s.item for s in post2.sets} == {"nonexistentitem"}


def test_generic_sets_are_filled_in_not_contradicted() -> None:
    generic = priors.GenericPrior(9, style="competitive")
    dist = generic.distribution("pikachu")
    assert dist.source == "generic"
    assert all(pset.moves == () for pset in dist.sets)
    post = dist.reveal(moves=["thunderbolt", "voltswitch"], item="lightball")
    assert not post.off_support
    assert all({"thunderbolt", "voltswitch"} <= set(p.moves) for p in post.sets)
    assert {p.item for p in post.sets} == {"lightball"}


# ----------------------------------------------------------------------------- turn order
def _garchomp_sets() -> SetDistribution:
    jolly = PokemonSet(
        "garchomp", 100, "lifeorb", "roughskin", ("earthquake", "dragonclaw"), "jolly",
        (0, 252, 0, 0, 4, 252),
    )  # fmt: skip
    return SetDistribution.from_weighted(
        "garchomp",
        [
            (jolly, 0.5),
            (replace(jolly, item="choicescarf"), 0.2),
            (replace(jolly, item="rockyhelmet", nature="impish", evs=(252, 0, 252, 0, 4, 0)), 0.3),
        ],
    )


def test_turn_order_keeps_or_rules_out_choice_scarf() -> None:
    dex = load_dex(9)
    dist = _garchomp_sets()
    fast = compute_stats(dex, "garchomp", 100, (0, 252, 0, 0, 4, 252), nature="jolly")["spe"]
    assert fast == 333  # Showdown's formula: (2*102 + 31 + 63) + 5, x1.1
    our_speed = fast + 10  # faster than any unscarfed Garchomp, slower than a scarfed one
    first = TurnOrder(our_speed, they_moved_first=True, our_move="tackle", their_move="earthquake")
    post = dist.given_turn_order(first, dex)
    assert {pset.item for pset in post.sets} == {"choicescarf"}
    assert not post.off_support
    assert priors.speed_bounds(first, dex) == (our_speed, float("inf"))

    second = replace(first, they_moved_first=False)
    post = dist.given_turn_order(second, dex)
    assert "choicescarf" not in {pset.item for pset in post.sets}
    assert len(post) == 2
    assert priors.speed_bounds(second, dex) == (0.0, our_speed)

    # A speed tie is consistent with either order.
    tie = TurnOrder(fast, they_moved_first=False, our_move="tackle", their_move="earthquake")
    assert priors.order_consistent(dist.sets[0], tie, dex)
    assert priors.order_consistent(dist.sets[0], replace(tie, they_moved_first=True), dex)


def test_turn_order_modifiers_priority_trick_room_and_paralysis() -> None:
    dex = load_dex(9)
    dist = _garchomp_sets()
    base = TurnOrder(343, they_moved_first=True, our_move="tackle", their_move="earthquake")
    # A higher-priority move explains the order on its own: nothing is learnt.
    quick = replace(base, our_move="tackle", their_move="aquajet")
    assert dist.given_turn_order(quick, dex) is dist
    assert priors.speed_bounds(quick, dex) is None
    # Under Trick Room the slower Pokémon moves first: the Choice Scarf set is out.
    room = replace(base, trick_room=True)
    assert "choicescarf" not in {p.item for p in dist.given_turn_order(room, dex).sets}
    # Paralysis halves Speed (gen 7+): a paralysed scarfer (499 -> 249) cannot outspeed 343.
    para = replace(base, theirs=SpeedFacts(status="par"))
    post = dist.given_turn_order(para, dex)
    assert post.off_support  # no set explains it: the closest (fastest) kept, flagged
    assert {p.item for p in post.sets} == {"choicescarf"}
    # Our +1 Speed (343 -> 514) outspeeds even the scarfer.
    boosted = replace(base, they_moved_first=False, ours=SpeedFacts(boost=1, item="", ability=""))
    assert len(dist.given_turn_order(boosted, dex)) == 3
    # Showdown's modifiers round half down: 333 x 1.5 = 499.5 -> 499; paralysis halves.
    assert priors.effective_speed(333, item="choicescarf") == 499
    assert priors.effective_speed(333, item="choicescarf", status="par") == 249


def test_protocol_tracker_reads_turn_orders_and_skips_quick_claw() -> None:
    lines = [
        "|switch|p1a: Garchomp|Garchomp, L100, M|357/357",
        "|switch|p2a: Dragapult|Dragapult, L100, F|100/100",
        "|turn|1",
        "|move|p2a: Dragapult|Shadow Ball|p1a: Garchomp",
        "|-damage|p1a: Garchomp|250/357",
        "|move|p1a: Garchomp|Earthquake|p2a: Dragapult",
        "|-damage|p2a: Dragapult|62/100",
        "|turn|2",
        "|-activate|p1a: Garchomp|item: Quick Claw",
        "|move|p1a: Garchomp|Dragon Dance|p1a: Garchomp",
        "|-boost|p1a: Garchomp|atk|1",
        "|-boost|p1a: Garchomp|spe|1",
        "|move|p2a: Dragapult|Shadow Ball|p1a: Garchomp",
        "|-damage|p1a: Garchomp|150/357",
        "|turn|3",
        "|move|p1a: Garchomp|Earthquake|p2a: Dragapult",
        "|-damage|p2a: Dragapult|20/100",
        "|move|p2a: Dragapult|Shadow Ball|p1a: Garchomp",
        "|-crit|p1a: Garchomp",
        "|-damage|p1a: Garchomp|0 fnt",
        "|faint|p1a: Garchomp",
    ]
    tracker = priors.ProtocolTracker("p1", gen=9)
    tracker.feed_lines(lines)
    assert [o.turn for o in tracker.orders] == [1, 3]  # turn 2: Quick Claw decided it
    one, three = tracker.orders
    assert one.they_moved_first and one.their_move == "shadowball" and one.our_move == "earthquake"
    assert not three.they_moved_first and three.our_facts.boost == 1
    assert three.their_facts.boost == 0
    hits = {(d.turn, d.defender): d for d in tracker.damage}
    assert hits[(1, "p1: Garchomp")].fraction_lost == pytest.approx(107 / 357)
    assert hits[(1, "p2: Dragapult")].fraction_lost == pytest.approx(0.38)
    assert hits[(3, "p1: Garchomp")].critical
    assert not hits[(1, "p2: Dragapult")].critical


# ----------------------------------------------------------------------------- damage
def test_damage_taken_narrows_bulk() -> None:
    from pokegym.world.damage import Combatant, calculate

    dex = load_dex(9)
    frail = PokemonSet(
        "garchomp", 100, "lifeorb", "roughskin", ("earthquake",), "jolly", (0, 252, 0, 0, 4, 252)
    )
    bulky = replace(frail, item="rockyhelmet", nature="impish", evs=(252, 0, 252, 0, 4, 0))
    dist = SetDistribution.from_weighted("garchomp", [(frail, 0.7), (bulky, 0.3)])
    weavile = PokemonSet(
        "weavile", 100, "", "pressure", ("iceshard",), "adamant", (0, 252, 0, 0, 4, 252)
    )
    attacker = Combatant.from_set(dex, weavile)
    hit = priors.our_hit_range(dex, attacker, "iceshard")
    frail_range, bulky_range = hit(frail), hit(bulky)
    assert bulky_range[1] + 0.02 < frail_range[0], (frail_range, bulky_range)  # disjoint
    # Showdown shows the opponent's HP in percent: observe one of the bulky set's rolls.
    result = calculate(dex, attacker, Combatant.from_set(dex, bulky), "iceshard", crit=False)
    seen = round(100 * result.rolls[8] / bulky.stats(dex)["hp"]) / 100
    post = dist.given_damage(hit, seen)
    assert post.sets == (bulky,)
    assert post.stats_range(dex)["def"][0] > dist.stats_range(dex)["def"][0]
    # A hit that knocked out a Pokémon at 20 % only says "at least 20 %": both stay.
    assert len(dist.given_damage(hit, 0.2, lower_bound=True)) == 2
    with pytest.raises(ValueError, match="observed_fraction"):
        dist.given_damage(hit, -0.5)


def test_damage_dealt_narrows_the_attackers_item() -> None:
    from pokegym.world.damage import Combatant, calculate

    dex = load_dex(9)
    plain = PokemonSet(
        "garchomp",
        100,
        "leftovers",
        "roughskin",
        ("earthquake",),
        "adamant",
        (0, 252, 0, 0, 4, 252),
    )
    band = replace(plain, item="choiceband")
    dist = SetDistribution.from_weighted("garchomp", [(plain, 0.8), (band, 0.2)])
    ours = Combatant.from_set(
        dex,
        PokemonSet("heatran", 100, "leftovers", "flashfire", (), "calm", (252, 0, 0, 0, 252, 4)),
    )
    hit = priors.their_hit_range(dex, ours, "earthquake")
    dealt = calculate(dex, Combatant.from_set(dex, band), ours, "earthquake", crit=False).rolls[0]
    post = dist.given_damage(hit, dealt / ours.max_hp, tolerance=0.5 / ours.max_hp)
    assert [p.item for p in post.sets] == ["choiceband"]


# ----------------------------------------------------------------------------- modal and samples
def test_modal_set_and_samples() -> None:
    dist = _garchomp_sets()
    assert dist.modal().item == "lifeorb"
    assert dist.top(1)[0][1] == pytest.approx(0.5)
    draws = dist.sample(np.random.default_rng(7), 4000)
    again = dist.sample(np.random.default_rng(7), 4000)
    assert draws == again
    freq = {pset.item: 0 for pset in dist.sets}
    for pset in draws:
        freq[pset.item] += 1
    assert freq["lifeorb"] / 4000 == pytest.approx(0.5, abs=0.03)
    assert freq["choicescarf"] / 4000 == pytest.approx(0.2, abs=0.03)
    assert dist.sample(np.random.default_rng(0), 0) == []
    with pytest.raises(ValueError):
        dist.sample(np.random.default_rng(0), -1)
    with pytest.raises(ValueError):
        SetDistribution("garchomp", (), np.array([]))
    with pytest.raises(ValueError):
        SetDistribution("garchomp", dist.sets, np.array([1.0, -1.0, 0.5]))


# ----------------------------------------------------------------------------- usage statistics
def test_chaos_json_marginals_and_candidate_sets() -> None:
    stats = UsageStats.from_file(CHAOS)
    assert stats.gen == 9 and set(stats.species()) == {"greattusk", "ironbundle"}
    m = stats.marginals("Great Tusk")
    assert m.items["boosterenergy"] == pytest.approx(0.5)
    assert m.items[""] == pytest.approx(0.05)  # "nothing": no item
    assert m.moves["headlongrush"] == pytest.approx(0.9)
    assert m.spreads[("jolly", (0, 252, 0, 0, 4, 252))] == pytest.approx(0.6)
    dex = load_dex(9)
    candidates = stats.candidate_sets("greattusk", dex)
    assert sum(p for _, p in candidates) == pytest.approx(1.0)
    modal = candidates[0][0]
    four = sorted(m.move_weights, key=lambda k: -m.move_weights[k])[:4]
    assert set(modal.moves) == set(four)
    assert (modal.item, modal.nature, modal.tera_type) == ("boosterenergy", "jolly", "Ground")
    # Independence: swapping only the item scales the probability by the item ratio.
    by_set = dict(candidates)
    swapped = replace(modal, item="leftovers")
    assert by_set[swapped] / by_set[modal] == pytest.approx(0.3 / 0.5)
    # No physical move: 0 Attack IVs (Flip Turn is physical).
    for pset, _ in stats.candidate_sets("ironbundle", dex):
        assert (pset.ivs[1] == 31) == ("flipturn" in pset.moves)


@pytest.mark.slow
def test_chaos_json_mixed_with_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    prior = priors.prior_for_format("gen9ou", usage_stats=CHAOS)
    pool = priors.pool_prior(format_id="gen9ou")
    tusk = prior.distribution("greattusk")
    assert tusk.source == "pool+usage"
    pool_sets = set(pool.distribution("greattusk").sets)
    assert pool_sets
    assert tusk.probability(lambda s: s in pool_sets) == pytest.approx(0.5, abs=0.02)
    bundle = prior.distribution("ironbundle")
    assert bundle.source == "usage" and not pool.covers("ironbundle")
    assert prior.distribution("pikachu").source == "generic"
    # Revealing Booster Energy keeps both sources' sets that hold it.
    post = tusk.reveal(item="boosterenergy")
    assert {p.item for p in post.sets} == {"boosterenergy"}
    # The environment variable does the same as the argument.
    monkeypatch.setenv(priors.USAGE_STATS_ENV, str(CHAOS))
    from_env = priors.prior_for_format("gen9ou")
    assert from_env.distribution("ironbundle").source == "usage"
    # A different share for the pool.
    heavy = priors.prior_for_format("gen9ou", usage_stats=CHAOS, pool_weight=0.8)
    assert heavy.distribution("greattusk").probability(lambda s: s in pool_sets) == pytest.approx(
        0.8, abs=0.02
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not a readable JSON file"),
        ('{"data": []}', "top-level 'data' object"),
        ('{"data": {}}', "lists no species"),
        (
            '{"data": {"Great Tusk": {"Items": {"leftovers": "many"}}}}',
            r"\['Items'\]\['leftovers'\]",
        ),
        ('{"data": {"Great Tusk": {"Moves": ["earthquake"]}}}', r"\['Moves'\] should map"),
        ('{"data": {"Great Tusk": {"usage": 0.3}}}', "none of Abilities"),
    ],
)
def test_malformed_chaos_json_names_the_file_and_problem(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "gen9ou-broken.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=message) as info:
        load_chaos(path)
    assert str(path) in str(info.value)
    with pytest.raises(ValueError):
        priors.prior_for_format("gen9ou", usage_stats=path)


def test_missing_chaos_json_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="chaos JSON"):
        priors.usage_prior(tmp_path / "nowhere.json")


# ----------------------------------------------------------------------------- real battles
def _play(
    sim: Simulator,
    format_id: str,
    seed: int,
    turns: int,
    on_turn: Callable[[AbstractBattle], object] | None = None,
) -> tuple[SimBattleSession, dict[str, PokemonSet]]:
    """Play ``turns`` turns of a seeded battle (random vs max power); return the session
    and the opponent's (p2's) true sets by species id."""
    fmt = resolve_format(format_id, simulator=sim)
    rng = np.random.default_rng(seed)
    teams: list[str | None] = [None, None]
    if not fmt.random_teams:
        pool = builtin_pool(fmt.id)
        teams = [pool.sample(rng).text, pool.sample(rng).text]
    agents = (make_agent(f"random:seed={seed}"), make_agent(f"max_power:seed={seed}"))
    codec = ActionCodec(fmt.gimmick)
    session = SimBattleSession(sim, fmt, teams=teams, seeds=(seed, seed + 1, seed + 2))
    true = {to_id(d["species"]): PokemonSet.from_showdown(d) for d in session.teams()[1]}
    battle = session.views[0].battle
    while not session.finished and battle.turn < turns:
        choices = {
            side: opponent_choice(agents[side], session.battles[side], codec, rng)
            for side in (0, 1)
            if session.needs_choice(side)
        }
        session.choose(choices)
        if on_turn is not None:
            on_turn(battle)
    return session, true


def _truth(true: dict[str, PokemonSet], species: str) -> PokemonSet:
    """The true set of a Pokémon the battle shows as ``species`` (maybe a battle forme)."""
    if species in true:
        return true[species]
    base = to_id(load_dex(9).species_entry(species).get("baseSpecies", species))
    return next(s for key, s in true.items() if key == base or key.startswith(base))


def _item_changed(shown: str | None, truth: PokemonSet) -> bool:
    """The battle shows an item other than the one the set started with (knocked off,
    used up, swapped): the beliefs then hold the current item."""
    return shown != "unknown_item" and to_id(shown or "") != truth.item


@pytest.mark.slow
def test_belief_from_a_random_battle_keeps_the_truth(
    simulator: Simulator, random_prior: priors.TablePrior
) -> None:
    belief = priors.BeliefState(random_prior, our_role="p1", gen=9)
    updates: list[bool] = []
    session, true = _play(
        simulator, "gen9randombattle", 11, 25, on_turn=lambda b: updates.append(belief.update(b))
    )
    try:
        battle = session.views[0].battle
        assert any(updates)
        # Nothing new: no change, and the posteriors are the cached objects.
        before = belief.distributions()
        assert belief.update(battle) is False
        after = belief.distributions()
        assert all(after[k] is before[k] for k in before)

        dex = load_dex(9)
        seen = {to_id(mon.species): (ident, mon) for ident, mon in battle.opponent_team.items()}
        assert len(seen) >= 3
        checked_truth = 0
        for species, (ident, mon) in seen.items():
            dist = belief.distribution(ident)
            revealed = [m for m in mon.moves if m in dex.moves and m not in ("struggle",)]
            for pset in dist.sets:
                assert set(revealed) <= set(pset.moves), (species, revealed, pset.moves)
            truth = _truth(true, species)
            knocked = _item_changed(mon.item, truth)
            if mon.item != "unknown_item":  # known now (None: it has none any more)
                assert {p.item for p in dist.sets} == {to_id(mon.item or "")}, species
            prior_sets = random_prior.distribution(species).sets
            if any(_comparable(p) == _comparable(truth) for p in prior_sets):
                checked_truth += 1
                want = _comparable(truth, with_item=not knocked)
                kept = [w for p, w in dist if _comparable(p, with_item=not knocked) == want]
                assert kept and kept[0] > 0, (species, dist.notes)
        assert checked_truth >= 2

        # Determinizations: one set per opponent Pokémon seen, keyed as the state expects.
        modal = belief.modal_determinization()
        assert set(modal) == set(seen)
        assert modal == {s: belief.distribution(ident).modal() for s, (ident, _) in seen.items()}
        state = state_from_battle(battle, modal, dex)
        for mon_state in state.sides[1].mons:
            pset = modal[mon_state.species]
            assert mon_state.stats[1:] == tuple(
                compute_stats(dex, mon_state.species, pset.level, pset.evs, pset.ivs, pset.nature)[
                    s
                ]
                for s in ("atk", "def", "spa", "spd", "spe")
            )
        samples = belief.sample_determinizations(np.random.default_rng(3), 6)
        assert samples == belief.sample_determinizations(np.random.default_rng(3), 6)
        assert len(samples) == 6 and all(set(d) == set(seen) for d in samples)
        for det in samples:
            for species, (ident, _) in seen.items():
                assert det[species] in belief.distribution(ident).sets
        with pytest.raises(ValueError):
            belief.sample_determinizations(np.random.default_rng(0), -1)
    finally:
        session.close()


@pytest.mark.slow
def test_modal_determinizer_over_team_preview_and_turns(simulator: Simulator) -> None:
    calls: list[dict[str, PokemonSet]] = []
    session, true = _play(
        simulator, "gen9ou", 5, 12, on_turn=lambda b: calls.append(priors.modal_determinizer(b))
    )
    try:
        battle = session.views[0].battle
        preview = {to_id(mon.species) for mon in battle.teampreview_opponent_team}
        assert len(preview) == 6
        # Every opponent Pokémon is covered, seen or shown at Team Preview.
        assert set(calls[0]) == preview
        latest = priors.modal_determinizer(battle, list(true.values()))
        assert set(latest) == preview
        belief = priors.belief_for(battle)
        assert belief is priors.belief_for(battle)  # cached per battle object
        # Both teams come from the pool the prior is built from: the truth survives.
        for ident, mon in battle.opponent_team.items():
            species = to_id(mon.species)
            truth = _truth(true, species)
            knocked = _item_changed(mon.item, truth)
            dist = belief.distribution(ident)
            assert any(
                _comparable(p, with_item=not knocked) == _comparable(truth, with_item=not knocked)
                for p in dist.sets
            ), (species, dist.notes)
            revealed = set(mon.moves) - {"struggle"}
            assert all(revealed <= set(p.moves) for p in dist.sets)
    finally:
        session.close()


def test_an_air_balloon_never_announced_is_ruled_out() -> None:
    balloon = PokemonSet(species="heatran", item="airballoon", moves=("magmastorm",))
    leftovers = PokemonSet(species="heatran", item="leftovers", moves=("magmastorm",))
    dist = SetDistribution.from_weighted("heatran", [(balloon, 0.9), (leftovers, 0.1)])
    assert dist.modal().item == "airballoon"
    ruled_out = dist.without_items(["Air Balloon"])
    assert [s.item for s in ruled_out.sets] == ["leftovers"] and not ruled_out.off_support
    only_balloons = SetDistribution.from_weighted("heatran", [(balloon, 1.0)])
    assert only_balloons.without_items(["airballoon"]).modal().item == ""


def test_a_random_prior_build_is_the_same_whichever_simulator_answers_first():
    """Sets generated equally often are written in one order (the set's own), so two
    builds with the same arguments write the same file however the batches arrived."""
    from pokegym.world.priors import sources

    def team(moves: list[str], role: str) -> list[dict[str, object]]:
        return [{"species": "Uxie", "level": 83, "item": "Leftovers", "ability": "Levitate",
                 "moves": moves, "teraType": "Dark", "role": role}]  # fmt: skip

    a, b = ["encore", "knockoff"], ["uturn", "yawn"]
    answers = [team(a, "Bulky Support"), team(b, "Bulky Setup"),
               team(a, "Bulky Attacker"), team(b, "Bulky Support")]  # fmt: skip

    class InOrder:
        """One simulator process answering ``generate`` batches in a given order."""

        def __init__(self, order: list[int]):
            self.answers = [answers[i] for i in order]

        def ensure_running(self) -> None:
            pass

        def submit(self, commands: list[list[str]]) -> None:
            self.pending = len(commands)

        def collect(self, timeout: float) -> list[object]:
            return [self.answers.pop(0) for _ in range(self.pending)]

    built = []
    for order in ([0, 1, 2, 3], [3, 2, 1, 0]):
        raw = sources.build_random_set_counts("gen9randombattle", 4, simulator=InOrder(order))
        raw.pop("build_seconds")
        built.append(json.dumps(raw))
    assert built[0] == built[1]
    rows = json.loads(built[0])["species"]["uxie"]
    assert [(row[0], row[1]["moves"]) for row in rows] == [(2, ["encore", "knockoff"]),
                                                           (2, ["uturn", "yawn"])]  # fmt: skip
    assert list(rows[0][2]) == ["Bulky Attacker", "Bulky Support"]
