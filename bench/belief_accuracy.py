"""How often is the belief right about the opponent's Pokémon it has seen? At every
decision of real battles, the belief's guesses (``samples`` draws, as the search agents
take them) against the opponent's true sets, attribute by attribute.

For each opponent Pokémon seen at a decision and each guess: the item, the ability and
the Tera type right or not; how many of the true moves the guessed four hold; all four
right. Reported over all (decision, Pokémon, guess) triples, and split by whether the
attribute had been revealed in the battle yet (a revealed item is known; the question is
how well the hidden ones are guessed). Both players are ``abyssal`` unless told otherwise;
the belief is that of player one, the opponent's truth its own request.

Three beliefs are scored at the same decisions, with the same random draws: the default,
which reads the battle's direct hits (:mod:`pokegym.world.priors.hits`) and what the
opponent's item did not do (:mod:`pokegym.world.priors.item_clues`) as evidence; one
with the hits alone; and one with neither. The last column, ``all - none``, is a paired
difference. ``p(true)`` is
the mean probability the belief gives the true hidden item (no draws in it). ``off
support`` counts the (decision, Pokémon) pairs whose evidence no candidate set explained.
Last, every hit and item clue the default belief kept as evidence is checked against the
opponent's true set (its item as first seen: Showdown rolled the hit with it): the
number that set cannot explain should be 0.

    pokegym bench belief_accuracy --battles 20 --seed 0 [--samples 4] [--agents abyssal,abyssal]
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import replace

import numpy as np

from pokegym.actions import ActionCodec
from pokegym.agents import make_agent
from pokegym.backends.sim import SimBattleSession
from pokegym.formats import resolve_format
from pokegym.showdown.simulator import shared_simulator
from pokegym.stats import wilson_interval
from pokegym.world.data import load_dex, to_id
from pokegym.world.priors import BeliefState
from pokegym.world.sets import PokemonSet

ATTRIBUTES = ("item", "ability", "tera", "moves_all_four")
BELIEFS = {  # name: (hits, clues)
    "hits+clues": (True, True),
    "hits": (True, False),
    "none": (False, False),
}


def _truth(mon) -> dict[str, object]:
    return {"item": to_id(mon.item or ""), "ability": to_id(mon.ability or ""),
            "tera": mon.tera_type.name.lower() if mon.tera_type is not None else "",
            "moves": {to_id(m) for m in mon.moves}}  # fmt: skip


def _revealed(mon) -> dict[str, bool]:
    """What the battle has shown of an opponent's Pokémon (from our side)."""
    return {"item": bool(mon.item) and mon.item != "unknown_item",
            "ability": bool(mon.ability), "tera": bool(mon.is_terastallized),
            "moves_all_four": len(mon.moves) >= 4}  # fmt: skip


def score_decision(ours, theirs, belief, rng, samples: int, tally: Counter) -> None:
    """Add one decision's guesses against the truth to ``tally``."""
    truth = {to_id(m.species): _truth(m) for m in theirs.team.values()}
    guesses = belief.sample_determinizations(rng, samples)
    for mon in ours.opponent_team.values():
        species = to_id(mon.species)
        true = truth.get(species)
        if true is None:
            continue
        shown = _revealed(mon)
        dist = belief.distributions().get(_key(belief, mon))
        if dist is not None:
            tally[("off_support", "all", "n")] += 1
            tally[("off_support", "all", "right")] += dist.off_support
            if not shown["item"]:
                tally[("p_true_item", "hidden", "n")] += 1
                tally[("p_true_item", "hidden", "sum")] += dist.item_probabilities().get(
                    true["item"], 0.0)  # fmt: skip
        for guess in guesses:
            pset = guess.get(species)
            if pset is None:
                continue
            right = {
                "item": to_id(pset.item) == true["item"],
                "ability": to_id(pset.ability) == true["ability"],
                "tera": to_id(pset.tera_type) == true["tera"],
                "moves_all_four": {to_id(m) for m in pset.moves} == true["moves"],
            }
            for name, ok in right.items():
                where = "shown" if shown[name] else "hidden"
                tally[(name, where, "n")] += 1
                tally[(name, where, "right")] += ok
            tally[("moves", "held", "n")] += len(true["moves"])
            tally[("moves", "held", "right")] += len(true["moves"] & {to_id(m) for m in pset.moves})


def _true_sets(theirs) -> dict[str, PokemonSet]:
    """The opponent's sets from its own request, with the random-battle EVs and IVs (85
    and 31; for Attack and Speed, whichever of 0 or those gives the stat it shows)."""
    dex = load_dex(theirs.gen)
    sets = {}
    for mon in theirs.team.values():
        species = to_id(mon.species)
        pset = PokemonSet(species=species, level=mon.level or 100, item=to_id(mon.item or ""),
                          ability=to_id(mon.ability or ""),
                          moves=tuple(to_id(m) for m in mon.moves), evs=(85,) * 6,
                          tera_type=mon.tera_type.name.title() if mon.tera_type else "",
                          )  # fmt: skip
        shown = {k: v for k, v in (mon.stats or {}).items() if v}
        for i, stat in ((1, "atk"), (5, "spe")):
            for iv, ev in ((31, 85), (0, 85), (0, 0), (31, 0)):
                trial = replace(pset, ivs=_put(pset.ivs, i, iv), evs=_put(pset.evs, i, ev))
                if stat not in shown or trial.stats(dex)[stat] == shown[stat]:
                    pset = trial
                    break
        sets[species] = pset
    return sets


def _put(values: tuple[int, ...], index: int, value: int) -> tuple[int, ...]:
    return (*values[:index], value, *values[index + 1 :])


