"""``engine``: poke-engine's simultaneous-move MCTS on sampled guesses of the battle.

Each decision:

1. draws ``samples`` guesses of everything hidden from the belief
   (:func:`~pokegym.world.priors.belief_for`, narrowed by what the protocol revealed, the
   turn orders, the damage of every direct hit and what the opponent's item did not do):
   a set (moves, item, ability, spread, Tera type) for every opponent Pokémon seen, and
   the Pokémon not seen yet
   (:func:`~policies.core.engine_state.unseen_opponents`);
2. builds the engine's state for each guess (:func:`~policies.core.engine_state.engine_state`)
   and runs poke-engine's MCTS on it for an equal share of the time budget (or a fixed
   number of iterations);
3. adds up each root option's share of the visits over the guesses, and plays the most
   visited legal order (``choice=max``), or draws among the options with at least
   ``mixed_share`` of the best one's share, in proportion to their shares
   (``choice=mixed``: a mixed strategy, harder to predict).

With ``extend``, the time of a decision follows how clear its root is, as a player
spends a clock: ``budget`` is each decision's allowance, a first search takes ``first``
of it, and a decision whose root it leaves clear (the runner-up at most ``clear`` of the
best option's visits) stops there and saves the rest in the battle's time bank; one left
unclear searches fresh guesses with the rest of its allowance and what the bank holds, up
to ``extend`` seconds in all, and pools the two searches' visits, each weighed by its
iterations. A battle's decisions take ``budget`` each on average at most, however fast
the machine.

The engine's leaves are valued by its own hand-written evaluation. Its random numbers
come from its own generator, so two runs with the same seed can differ.

Two options search more for one decision: ``reply=prior`` searches again against the
opponent's likeliest replies as the fitted opponent prior predicts them and answers
them (:mod:`policies.core.engine_reply`); ``lead=search`` chooses the Team Preview lead by
searching every pair of leads (:meth:`EnginePolicy.lead_values`). Both are off by
default: neither showed a gain (docs/experiments/engine.md, sections 8 and 9).

``trust=finish`` plays, without a search, the order of the rule-based ``abyssal`` agent
when its rule for it is one trusted (``finish``: a move that knocks the opponent out
before it can act), as ``distilled``'s ``trust`` does; off by default, no gain shown
(docs/experiments/engine.md, section 13). ``finish=sure`` plays the engine's own sure
knock-out over the search's choice (:mod:`policies.core.engine_finish`); off by default,
no gain shown (section 16: the search passes one up where it expects a switch, and
overruling it gains nothing).

``opponent=prior`` changes whom each search plays against at its root: the opponent's
first move is drawn from the fitted opponent prior instead of chosen by the engine's
UCB1, so the root values answer what opponents are predicted to play rather than a
searcher's best reply; below the root both sides search as before. ``boost_value`` and
``opponent_boost_value`` weigh each side's stat boosts in the engine's evaluation at the
leaves (1.0: as released), and ``alive_value``, ``hp_value``, ... its other terms
(:data:`EVALUATION_WEIGHTS`). These use poke-engine's search with the shipped patch
(``mcts_with_options``).
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from poke_env.battle import AbstractBattle
from poke_env.player.battle_order import BattleOrder, DefaultBattleOrder

from pokegym.engine import BUILD_HINT
from pokegym.errors import EngineMissingError
from pokegym.world.data import load_dex
from pokegym.world.priors import belief_for
from pokegym.world.transition import TransitionModel
from policies.base import Policy
from policies.core.anchors import anchor_policy, trusted_rules
from policies.core.battle import decision_state, world_action
from policies.core.deadline import seconds_left
from policies.core.engine_finish import SearchedGuess, finish
from policies.core.engine_reply import answer, predicted_replies, reply_probabilities
from policies.core.engine_root import option_name, pooled, root_is_clear
from policies.core.engine_state import engine_orders, engine_state, import_engine, unseen_opponents
from policies.core.evaluation import HeuristicEvaluator
from policies.core.root_rerank import opponent_policy, rerank
from policies.opponent_model import OpponentPrior, load_opponent_model

log = logging.getLogger(__name__)

CHOICES = ("max", "mixed")
LEADS = ("search", "random")
REPLIES = ("none", "prior")
OPPONENTS = ("search", "prior")
ENGINE_SEARCH = "mcts_with_options"  # the shipped patch's search (pokegym.engine.build)
ENGINE_WEIGHTS = "evaluation_weights"  # the names of its evaluation's weights
EVALUATION_WEIGHTS = {
    "alive_value": "alive",
    "hp_value": "hp",
    "item_value": "item",
    "status_value": "status",
    "hazard_value": "hazards",
    "volatile_value": "volatiles",
    "condition_value": "side_conditions",
    "tera_value": "used_tera",
    "score_scale": "scale",
}
"""The options that weigh a term of poke-engine's evaluation (relative to the released
one, 1.0) and the patched search's name for the term."""
RERANKS = ("none", "value", "heuristic")
FINISHES = ("search", "sure")


