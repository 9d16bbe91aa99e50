"""How much would a perfect belief be worth to the engine agent? ``engine`` told the
opponent's whole team (or a part of it, ``--told seen|unseen``) against ``engine``
searching from the project's belief, or against another agent (``--opponent``).

A diagnostic, not an agent: both players run in this process, so before each decision
the told player reads the *opponent's* own battle object (its request: every Pokémon with
its moves, item, ability and Tera type, seen or not) and searches that one guess for the
whole budget, in place of ``samples`` guesses drawn from the belief. Stats follow the
random-battle sets' EVs and IVs, as the belief's sets do. What it measures is the ceiling
of better opponent modelling for this search: if knowing everything wins only a little
more than half, no belief can win much more.

The two sides alternate and the battles are seeded like ``pokegym compare``; against
another agent, battle ``k`` is the one ``pokegym compare --agents engine,OPPONENT`` plays
with the same seed, so the told engine pairs with the plain one's run battle by battle
(``--paired DIR``: the plain run's ``battles.jsonl``, McNemar on the discordant battles).
The result is the told player's win rate with its 95 % Wilson interval and an exact
binomial test against one half (the mirror's rate).

    pokegym bench engine_oracle --battles 100 --seed 700 [--agent budget=0.5] \\
        [--out runs/oracle/engine.json]
    pokegym bench engine_oracle --battles 50 --seed 300 --opponent abyssal \\
        --paired runs/eng2/abyssal/s300
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from poke_env.battle import AbstractBattle

from bench.opponent_oracle import true_sets
from bench.paired import load_outcomes, table
from pokegym.agents import parse_agent_spec, register_agent
from pokegym.arena import Arena, ArenaConfig
from pokegym.ratings import binomial_test
from pokegym.stats import wilson_interval
from pokegym.world.data import to_id
from pokegym.world.sets import PokemonSet
from policies.engine import EnginePolicy

TOLD = "engine_told"


TOLD_PARTS = ("all", "seen", "unseen")


class ToldEngine(EnginePolicy):
    """The engine agent told the opponent's true team (``told="all"``: one guess, the whole
    budget), or one part of it over the belief's guesses: the true sets of the Pokémon it
    has seen (``"seen"``), or the true Pokémon it has not seen yet (``"unseen"``)."""

    def __init__(self, seed: int | None = None, told: str = "all", **options: Any):
        super().__init__(seed, **options)
        if told not in TOLD_PARTS:
            raise ValueError(f"told is one of {', '.join(TOLD_PARTS)}, not {told!r}")
        self.part = told
        self.told_battle: AbstractBattle | None = None
        self.told = 0

    def guesses(self, battle: AbstractBattle, belief: Any) -> list[dict[str, PokemonSet]]:
        if self.told_battle is None:
            return super().guesses(battle, belief)
        self.told += 1
        truth = true_team(self.told_battle)
        if self.part == "all":
            return [truth]
        seen = {to_id(mon.species) for mon in battle.opponent_team.values()}
        guesses = super().guesses(battle, belief)
        if self.part == "seen":
            return [{**guess, **{s: p for s, p in truth.items() if s in seen}} for guess in guesses]
        # the true unseen Pokémon first: the engine's state takes a guess's unseen species in order
        hidden = {s: p for s, p in truth.items() if s not in seen}
        return [{**hidden, **{s: p for s, p in guess.items() if s in seen}} for guess in guesses]


def true_team(theirs: AbstractBattle) -> dict[str, PokemonSet]:
    """The opponent's own view of its team (:func:`bench.opponent_oracle.true_sets`) with
    its Tera types, and the EVs of the random-battle sets."""
    sets = true_sets(theirs)
    for mon in theirs.team.values():
        tera = mon.tera_type.name.title() if mon.tera_type is not None else ""
        species = to_id(mon.species)
        sets[species] = replace(sets[species], evs=(85,) * 6, tera_type=tera)
    return sets


class TellingArena(Arena):
    """An arena that shows the told player its opponent's battle before it decides;
    with ``as_engine``, battles are seeded as if the told player were named ``engine``
    (the battles ``pokegym compare --agents engine,OPPONENT`` plays)."""

    as_engine = False

    def _battle_seed(self, pair: tuple[str, str], index: int) -> int:
        if self.as_engine:
            pair = tuple("engine" if name == TOLD else name for name in pair)  # type: ignore[assignment]
        return super()._battle_seed(pair, index)

    def _decide(self, slot: Any) -> dict[int, str]:
        session = slot.session
        for side in (0, 1):
            agent = slot.agents[side]
            if isinstance(agent, ToldEngine):
                theirs = session.battles[1 - side]
                agent.told_battle = None if theirs.teampreview else theirs
        return super()._decide(slot)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--battles", type=int, default=100)
    parser.add_argument("--seed", type=int, default=700)
    parser.add_argument("--format", default="gen9randombattle", choices=["gen9randombattle"],
                        help="random battles only: the sets' EVs and IVs are theirs")  # fmt: skip
    parser.add_argument("--agent", default="", help="engine options for both engines, e.g. "
                        "budget=0.5 (with --opponent, for the told one: give the paired run "
                        "the same)")  # fmt: skip
    parser.add_argument("--told", choices=TOLD_PARTS, default="all",
                        help="all: the whole true team; seen: the true sets of the Pokémon "
                        "seen; unseen: the true Pokémon not seen yet")  # fmt: skip
    parser.add_argument(
        "--opponent",
        default="",
        help="another agent to play (default: engine with --agent's options)",
    )
    parser.add_argument(
        "--paired",
        type=Path,
        help="with --opponent: a `pokegym compare --agents engine,OPPONENT` "
        "run of the same seed (folder or battles.jsonl) to pair with",
    )
    parser.add_argument("--out", type=Path, help="per-battle results (JSON)")
    args = parser.parse_args(argv)
    if args.battles < 1:
        parser.error("--battles is the number of battles (1 or more)")
    if args.paired and not args.opponent:
        parser.error("--paired pairs with a run against --opponent: name the opponent")
    if args.opponent.split(":")[0] == "engine":
        parser.error("--opponent is another agent: the plain engine is the default (no "
                     "--opponent)")  # fmt: skip
    _, options = parse_agent_spec("engine:" + args.agent if args.agent else "engine")
    told: list[ToldEngine] = []

    def build(**kw: Any) -> ToldEngine:
        agent = ToldEngine(**{**kw, **options}, told=args.told)
        told.append(agent)
        return agent

    register_agent(TOLD, build)
    opponent = args.opponent or ("engine:" + args.agent if args.agent else "engine")
    config = ArenaConfig(agents=[TOLD, opponent], battles_per_pair=args.battles,
                         seed=args.seed, concurrency=1, clock_bank=None,
                         battle_format=args.format)  # fmt: skip
    started = time.perf_counter()
    arena = TellingArena(config)
    arena.as_engine = bool(args.opponent)
    result = arena.run()
    won = {record.index: record.winner == TOLD for record in result.battles}
    wins, n = sum(won.values()), len(won)
    low, high = wilson_interval(wins, n)
    p = binomial_test(wins, n)
    print(f"engine told the opponent's team ({args.told}) vs {opponent}: {wins}-{n - wins}, "
          f"{100 * wins / n:.1f} % [{100 * low:.1f} %, {100 * high:.1f} %] over {n} battles "
          f"({args.format}, seed {args.seed}); exact binomial p = {p:.3f} against 50 %; "
          f"{sum(a.told for a in told)} decisions searched the true team; "
          f"{time.perf_counter() - started:.0f} s")  # fmt: skip
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({str(k): v for k, v in sorted(won.items())}))
    if args.paired:
        told_outcomes = {record.seed: 0.5 if record.winner is None else
                         float(record.winner == TOLD) for record in result.battles}  # fmt: skip
        plain = load_outcomes([args.paired], "engine")
        if not set(plain) & set(told_outcomes):
            raise SystemExit(f"{args.paired}: no battle in common: was it `pokegym compare "
                             f"--agents engine,{opponent} --seed {args.seed}`?")  # fmt: skip
        print(table({"engine": plain, f"engine told ({args.told})": told_outcomes}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