def check_hits(belief: BeliefState, true: dict[str, PokemonSet], tally: Counter) -> None:
    """Count the hits kept as evidence, and those the true set cannot explain."""
    for ident, hits in belief._hit_evidence.items():
        pset = true.get(belief.species_id(ident))
        if pset is None or not pset.item:
            continue
        for hit in hits:
            if belief.tracker.invalid_stints.intersection(hit.stints):
                continue
            low, high = hit.damage_range(pset)
            wrong = hit.observed > high + hit.tolerance or (
                not hit.lower_bound and hit.observed < low - hit.tolerance)  # fmt: skip
            tally["hits"] += 1
            tally["hits_wrong"] += wrong
    for ident, clues in belief._item_clues.items():
        pset = true.get(belief.species_id(ident))
        if pset is None or not pset.item:
            continue
        for clue in clues:
            if clue.stint not in belief.tracker.invalid_stints:
                tally["clues"] += 1
                tally["clues_wrong"] += clue.distance(pset) > 0


def _key(belief, mon) -> str | None:
    try:
        return belief._key(mon)
    except KeyError:
        return None


def _line(name: str, where: str, tallies: dict[str, Counter]) -> str | None:
    """One attribute's accuracy under each belief and the paired difference."""
    cells = []
    for belief in BELIEFS:
        n, right = tallies[belief][(name, where, "n")], tallies[belief][(name, where, "right")]
        if not n:
            return None
        low, high = wilson_interval(right, n)
        cells.append(f"{100 * right / n:6.1f} % [{100 * low:.1f}, {100 * high:.1f}]")
    n = tallies["none"][(name, where, "n")]
    first, last = tallies["hits+clues"], tallies["none"]
    diff = (first[(name, where, "right")] - last[(name, where, "right")]) / n
    return (
        f"{name:<16}{where:<8}{n:>8}  " + "".join(f"{c:<24}" for c in cells) + f"{100 * diff:+6.1f}"
    )


def measure(
    battles: int, seed: int, samples: int, specs: list[str]
) -> tuple[dict[str, Counter], Counter, int]:
    """Play ``battles`` random battles between ``specs`` and score both beliefs of player
    one at each of its decisions: the tallies by belief, the hits' check, the decisions."""
    sim = shared_simulator()
    sim.ensure_running()
    fmt = resolve_format("gen9randombattle", simulator=sim)
    codec = ActionCodec(fmt.gimmick)
    tallies = {belief: Counter() for belief in BELIEFS}
    hit_tally: Counter = Counter()
    decisions = 0
    for b in range(battles):
        first = seed * 1000 + b
        session = SimBattleSession(
            sim, fmt, seeds=(first, first + 1, first + 2), names=("p1", "p2")
        )
        players = [make_agent(spec) for spec in specs]
        beliefs: dict[str, BeliefState] = {}
        true: dict[str, PokemonSet] = {}
        for _ in range(500):
            if session.finished:
                break
            ours, theirs = session.battles
            if session.needs_choice(0) and ours.opponent_active_pokemon is not None:
                if not beliefs:
                    beliefs = {name: BeliefState.from_battle(ours, hits=hits, clues=clues)
                               for name, (hits, clues) in BELIEFS.items()}  # fmt: skip
                for species, pset in _true_sets(theirs).items():
                    true.setdefault(species, pset)  # its item as first seen
                for name, belief in beliefs.items():
                    belief.update(ours)
                    rng = np.random.default_rng((seed, b, decisions))
                    score_decision(ours, theirs, belief, rng, samples, tallies[name])
                decisions += 1
            orders = {side: players[side].choose(session.battles[side]) for side in (0, 1)
                      if session.needs_choice(side)}  # fmt: skip
            session.choose({side: codec.order_to_choice(order, session.battles[side])
                            for side, order in orders.items()})  # fmt: skip
        if beliefs:
            beliefs["hits+clues"].update(session.battles[0])
            check_hits(beliefs["hits+clues"], true, hit_tally)
    return tallies, hit_tally, decisions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--battles", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--agents", default="abyssal,abyssal", help="p1,p2 agent specs")
    args = parser.parse_args(argv)
    if args.battles < 1 or args.samples < 1:
        parser.error("--battles and --samples are counts (1 or more)")
    specs = args.agents.split(",")
    if len(specs) != 2:
        parser.error("--agents is two agent specs, p1,p2")
    tallies, hit_tally, decisions = measure(args.battles, args.seed, args.samples, specs)
    print(
        f"belief accuracy: {args.battles} gen9randombattle battles ({args.agents}), "
        f"{decisions} decisions, {args.samples} guesses each, seed {args.seed}"
    )
    print(f"{'attribute':<16}{'where':<8}{'n':>8}  "
          + "".join(f"{name:<24}" for name in BELIEFS) + "all - none")  # fmt: skip
    for name in ATTRIBUTES:
        for where in ("hidden", "shown"):
            line = _line(name, where, tallies)
            if line:
                print(line)
    for belief in BELIEFS:
        tally = tallies[belief]
        n, right = tally[("moves", "held", "n")], tally[("moves", "held", "right")]
        p_n = tally[("p_true_item", "hidden", "n")]
        p_true = tally[("p_true_item", "hidden", "sum")] / max(1, p_n)
        off_n, off = tally[("off_support", "all", "n")], tally[("off_support", "all", "right")]
        print(f"{belief}: true moves held {100 * right / max(1, n):.1f} % of {n}; "
              f"p(true hidden item) {p_true:.3f} over {p_n}; "
              f"off support {off} of {off_n}")  # fmt: skip
    print(f"hits kept as evidence: {hit_tally['hits']}; "
          f"not explained by the true set: {hit_tally['hits_wrong']}")  # fmt: skip
    print(f"clues about items kept as evidence: {hit_tally['clues']}; "
          f"not explained by the true set: {hit_tally['clues_wrong']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