@dataclass(frozen=True)
class EngineOptions:
    """The ``engine`` agent's options (``engine:key=value,...``), checked when built."""

    budget: float = 0.5
    """Seconds of search per decision, all guesses together."""
    iterations: int = 0
    """A fixed number of MCTS iterations per guess instead (0: use ``budget``)."""
    samples: int = 4
    """Guesses of the hidden information searched per decision (one tree each)."""
    choice: str = "max"
    """``max`` (the most visited option) or ``mixed`` (see the module docstring)."""
    mixed_share: float = 0.75
    """``choice=mixed``: the least share of the best option's visits an option needs to
    be drawn, in (0, 1]."""
    threads: int = 1
    """Threads of each engine search."""
    rerank: str = "none"
    """``value`` or ``heuristic``: choose among the near-best options (see
    ``rerank_share``) by a one-turn lookahead in the world model, valued by the distilled
    value network or the hand-written evaluation (:mod:`policies.core.root_rerank`);
    ``none``: the choice rule alone."""
    rerank_share: float = 0.8
    """``rerank``: the least share of the best option's visits an option needs to be
    re-ranked, in (0, 1]."""
    rerank_time: float = 0.05
    """``rerank``: seconds of the budget kept for the lookahead (the search gets the rest)."""
    checkpoint: str | None = None
    """``rerank=value``: the value network's checkpoint (default: the shipped one)."""
    lead: str = "random"
    """Team Preview (team formats): ``random``, a random lead; ``search`` sends out the
    lead whose searches score best on average over the opponent's possible leads
    (:meth:`EnginePolicy.lead_values`; measured no better than a random lead, 150 gen9ou
    battles: docs/experiments/engine.md)."""
    reply: str = "none"
    """``prior``: after the search (which keeps ``1 - reply_time`` of the budget), search
    again against each of the opponent's likeliest replies as the fitted opponent prior
    predicts them (:mod:`policies.core.engine_reply`), and play, among the options with
    at least ``reply_share`` of the best one's visits, the one that scores best against
    them; ``none``: the search's choice."""
    reply_share: float = 0.5
    """``reply=prior``: the least share of the best option's visits an option needs."""
    reply_time: float = 0.5
    """``reply=prior``: the share of the budget for the searches against the replies."""
    reply_mass: float = 0.8
    """``reply=prior``: the replies searched are the likeliest until this much of the
    prior's probability is covered (three at most)."""
    opponent: str = "search"
    """How each search plays the opponent's move at its root: ``search``, as poke-engine
    does (UCB1: its opponent searches as well as it does); ``prior``, drawn in
    ``opponent_weight`` of the iterations from the fitted opponent prior's probabilities
    of its actions (:mod:`policies.opponent_model`), asked on the state of the guess being
    searched. Below the root both sides search."""
    opponent_weight: float = 1.0
    """``opponent=prior``: the share of the iterations whose opponent move at the root is
    drawn from the prior (the rest choose it by UCB1), in [0, 1]."""
    opponent_unnamed: float = 0.02
    """``opponent=prior``: the weight of each opponent option the prior cannot name (a
    switch to a Pokémon not seen yet), beside the prior's probabilities (which sum to 1)."""
    boost_value: float = 1.0
    """The weight of our active Pokémon's stat boosts in poke-engine's evaluation at the
    leaves, relative to the released evaluation (1.0). The released values count a boost
    at once for much of what it may bring later (+2 Attack as much as 60 % of a Pokémon's
    HP); below 1 the search has to see a set-up pay off."""
    opponent_boost_value: float = 1.0
    """The same weight for the opponent's active Pokémon's stat boosts."""
    alive_value: float = 1.0
    """The weight, for both sides, of each Pokémon alive in the evaluation (released: 30
    points a Pokémon, beside up to 100 for its HP): above 1, a knock-out is worth more
    against the rest."""
    hp_value: float = 1.0
    """The weight of the Pokémon's HP (released: 100 points for full HP)."""
    item_value: float = 1.0
    """The weight of holding an item (released: 10 points)."""
    status_value: float = 1.0
    """The weight of the non-volatile statuses (released: −25 for paralysis or sleep, −30
    for bad poison, −10 for poison, −40 for freeze, −25 for each physical move of a burned
    Pokémon, halved for a special attacker; Guts and the like make some of them gains)."""
    hazard_value: float = 1.0
    """The weight of the entry hazards on each side, counted for each Pokémon they would
    hit."""
    volatile_value: float = 1.0
    """The weight of Leech Seed, Substitute and confusion on the active Pokémon."""
    condition_value: float = 1.0
    """The weight of the screens, Safeguard, Tailwind and Healing Wish."""
    tera_value: float = 1.0
    """The weight of the cost of a used Terastallization (released: −75 points)."""
    score_scale: float = 1.0
    """The slope of the sigmoid that turns a leaf's score (relative to the root's) into a
    value: above 1, smaller score differences decide more."""
    hits: bool = True
    """The belief reads the battle's direct hits as evidence about the opponent's sets
    (:mod:`pokegym.world.priors.hits`)."""
    clues: bool = True
    """The belief reads what the opponent's item did not do as evidence (no Life Orb
    recoil, no Leftovers, Stealth Rock damage, two different moves in a row:
    :mod:`pokegym.world.priors.item_clues`). With ``hits=false,clues=false`` only what
    the protocol reveals and the turn orders narrow the sets."""

    extend: float = 0.0
    """The most seconds one decision may take; 0: every decision searches ``budget``
    once. Otherwise ``budget`` is each decision's allowance: a first search takes
    ``first`` of it, and where it leaves the root unclear (the runner-up's visits above
    ``clear`` of the best option's), ``samples`` fresh guesses are searched until the
    allowance and what the battle's clear decisions saved (its time bank) run out, at
    most ``extend`` seconds in all; the two searches' visits are pooled. A battle's
    decisions take at most ``budget`` each on average."""
    first: float = 0.5
    """``extend``: the share of ``budget`` for the first search, in (0, 1)."""
    clear: float = 0.75
    """``extend``: the root is clear when the runner-up has at most this share of the
    best option's visits, in (0, 1)."""
    trust: str = ""
    """Rules of the rule-based ``abyssal`` agent whose choice is played without a
    search, joined by ``+`` (names in :data:`~policies.core.anchors.ANCHOR_RULES`; e.g.
    ``finish``: a move that knocks the opponent out before it can act); empty: none."""

    finish: str = "search"
    """``sure``: play a sure knock-out where one exists (the most visited one) over the
    search's choice (:mod:`policies.core.engine_finish`); ``search``: the search's choice."""

    def trusted_rules(self) -> frozenset[str]:
        return trusted_rules(self.trust)

    def evaluation_weights(self) -> dict[str, float]:
        """The evaluation's weights that differ from the released ones, by the patched
        search's names."""
        return {term: getattr(self, option) for option, term in EVALUATION_WEIGHTS.items()
                if getattr(self, option) != 1.0}  # fmt: skip

    def patched_search(self) -> bool:
        """Whether the searches need the shipped patch's ``mcts_with_options``."""
        return (self.opponent != "search" or self.boost_value != 1.0
                or self.opponent_boost_value != 1.0 or bool(self.evaluation_weights()))  # fmt: skip

    def __post_init__(self) -> None:
        for f in fields(self):  # spec values arrive typed literally: 1 for 1.0
            value = getattr(self, f.name)
            if f.type == "float" and isinstance(value, int) and not isinstance(value, bool):
                object.__setattr__(self, f.name, float(value))
        if not self.budget > 0:
            raise ValueError("budget is the seconds of search per decision (> 0)")
        if self.iterations < 0:
            raise ValueError("iterations is a number of iterations per guess (0: use budget)")
        if self.samples < 1:
            raise ValueError("samples is the number of guesses searched per decision (1 or more)")
        if self.choice not in CHOICES:
            raise ValueError(f"choice is one of {', '.join(CHOICES)}, not {self.choice!r}")
        if not 0.0 < self.mixed_share <= 1.0:
            raise ValueError("mixed_share is a share of the best option's visits, in (0, 1]")
        if self.threads < 1:
            raise ValueError("threads is the number of threads of each search (1 or more)")
        if self.lead not in LEADS:
            raise ValueError(f"lead is one of {', '.join(LEADS)}, not {self.lead!r}")
        if self.reply not in REPLIES:
            raise ValueError(f"reply is one of {', '.join(REPLIES)}, not {self.reply!r}")
        for name in ("reply_share", "reply_mass"):
            if not 0.0 < getattr(self, name) <= 1.0:
                raise ValueError(f"{name} is a share, in (0, 1]")
        if not 0.0 < self.reply_time < 1.0:
            raise ValueError("reply_time is the share of the budget for the reply searches, "
                             "in (0, 1)")  # fmt: skip
        if self.opponent not in OPPONENTS:
            raise ValueError(f"opponent is one of {', '.join(OPPONENTS)}, not {self.opponent!r}")
        if not 0.0 <= self.opponent_weight <= 1.0:
            raise ValueError("opponent_weight is the share of iterations that draw the "
                             "opponent's root move from the prior, in [0, 1]")  # fmt: skip
        if not self.opponent_unnamed >= 0.0:
            raise ValueError("opponent_unnamed is the weight of an option the prior cannot "
                             "name (0 or more)")  # fmt: skip
        for name in ("boost_value", "opponent_boost_value", *EVALUATION_WEIGHTS):
            if not 0.0 <= getattr(self, name) < math.inf:
                raise ValueError(f"{name} is a weight of a term of the engine's evaluation "
                                 "(0 or more, finite; 1: as released)")  # fmt: skip
        if self.threads > 1 and self.patched_search():
            raise ValueError("opponent=prior and the evaluation's weights search on one "
                             "thread: threads=1")  # fmt: skip
        if self.opponent != "search" and self.reply != "none":
            raise ValueError("opponent=prior and reply=prior both answer the prior's "
                             "prediction: use one of them")  # fmt: skip
        if self.reply != "none" and self.rerank != "none":
            raise ValueError("reply and rerank both choose among the near-best options: "
                             "use one of them")  # fmt: skip
        if self.rerank not in RERANKS:
            raise ValueError(f"rerank is one of {', '.join(RERANKS)}, not {self.rerank!r}")
        if not 0.0 < self.rerank_share <= 1.0:
            raise ValueError("rerank_share is a share of the best option's visits, in (0, 1]")
        if self.rerank != "none" and not 0.0 <= self.rerank_time < self.budget:
            raise ValueError("rerank_time is the seconds kept for the lookahead, in [0, budget)")
        for name in ("hits", "clues"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} is true or false, not {getattr(self, name)!r}")
        if self.extend and not self.extend > self.budget:
            raise ValueError("extend is the seconds a decision may search in all, more than "
                             "budget (0: no extension)")  # fmt: skip
        if self.extend and self.iterations:
            raise ValueError("extend lengthens a timed search: use it with budget "
                             "(iterations=0)")  # fmt: skip
        if self.extend and (self.reply != "none" or self.rerank != "none"):
            raise ValueError("extend is not combined with reply or rerank: use one of them")
        if not 0.0 < self.clear < 1.0:
            raise ValueError("clear is a share of the best option's visits, in (0, 1)")
        if not 0.0 < self.first < 1.0:
            raise ValueError("first is the share of budget for the first search, in (0, 1)")
        trusted_rules(self.trust)  # names the valid rules when one is not
        if self.finish not in FINISHES:
            raise ValueError(f"finish is one of {', '.join(FINISHES)}, not {self.finish!r}")
        if self.finish != "search" and (self.reply != "none" or self.rerank != "none"):
            raise ValueError("finish=sure plays a knock-out over the search's choice, which "
                             "reply and rerank would choose again: use one of them")  # fmt: skip
        if self.rerank != "none" and self.choice == "mixed":
            raise ValueError("rerank chooses among the near-best options itself: use it with "
                             "choice=max")  # fmt: skip


