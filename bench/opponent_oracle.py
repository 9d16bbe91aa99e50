"""How much would knowing the opponent be worth? The distilled agent against ``abyssal``,
told what only the other side knows.

A diagnostic, not an agent: both players run in this process, so before each decision
the script reads the *opponent's* live battle object and hands the agent

* ``--oracle reply``: ``abyssal``'s actual choice for this turn, as the one reply the
  search answers at the root (``MinimaxSearch.search(predicted=...)``, weight 1);
* ``--oracle sets``: the opponent's true moves, item and ability (its battle object does
  not carry the Tera type), in place of the priors' modal sets;
* ``--oracle state``: for the MCTS (``distilled``, ``search=mcts``): the whole true
  position as its one root state, the opponent's six Pokémon with their exact sets,
  stats, HP and Tera types, seen or not (what an agent with a perfect belief would
  search from; the opponent's choices stay hidden);
* ``--oracle move``: for the MCTS: ``abyssal``'s actual choice this turn as the
  opponent's only action at the root (its later choices are searched as usual);
* ``--oracle both``: for the MCTS: ``state`` and ``move`` together, everything the
  opponent knows and the move it has chosen (the most an opponent model could give);
* ``--oracle none``: nothing (the same agent as ``pokegym compare`` plays).

``--opponent simple_heuristics`` plays poke-env's ``SimpleHeuristicsPlayer`` instead of
``abyssal``; the move told is then its choice, asked of a second instance in its chair
(it is deterministic but for exact ties).

Every decision also counts how often ``predict=abyssal`` (the rules asked in the
opponent's chair, :mod:`policies.opponent_view`) names the same move or switch as the
opponent then plays. The agent plays under the name ``distilled`` and the battles are
seeded like ``pokegym compare --agents distilled,abyssal --seed S``, so battle ``k``
has the same teams and seeds as there; ``--paired FILE`` compares with an earlier run's
per-battle results (exact McNemar test on the battles won by one run only), and
``--journal DIR`` keeps the battles as ``pokegym compare --out DIR`` does, so that
``bench/paired.py`` pairs them with compare runs by battle seed (Newcombe's interval).

    pokegym bench opponent_oracle --oracle reply --battles 200 --seed 11 \\
        --out runs/oracle/reply.json [--paired runs/oracle/none.json] [--agent anchor_margin=0]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from poke_env.battle import AbstractBattle

from pokegym.agents import parse_agent_spec, register_agent
from pokegym.arena import Arena, ArenaConfig
from pokegym.journal import JOURNAL_NAME, BattleJournal
from pokegym.ratings import binomial_test
from pokegym.stats import wilson_interval
from pokegym.world.data import to_id
from pokegym.world.priors import belief_for
from pokegym.world.sets import PokemonSet
from pokegym.world.state import BattleState, state_from_battle
from pokegym.world.transition import Action
from policies.abyssal import AbyssalPolicy
from policies.baselines import SimpleHeuristicsPolicy
from policies.core.battle import decision_state
from policies.distilled import DISTILLED_MCTS, DistilledPolicy
from policies.mcts_agent import MCTSPolicy
from policies.opponent_view import RuleReplyModel, order_action, reply_action


def true_sets(theirs: AbstractBattle) -> dict[str, PokemonSet]:
    """The opponent's own view of its team, as sets keyed by species id."""
    sets = {}
    for mon in theirs.team.values():
        species = to_id(mon.species)
        sets[species] = PokemonSet(species=species, level=mon.level or 100,
                                   item=to_id(mon.item or ""), ability=to_id(mon.ability or ""),
                                   moves=tuple(to_id(m) for m in mon.moves),
                                   evs=(84,) * 6)  # fmt: skip
    return sets


class ToldDistilled(DistilledPolicy):
    """The distilled agent with what the script tells it before each decision."""

    oracle = "none"

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.told_reply: Action | None = None
        self.told_sets: dict[str, PokemonSet] | None = None

    def predict_reply(self, battle, state):
        if self.oracle == "reply":
            return self.told_reply
        return super().predict_reply(battle, state)

    def state(self, battle, dex):
        if self.oracle == "sets" and self.told_sets:
            return decision_state(battle, dex, self.told_sets)
        return super().state(battle, dex)


