"""Direct hits as evidence about the opponent's sets (pokegym/world/priors/hits.py).

The scripted tests feed protocol lines to the tracker and check what it keeps about
each hit. The recorded battle (tests/data/protocol, no Node) and the simulator's own
battles check the evidence against the truth: Showdown rolled every hit with the
opponent's true set, so each usable hit's range for that set must hold the damage seen.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_priors_recorded import RANDOM_BATTLE, load, prior_of, replay, truth

from pokegym.world.priors import BeliefState, SetDistribution
from pokegym.world.priors.hits import HitTracker
from pokegym.world.sets import PokemonSet


def feed(tracker: HitTracker, text: str) -> None:
    for line in text.strip().splitlines():
        tracker.feed(line.strip())


START = """
|switch|p1a: Garchomp|Garchomp, L80, M|280/280
|switch|p2a: Scizor|Scizor, L82, M|100/100
|turn|1
"""


def test_a_hit_keeps_the_stat_stages_screens_and_tera_it_happened_under():
    tracker = HitTracker("p1")
    feed(
        tracker,
        START
        + """
|-terastallize|p2a: Scizor|Steel
|move|p2a: Scizor|Swords Dance|p2a: Scizor
|-boost|p2a: Scizor|atk|2
|move|p1a: Garchomp|Reflect|p1a: Garchomp
|-sidestart|p1: Player|Reflect
|-unboost|p1a: Garchomp|def|1
|upkeep
|turn|2
|move|p2a: Scizor|Bullet Punch|p1a: Garchomp
|-damage|p1a: Garchomp|150/280
""",
    )
    (hit,) = tracker.hits
    assert hit.usable and hit.event.move == "bulletpunch"
    assert dict(hit.attacker.boosts) == {"atk": 2} and dict(hit.defender.boosts) == {"def": -1}
    assert hit.attacker.terastallized and not hit.defender.terastallized
    assert hit.defender.screens == ("reflect",) and hit.attacker.screens == ()
    assert not hit.defender.just_switched_in  # it came in before the last end of turn
    assert hit.event.fraction_lost == pytest.approx(130 / 280)


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        ("|move|p2a: Scizor|Bullet Punch|p1a: Garchomp\n|-crit|p1a: Garchomp", "critical"),
        ("|move|p2a: Scizor|Bullet Seed|p1a: Garchomp", "multi-hit"),
        ("|move|p2a: Scizor|Knock Off|p1a: Garchomp", "power depends on the item"),
        (
            "|move|p2a: Scizor|Bullet Punch|p1a: Garchomp\n"
            "|-enditem|p1a: Garchomp|Chople Berry|[eat]",
            "an item used in the hit",
        ),
        (
            "|-start|p2a: Scizor|typechange|Fighting|[from] ability: Protean\n"
            "|move|p2a: Scizor|Bullet Punch|p1a: Garchomp",
            "type changed",
        ),
        (
            "|-copyboost|p2a: Scizor|p1a: Garchomp\n|move|p2a: Scizor|Bullet Punch|p1a: Garchomp",
            "stages not known",
        ),
    ],
)
def test_a_hit_whose_damage_is_not_known_for_certain_is_not_usable(lines, why):
    tracker = HitTracker("p1")
    feed(tracker, START + lines + "\n|-damage|p1a: Garchomp|150/280")
    assert len(tracker.hits) == 1, why
    assert not tracker.hits[0].usable, why


def test_a_pokemon_is_new_to_the_field_only_in_the_turn_it_was_sent_in():
    """Stakeout doubles against a Pokémon sent in this turn, not one sent in after a
    faint at the end of the last turn (Showdown's ``activeTurns``)."""
    tracker = HitTracker("p1")
    feed(
        tracker,
        START
        + """
|switch|p2a: Heatran|Heatran, L80, M|100/100
|move|p1a: Garchomp|Earthquake|p2a: Heatran
|-damage|p2a: Heatran|0 fnt
|faint|p2a: Heatran
|upkeep
|switch|p2a: Scizor|Scizor, L82, M|100/100
|turn|2
|move|p1a: Garchomp|Fire Fang|p2a: Scizor
|-damage|p2a: Scizor|10/100
""",
    )
    first, second = tracker.hits
    assert first.defender.just_switched_in and not second.defender.just_switched_in
    assert first.hp_after == 0.0


@pytest.fixture(scope="module")
def recording():
    return load(RANDOM_BATTLE)


def _evidence_holds(belief: BeliefState, true: dict[str, PokemonSet]) -> int:
    """Every hit kept as evidence admits the true set; returns how many there are."""
    checked = 0
    for ident, hits in belief._hit_evidence.items():
        pset = true[belief.species_id(ident)]
        for hit in hits:
            if belief.tracker.invalid_stints.intersection(hit.stints):
                continue
            low, high = hit.damage_range(pset)
            assert hit.observed <= high + hit.tolerance, (ident, hit.turn, low, high)
            assert hit.lower_bound or hit.observed >= low - hit.tolerance, (ident, hit.turn)
            checked += 1
    return checked


def test_the_recorded_battles_hits_admit_the_true_sets_and_rule_out_other_items(recording):
    prior = prior_of(recording)
    with_hits = BeliefState(prior, our_role="p1", gen=9)
    without = BeliefState(prior, our_role="p1", gen=9, hits=False)
    view = replay(recording, on_block=lambda b: (with_hits.update(b), without.update(b)))
    true = truth(recording)
    assert _evidence_holds(with_hits, true) >= 20
    for ident in view.battle.opponent_team:
        kept, before = with_hits.distribution(ident), without.distribution(ident)
        assert not kept.off_support, (ident, kept.notes)
        assert set(kept.sets) <= set(before.sets)
    # The true set against the same set with another damage item: the hits tell them apart.
    ruled_out = set()
    for ident, hits in with_hits._hit_evidence.items():
        pset = true[with_hits.species_id(ident)]
        others = [replace(pset, item=item) for item in _DAMAGE_ITEMS if item != pset.item]
        dist = SetDistribution.from_weighted(
            pset.species, [(pset, 1.0)] + [(o, 1.0) for o in others]
        )
        for hit in hits:
            dist = dist.given_damage(hit.damage_range, hit.observed, hit.tolerance,
                                     lower_bound=hit.lower_bound)  # fmt: skip
        assert pset in dist.sets and not dist.off_support, ident
        ruled_out |= {o.item for o in others if o not in dist.sets}
    assert {"choiceband", "choicespecs", "assaultvest"} <= ruled_out


_DAMAGE_ITEMS = ("choiceband", "choicespecs", "assaultvest", "lifeorb", "expertbelt")


def test_the_engine_agent_reads_the_hits_and_clues_unless_told_not_to(recording):
    """On the recorded battle's last request, ``engine`` decides on a belief with the
    hits and item clues as evidence, ``engine:hits=false,clues=false`` on one without."""
    from pokegym.world.priors.belief import _BELIEFS
    from policies.engine import EngineOptions, EnginePolicy

    with pytest.raises(ValueError, match="hits is true or false"):
        EngineOptions(hits="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="clues is true or false"):
        EngineOptions(clues=1)  # type: ignore[arg-type]
    for hits in (False, True):
        battle = next(b for b in _views(recording) if b.turn >= 20)
        assert battle not in _BELIEFS
        agent = EnginePolicy(seed=1, iterations=50, samples=1, hits=hits, clues=hits)
        agent.choose(battle)
        assert agent.failures == 0 and agent.iteration_counts
        belief = _BELIEFS[battle]  # the one the agent decided on
        assert belief.hits is hits and belief.clues is hits
        assert bool(belief._hit_evidence) is hits and bool(belief._item_clues) is hits


def _views(recording):
    from pokegym.backends.base import PlayerView

    view = PlayerView(recording["tag"], recording["names"][0], recording["names"][1], "p1",
                      recording["gen"])  # fmt: skip
    for text, requests in recording["blocks"]:
        view.feed(text)
        view.feed_requests(requests)
        if requests and not requests[-1].get("wait") and view.battle.available_moves:
            yield view.battle


@pytest.mark.slow
def test_in_the_simulators_battles_every_usable_hit_admits_the_true_set():
    """Random battles on the simulator (bench/belief_accuracy.py's loop): each hit and
    item clue the belief keeps is checked against the opponent's true set, its item as
    first seen."""
    from bench.belief_accuracy import measure

    tallies, hits, decisions = measure(battles=3, seed=5, samples=1, specs=["abyssal", "abyssal"])
    assert decisions >= 30 and hits["hits"] >= 20 and hits["clues"] >= 20
    assert hits["hits_wrong"] == 0 and hits["clues_wrong"] == 0
    with_hits, without = tallies["hits+clues"], tallies["none"]
    assert with_hits[("item", "hidden", "n")] == without[("item", "hidden", "n")] > 0