class EnginePolicy(Policy):
    """poke-engine's MCTS over sampled guesses (see the module docstring); the options
    are :class:`EngineOptions`' fields, as keywords."""

    name = "engine"
    clock = staticmethod(time.perf_counter)
    """The clock of the decision's deadline, in seconds (a test sets one on the instance)."""

    def __init__(self, seed: int | None = None, **options: Any):
        super().__init__(seed)
        self.options = EngineOptions(**options)
        self.engine = import_engine()
        if self.options.patched_search():
            known = getattr(self.engine, ENGINE_WEIGHTS, lambda: [])()
            if not known or not set(self.options.evaluation_weights()) <= set(known):
                raise EngineMissingError(
                    f"opponent=prior and the evaluation's weights need poke-engine's "
                    f"{ENGINE_SEARCH} with its weights, which the installed build lacks: "
                    f"{BUILD_HINT}."
                )
        self.latencies: list[float] = []
        self.cpu_seconds: list[float] = []
        self.iteration_counts: list[int] = []
        self.failures = 0
        self.lookaheads = 0
        """Decisions where the lookahead ran (two options or more near the best)."""
        self.reranked = 0
        """Decisions where the lookahead chose another option than the choice rule."""
        self._report: dict[str, Any] | None = None
        self._opponent_shares: dict[str, float] = {}
        self._guesses: list[tuple[dict[str, Any], list[Any]]] = []
        self._searched: list[SearchedGuess] = []
        self._usage: Counter[str] = Counter()
        self._opponent_prior: tuple[Any, Any] | None = None
        self.replies_searched = 0
        """Decisions where ``reply=prior`` searched against predicted replies."""
        self.reply_changed = 0
        """Decisions where the answer to the replies differed from the search's choice."""
        self.extended = 0
        """Decisions searched twice (``extend``: the first search left the root unclear)."""
        self.prior_searches = 0
        """Searches whose opponent's root move was drawn from the prior (``opponent=prior``)."""
        self._banks: dict[str, float] = {}
        """``extend``: each battle's seconds saved by decisions that took less than
        ``budget`` (the latest battles only)."""
        self._anchor = anchor_policy("abyssal", seed) if self.options.trust else None
        self.trusted = 0
        """Decisions played by a trusted rule of ``abyssal`` (``trust``), without a search."""
        self._models: dict[int, Any] = {}
        self._evaluators: dict[int, Any] = {}
        self._network: Any = None
        if self.options.rerank == "value":
            from policies.value_net import agent_network  # torch: optional, heavy

            self._network = agent_network(self.options.checkpoint)

    def pop_search_report(self) -> dict[str, Any] | None:
        """The last searched decision's visit shares over our legal orders, once."""
        report, self._report = self._report, None
        return report

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        started = self.clock()
        cpu_started = time.thread_time()
        self._report = None
        orders = engine_orders(battle)
        if not orders:
            return DefaultBattleOrder()
        if len(orders) == 1 or battle.opponent_active_pokemon is None:
            return next(iter(orders.values()))
        if self._anchor is not None:
            ruled = self._anchor.choose(battle)
            if self._anchor.last_rule in self.options.trusted_rules():
                self.trusted += 1
                self.latencies.append(self.clock() - started)
                self.cpu_seconds.append(time.thread_time() - cpu_started)
                self.iteration_counts.append(0)
                return ruled
        try:
            shares, iterations = self.search(battle, started, orders)
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as error:  # the engine panics as a BaseException
            # A state the engine cannot take: play on, and say so.
            self.failures += 1
            log.warning("engine: turn %d: the search failed (%s: %s); the first legal order",
                        battle.turn, type(error).__name__, error)  # fmt: skip
            return next(iter(orders.values()))
        legal = {name: share for name, share in shares.items() if name in orders}
        if not legal:
            self.failures += 1
            log.warning("engine: turn %d: no root option of the engine is legal (%s; legal: %s)",
                        battle.turn, sorted(shares), sorted(orders))  # fmt: skip
            return next(iter(orders.values()))
        name = self.pick(legal)
        if self.options.finish == "sure" and not battle.force_switch:
            name = self._finish(legal, name)
        if self.answers_replies(battle):
            try:
                name = self._answer_replies(battle, legal, name, started)
            except (KeyboardInterrupt, SystemExit, GeneratorExit):
                raise
            except BaseException as error:  # the engine panics as a BaseException
                self.failures += 1
                log.warning("engine: turn %d: the reply search failed (%s: %s); the search's "
                            "choice", battle.turn, type(error).__name__, error)  # fmt: skip
        if self.options.rerank != "none":
            try:
                name = self._rerank(battle, orders, legal, name, started)
            except Exception as error:  # the lookahead is an extra: play the search's choice
                self.failures += 1
                log.warning("engine: turn %d: the lookahead failed (%s: %s); the search's choice",
                            battle.turn, type(error).__name__, error)  # fmt: skip
        total = sum(legal.values())
        self._report = {"search_policy": [(orders[n], s / total) for n, s in legal.items()]}
        self.latencies.append(self.clock() - started)
        self.cpu_seconds.append(time.thread_time() - cpu_started)
        self.iteration_counts.append(iterations)
        return orders[name]

    def team_preview(self, battle: AbstractBattle) -> str:
        """Our lead first (``lead=search``: the row of :meth:`lead_values` with the best
        mean), the others in team order."""
        size = len(battle.team)
        if self.options.lead == "random" or size < 2:
            return super().team_preview(battle)
        try:
            values = self.lead_values(battle, self.clock())
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as error:  # the engine panics as a BaseException
            self.failures += 1
            log.warning("engine: Team Preview: the lead search failed (%s: %s); a random lead",
                        type(error).__name__, error)  # fmt: skip
            return super().team_preview(battle)
        lead = int(np.argmax(values.mean(axis=1))) + 1
        order = [lead] + [i for i in range(1, size + 1) if i != lead]
        return "/team " + "".join(str(i) for i in order)

    def lead_values(self, battle: AbstractBattle, started: float) -> np.ndarray:
        """At Team Preview: for each of our Pokémon (rows, team order) and each of the
        opponent's (columns), the engine's value for us of the battle that starts with the
        two as leads: the mean score of our root options after a search from that state,
        in [0, 1]. The guesses of the opponent's sets take turns over the pairs, and the
        budget (or ``iterations`` per pair) is shared by all of them.

        Every starting state has the same Pokémon at full HP and no boosts, so the
        engine's scores, which it counts from the root's own evaluation, compare across
        pairs."""
        o = self.options
        dex = load_dex(battle.gen)
        belief = belief_for(battle, hits=o.hits, clues=o.clues)
        guesses = [(g, unseen_opponents(battle, g, belief.prior, self.rng))
                   for g in self.guesses(battle, belief)]  # fmt: skip
        first = engine_state(battle, dex, *guesses[0])
        ours = sum(1 for m in first.side_one.pokemon if m.maxhp > 1)
        theirs = sum(1 for m in first.side_two.pokemon if m.maxhp > 1)
        pairs = [(i, j) for i in range(ours) for j in range(theirs)]
        values = np.zeros((ours, theirs))
        for k, (i, j) in enumerate(pairs):
            state = engine_state(battle, dex, *guesses[k % len(guesses)], leads=(i, j))
            result = self._run(state, o.budget, started, len(pairs) - k)
            visits = sum(option.visits for option in result.side_one)
            score = sum(option.total_score for option in result.side_one)
            values[i, j] = score / max(1, visits)
        return values

    def search(self, battle: AbstractBattle, started: float,
               legal: Collection[str] | None = None) -> tuple[dict[str, float], int]:  # fmt: skip
        """Each root option's visit share over the guesses, and the iterations run. With
        ``extend``, where the first search leaves the root unclear among the ``legal``
        options (all the engine's when not given), fresh guesses are searched with what is
        left of the allowance and the battle's time bank, and the two searches' visits are
        pooled (see :attr:`EngineOptions.extend`)."""
        o = self.options
        dex = load_dex(battle.gen)
        belief = belief_for(battle, hits=o.hits, clues=o.clues)
        budget = o.budget - (o.rerank_time if o.rerank != "none" else 0.0)
        if self.answers_replies(battle):
            budget = o.budget * (1.0 - o.reply_time)
        if o.extend:
            budget = o.budget * o.first
        self._guesses, self._searched = [], []
        shares, opponent, iterations = self._search_guesses(battle, dex, belief, budget, started)
        ours = shares if legal is None else {n: v for n, v in shares.items() if n in legal}
        if o.extend:
            bank = self._banks.get(battle.battle_tag, 0.0)  # kept if the search fails
            allowed = min(o.extend, o.budget + max(0.0, bank))
            if not root_is_clear(ours, o.clear) and seconds_left(allowed, started, self.clock()):
                self.extended += 1
                more = self._search_guesses(battle, dex, belief, allowed, started)
                shares = pooled(shares, iterations, more[0], more[2])
                opponent = pooled(opponent, iterations, more[1], more[2])
                iterations += more[2]
            self._banks.pop(battle.battle_tag, None)  # the latest battle last
            self._banks[battle.battle_tag] = bank + o.budget - (self.clock() - started)
            while len(self._banks) > 16:  # battles long over
                del self._banks[next(iter(self._banks))]
        self._opponent_shares = opponent
        return shares, iterations

    def _search_guesses(
        self, battle: AbstractBattle, dex: Any, belief: Any, budget: float, started: float
    ) -> tuple[dict[str, float], dict[str, float], int]:
        """One search of ``samples`` fresh guesses sharing what is left of ``budget``: our
        and the opponent's root visit shares, each guess weighed alike, and the iterations."""
        guesses = self.guesses(battle, belief)
        shares: dict[str, float] = {}
        opponent: dict[str, float] = {}
        iterations = 0
        for i, guess in enumerate(guesses):
            unseen = unseen_opponents(battle, guess, belief.prior, self.rng)
            self._guesses.append((guess, unseen))
            state = engine_state(battle, dex, guess, unseen)
            prior = self._root_prior(battle, guess)
            self.prior_searches += bool(prior)
            result = self._run(state, budget, started, len(guesses) - i, prior)
            if self.options.finish == "sure":  # the states and options its check reads
                self._searched.append(SearchedGuess(
                    state, *(tuple(option_name(o.move_choice) for o in side)
                             for side in (result.side_one, result.side_two))))  # fmt: skip
            total = max(1, result.total_visits)
            iterations += result.total_visits
            for option in result.side_one:
                name = option_name(option.move_choice)
                shares[name] = shares.get(name, 0.0) + option.visits / total / len(guesses)
            for option in result.side_two:
                name = option_name(option.move_choice)
                opponent[name] = opponent.get(name, 0.0) + option.visits / total / len(guesses)
        return shares, opponent, iterations

    def _finish(self, shares: dict[str, float], chosen: str) -> str:
        """``finish=sure``: the most visited legal sure knock-out, if any; else ``chosen``."""
        name, found = finish(self.engine, self._searched, shares, chosen, self._opponent_shares)
        self.failures += found is None
        self._usage["sure_knockouts"] += bool(found)
        self._usage["finished"] += name != chosen
        return name

    def pop_usage(self) -> dict[str, float]:
        """Counts the arena keeps per battle, since the last call: decisions with a sure
        knock-out (``sure_knockouts``), and those where it overruled the search (``finished``)."""
        usage, self._usage = self._usage, Counter()
        return dict(usage)

    def answers_replies(self, battle: AbstractBattle) -> bool:
        """Whether this decision searches against the opponent's replies (``reply=prior``):
        not where only we switch after a faint, as the opponent does not act then."""
        return self.options.reply != "none" and not battle.force_switch

    def _answer_replies(self, battle: AbstractBattle, shares: dict[str, float], chosen: str,
                        started: float) -> str:  # fmt: skip
        """``reply=prior``: search against each predicted reply (one guess each, in turn)
        and answer them (:func:`~policies.core.engine_reply.answer`)."""
        o = self.options
        floor = max(shares.values()) * o.reply_share
        if sum(1 for n in shares if shares[n] >= floor) < 2:
            return chosen
        model = self._model(battle.gen)
        state = decision_state(battle, model.dex)
        replies = predicted_replies(model, self._prior(model), state, o.reply_mass)
        self.replies_searched += bool(replies)
        scored = []
        for k, (reply, p) in enumerate(replies):
            guess, unseen = self._guesses[k % len(self._guesses)]
            restricted = engine_state(battle, model.dex, guess, unseen, reply=reply)
            result = self._run(restricted, o.budget, started, len(replies) - k)
            scores = {option_name(opt.move_choice): (opt.total_score, opt.visits)
                      for opt in result.side_one}  # fmt: skip
            scored.append((p, scores))
        name = answer(shares, scored, o.reply_share, chosen)
        self.reply_changed += name != chosen
        return name

    def _run(self, state: Any, budget: float, started: float, searches_left: int,
             prior: dict[str, float] | None = None) -> Any:  # fmt: skip
        """poke-engine's MCTS on ``state``: ``iterations`` if set, else an equal share of
        what is left of ``budget`` among the ``searches_left`` searches still to run. With
        ``prior`` (the opponent's probabilities by the engine's option names), its root
        move is drawn from them (``opponent=prior``); ``boost_value``,
        ``opponent_boost_value`` and the other weights (:data:`EVALUATION_WEIGHTS`) weigh
        the evaluation's terms."""
        o = self.options
        ms = 0
        if not o.iterations:
            ms = max(1, int(1000 * seconds_left(budget, started, self.clock()) / searches_left))
        if o.patched_search():
            # Drawn only from a prior given (opponent=prior, on a turn it has one): the
            # shipped patch draws nothing from an empty one, builds of an earlier patch drew
            # uniformly over options that all weighed `unnamed`.
            drawn = o.opponent_weight if prior else 0.0
            raw = getattr(self.engine, ENGINE_SEARCH)(
                state, ms, o.iterations, prior or {}, o.opponent_unnamed, drawn,
                o.boost_value, o.opponent_boost_value, o.evaluation_weights(),
            )  # fmt: skip
            return self.engine.MctsResult._from_rust(raw)
        if o.iterations:
            return self.engine.monte_carlo_tree_search(state, iterations=o.iterations,
                                                       threads=o.threads)  # fmt: skip
        return self.engine.monte_carlo_tree_search(state, duration_ms=ms, threads=o.threads)

    def _root_prior(self, battle: AbstractBattle, guess: dict[str, Any]) -> dict[str, float]:
        """``opponent=prior``: the prior's probabilities of the opponent's actions in the
        state of ``guess``, by the engine's option names; empty otherwise, and where only
        we switch (the opponent does not act)."""
        if self.options.opponent != "prior" or battle.force_switch:
            return {}
        model = self._model(battle.gen)
        state = decision_state(battle, model.dex, guess)
        return reply_probabilities(model, self._prior(model), state)

    def _prior(self, model: TransitionModel) -> Any:
        if self._opponent_prior is None or self._opponent_prior[0] is not model:
            self._opponent_prior = (model, OpponentPrior(model, load_opponent_model()))
        return self._opponent_prior[1]

    def guesses(self, battle: AbstractBattle, belief: Any) -> list[dict[str, Any]]:
        """The guesses of the opponent's hidden sets searched this decision: ``samples``
        draws from the belief."""
        return belief.sample_determinizations(self.rng, self.options.samples)

    def _rerank(self, battle: AbstractBattle, orders: dict[str, BattleOrder],
                shares: dict[str, float], chosen: str, started: float) -> str:  # fmt: skip
        """The near-best option the one-turn lookahead values most (``rerank``); the
        search's choice first, so that it keeps a tie and is what the time left allows."""
        floor = max(shares.values()) * self.options.rerank_share
        names = sorted((n for n in shares if shares[n] >= floor),
                       key=lambda n: (n != chosen, -shares[n]))  # fmt: skip
        actions = {world_action(orders[n], battle): n for n in names}
        actions.pop(None, None)
        if len(actions) < 2:
            return chosen
        self.lookaheads += 1
        model = self._model(battle.gen)
        state = decision_state(battle, model.dex)
        opponent = opponent_policy(model, state, self._opponent_shares)
        budget = self.options.budget
        best, _ = rerank(model, state, list(actions), opponent, self._evaluator(model),
                         time_left=lambda: seconds_left(budget, started, self.clock()))  # fmt: skip
        if actions[best] != chosen:
            self.reranked += 1
        return actions[best]

    def _model(self, gen: int) -> TransitionModel:
        model = self._models.get(gen)
        if model is None:
            model = self._models[gen] = TransitionModel(load_dex(gen))
        return model

    def _evaluator(self, model: TransitionModel) -> Any:
        evaluator = self._evaluators.get(id(model))
        if evaluator is None:
            if self.options.rerank == "value":
                from policies.core.evaluators import ValueNetEvaluator  # torch: optional, heavy
                from policies.value_net import StateEncoder  # torch: optional, heavy

                evaluator = ValueNetEvaluator(StateEncoder(model), self._network)
            else:
                evaluator = HeuristicEvaluator(model)
            self._evaluators[id(model)] = evaluator
        return evaluator

    def pick(self, shares: dict[str, float]) -> str:
        """The option to play from the legal options' visit shares."""
        best = max(shares, key=lambda n: shares[n])
        if self.options.choice == "max":
            return best
        floor = shares[best] * self.options.mixed_share
        names = [n for n in shares if shares[n] >= floor]
        weights = [shares[n] for n in names]
        total = sum(weights)
        return names[int(self.rng.choice(len(names), p=[w / total for w in weights]))]