def true_state(ours: AbstractBattle, theirs: AbstractBattle, dex: Any) -> BattleState:
    """The position as both players know it together: our side from our battle, the
    opponent's whole team (exact sets from its own request) from its battle."""
    state = state_from_battle(ours, {}, dex)
    state.sides[1] = state_from_battle(theirs, {}, dex).sides[0]
    state.notes = {"unseen": 0}
    return state


class _TheirMove:
    """A game whose opponent plays ``move`` at the root states (when it is legal there).

    ``roots_seen`` counts, over the run, the root states searched and those where the move
    told was legal (a guessed position may lack the Pokémon switched to or the move used)."""

    roots_seen: Counter[str] = Counter()

    def __init__(self, game: Any, roots: list[BattleState], move: Action):
        self.game, self.model, self.sampler = game, game.model, game.sampler
        self.roots, self.move = {id(s) for s in roots}, move
        for state in roots:
            self.roots_seen["roots"] += 1
            self.roots_seen["legal"] += move in game.actions(state, 1)

    def actions(self, state: BattleState, side: int) -> list[Action]:
        legal = self.game.actions(state, side)
        if side == 1 and id(state) in self.roots and self.move in legal:
            return [self.move]
        return legal

    def step(self, state: BattleState, a0: Action, a1: Action, rng: Any) -> BattleState:
        return self.game.step(state, a0, a1, rng)

    def terminal_value(self, state: BattleState) -> float | None:
        return self.game.terminal_value(state)


class ToldMCTS(MCTSPolicy):
    """The MCTS ``distilled`` searching the true position (``--oracle state``), told the
    opponent's move (``--oracle move``), or both (``--oracle both``)."""

    oracle = "state"

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.told_battle: AbstractBattle | None = None
        self.told_reply: Action | None = None

    def root_states(self, battle: AbstractBattle, dex: Any) -> list[BattleState]:
        if self.oracle not in ("state", "both") or self.told_battle is None:
            return super().root_states(battle, dex)
        return [true_state(battle, self.told_battle, dex)]

    def search(self, states, ours, evaluator, game, favoured, started, root=None):
        if self.oracle in ("move", "both") and self.told_reply is not None:
            game = _TheirMove(game, list(states), self.told_reply)
        return super().search(states, ours, evaluator, game, favoured, started, root)


class OracleArena(Arena):
    """An arena that shows each told agent its opponent's side before it decides."""

    def __init__(self, config: ArenaConfig, opponent: str = "abyssal"):
        super().__init__(config)
        # the opponent's rules, asked in its chair: its move of the turn, as it will play it
        self.rules = (
            SimpleHeuristicsPolicy(0) if opponent == "simple_heuristics" else AbyssalPolicy(0)
        )
        self.prediction = RuleReplyModel(AbyssalPolicy(0))
        self.agreement: Counter[str] = Counter()

    def _decide(self, slot):
        session = slot.session
        for side in (0, 1):
            agent, other = slot.agents[side], 1 - side
            if isinstance(agent, ToldMCTS):
                ours, theirs = session.battles[side], session.battles[other]
                agent.told_battle, agent.told_reply = None, None
                if not theirs.teampreview:
                    agent.told_battle = theirs
                    if session.needs_choice(other):
                        order = self.rules.choose(theirs)
                        # a switch names its Pokémon by its place on the side searched: the
                        # opponent's whole team in the true position, the ones seen otherwise
                        agent.told_reply = (
                            order_action(order, list(theirs.team.values()))
                            if agent.oracle == "both"
                            else reply_action(order, ours)
                        )
                continue
            if not isinstance(agent, ToldDistilled):
                continue
            agent.told_reply, agent.told_sets = None, None
            ours, theirs = session.battles[side], session.battles[other]
            if theirs.teampreview or not session.needs_choice(other):
                continue
            agent.told_sets = true_sets(theirs)
            actual = reply_action(self.rules.choose(theirs), ours)
            agent.told_reply = actual
            if session.needs_choice(side) and actual is not None:
                guess = self.prediction.predict(ours, belief_for(ours).modal_determinization())
                self.agreement["decisions"] += 1
                self.agreement["same"] += guess is not None and guess[:2] == actual[:2]
        return super()._decide(slot)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--oracle", choices=("reply", "sets", "state", "move", "both", "none"), default="reply"
    )
    parser.add_argument(
        "--opponent",
        choices=("abyssal", "simple_heuristics"),
        default="abyssal",
        help="the opponent played, whose move the oracles tell",
    )
    parser.add_argument("--battles", type=int, default=200)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--agent", default="", help="distilled options, e.g. anchor_margin=0")
    parser.add_argument("--no-clock", action="store_true", help="no battle clock (as compare)")
    parser.add_argument("--out", type=Path, help="per-battle results (JSON)")
    parser.add_argument("--paired", type=Path, help="an earlier --out to compare with")
    parser.add_argument(
        "--journal",
        type=Path,
        help="folder for the battles as `pokegym compare --out` keeps them (battles.jsonl: "
        "bench/paired.py pairs it with compare runs by battle seed)",
    )
    args = parser.parse_args(argv)

    _, options = parse_agent_spec("distilled:" + args.agent if args.agent else "distilled")
    if args.oracle in ("state", "move", "both"):  # the MCTS distilled
        ToldMCTS.oracle = args.oracle
        register_agent("distilled", lambda **kw: ToldMCTS(**{**DISTILLED_MCTS, **kw, **options}))
    else:  # the maximin distilled (search=maximin), told the reply or the sets
        ToldDistilled.oracle = args.oracle
        register_agent("distilled", lambda **kw: ToldDistilled(**{**kw, **options}))
    # The agent plays under the name "distilled", as in `pokegym compare --agents
    # "distilled:...",abyssal`: its battles get the same seeds there (they follow the names).
    config = ArenaConfig(agents=["distilled", args.opponent], battles_per_pair=args.battles,
                         seed=args.seed, concurrency=args.concurrency,
                         clock_bank=None if args.no_clock else 150.0)  # fmt: skip
    arena = OracleArena(config, args.opponent)
    started = time.perf_counter()
    if args.journal is None:
        result = arena.run()
    else:  # the compare journal: bench/paired.py pairs it by battle seed; resumable
        args.journal.mkdir(parents=True, exist_ok=True)
        told, marker = {"oracle": args.oracle, "agent": args.agent}, args.journal / "oracle.json"
        if marker.exists() and json.loads(marker.read_text()) != told:  # resumed only as itself
            arena.close()
            raise SystemExit(f"{args.journal} holds battles of {marker.read_text()}, not of "
                             f"{json.dumps(told)}: give another --journal folder")  # fmt: skip
        marker.write_text(json.dumps(told))
        try:
            journal = BattleJournal(args.journal / JOURNAL_NAME, arena.identity())
        except BaseException:
            arena.close()
            raise
        with journal:
            result = arena.run(journal=journal)
    won = {record.index: record.winner == "distilled" for record in result.battles}
    wins = sum(won.values())
    low, high = wilson_interval(wins, len(won))
    seconds = time.perf_counter() - started
    print(f"oracle {args.oracle} {args.agent or '(defaults)'}: {wins}-{len(won) - wins}, "
          f"{100 * wins / len(won):.1f} % [{100 * low:.1f} %, {100 * high:.1f} %] over "
          f"{len(won)} battles, seed {args.seed}, {seconds:.0f} s")  # fmt: skip
    same, decisions = arena.agreement["same"], arena.agreement["decisions"]
    if decisions:
        print(f"predict=abyssal named the opponent's move or switch in {same} of "
              f"{decisions} decisions ({100 * same / decisions:.0f} %)")  # fmt: skip
    told = _TheirMove.roots_seen
    if told["roots"]:
        print(f"the move told was legal in {told['legal']} of the {told['roots']} root "
              f"positions searched ({100 * told['legal'] / told['roots']:.0f} %)")  # fmt: skip
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({str(k): v for k, v in sorted(won.items())}))
    if args.paired:
        before = {int(k): v for k, v in json.loads(args.paired.read_text()).items()}
        shared = sorted(set(before) & set(won))
        only_before = sum(before[k] and not won[k] for k in shared)
        only_now = sum(won[k] and not before[k] for k in shared)
        p = binomial_test(only_now, only_before + only_now) if only_before + only_now else 1.0
        print(f"paired with {args.paired} on {len(shared)} battles: won only there "
              f"{only_before}, only here {only_now}, exact McNemar p = {p:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
