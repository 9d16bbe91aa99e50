"""``mcts``: sampled-set simultaneous-move MCTS over the world model.

Each decision:

1. draws ``determinizations`` complete guesses of the opponent's hidden sets from the
   belief (:meth:`~pokegym.world.priors.BeliefState.sample_determinizations`; one guess is
   the modal set when ``determinizations=1``) and builds one world-model state per guess;
2. runs one simultaneous-move search tree per state (:class:`~policies.search.mcts.SMMCTS`),
   round-robin, until the time budget (or the iteration budget) is spent — our actions at
   the root are exactly the legal orders of the request;
3. sums the root visit shares over the trees and plays the most visited action.

Leaves are scored by the hand-written evaluator (``evaluator=heuristic``) or by the
distilled value network (``evaluator=network``, the shipped checkpoint unless
``checkpoint=`` names another); ``evaluator=auto`` uses the network where it was trained
(random battles, or any format when ``checkpoint=`` names a network) and the
hand-written evaluator elsewhere (in Gen 9 OU it plays as well and costs less;
docs/experiments/mcts-search.md, sections 6 and 12).
``chance=sampled`` draws each turn's random events (misses, critical hits, secondary
effects, speed ties) instead of the world model's expected turn. ``prior=heuristic``
steers every node's first visits by the damage each move does (PUCT,
:class:`HeuristicPrior`); ``prior=network`` does the same below the root and uses the
network's policy head (trained on this search's own visit shares, see docs/distilled.md,
"Expert iteration") for our actions at the root; ``prior=llm`` asks a language model
instead (one scoring call per decision, ``model=``; the hybrid of a language model and
the distilled network under this search); ``anchor=abyssal`` gives the rule-based
agent's choice a share of the root prior; with neither, selection is plain UCB1.

After each searched decision, :meth:`MCTSPolicy.pop_search_report` returns the root visit
shares of our orders and the search's value of the position (what ``pokegym collect``
stores as the ``search_policy`` and ``search_value`` columns).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from poke_env.battle import AbstractBattle
from poke_env.player.battle_order import BattleOrder, DefaultBattleOrder

from pokegym.actions import ActionCodec
from pokegym.errors import IllegalActionError
from pokegym.llm import LLMError, call_deadline
from pokegym.observation import ObservationEncoder
from pokegym.text import BattlePrompter
from pokegym.text.prompts import LAYOUTS
from pokegym.world.data import load_dex
from pokegym.world.priors import battle_format, belief_for
from pokegym.world.state import BattleState
from pokegym.world.transition import Action, TransitionModel
from policies.base import Policy
from policies.core.action_prior import HeuristicPrior
from policies.core.anchors import ANCHORS, anchor_policy
from policies.core.battle import decision_state, legal_actions, root_actions, world_action
from policies.core.deadline import seconds_left
from policies.core.evaluation import HeuristicEvaluator, terminal_value
from policies.core.evaluators import ValueNetEvaluator
from policies.core.priors import AnchoredPrior
from policies.core.state_key import outcome_key
from policies.llm_common import ModelHandle
from policies.opponent_model import DEFAULT_MODEL, OpponentPrior, load_opponent_model
from policies.rollout import RolloutEvaluator
from policies.search.mcts import SMMCTS, RootStats, SearchConfig
from policies.value_net import StateEncoder, agent_network

log = logging.getLogger(__name__)

EVALUATORS = ("heuristic", "network", "auto")
CHANCE_MODES = ("expected", "sampled")
PRIORS = ("none", "heuristic", "network", "llm")


class WorldGame:
    """The world model as an SM-MCTS game (side 0 = the player deciding)."""

    def __init__(self, model: TransitionModel, sampler: TransitionModel | None = None):
        self.model = model
        self.sampler = sampler

    def actions(self, state: BattleState, side: int) -> list[Action]:
        return legal_actions(self.model, state, side)

    def step(
        self, state: BattleState, action_0: Action, action_1: Action, rng: np.random.Generator
    ) -> BattleState:
        if self.sampler is not None:
            return self.sampler.step(state, action_0, action_1, rng=rng)
        return self.model.step(state, action_0, action_1)

    def terminal_value(self, state: BattleState) -> float | None:
        return terminal_value(state)


def leaf_evaluator(evaluator: str, fmt: str, checkpoint: str | None) -> str:
    """Which leaves ``evaluator`` means in the format ``fmt``: ``heuristic`` or ``network``.

    ``auto``: the network where it was trained, which is random battles for the shipped
    checkpoint and any format for a checkpoint the user names; the hand-written evaluator
    elsewhere: outside the formats it was trained on, the network is no better a leaf than
    the hand-written evaluator and makes an iteration dearer (the paired Gen 9 OU runs are
    in docs/experiments/mcts-search.md, sections 6 and 12)."""
    if evaluator != "auto":
        return evaluator
    return "network" if checkpoint or "randombattle" in fmt else "heuristic"


@dataclass(frozen=True)
class MCTSOptions:
    """The ``mcts`` agent's options (``mcts:key=value,...``), checked when built."""

    budget: float = 0.5
    """Seconds of search per decision."""
    iterations: int = 0
    """A fixed number of iterations per decision instead (0: use ``budget``); with a
    seed this makes every decision reproducible."""
    determinizations: int = 4
    """Opponent-set guesses searched per decision (one tree each)."""
    evaluator: str = "heuristic"
    """``heuristic``, ``network`` or ``auto`` leaves (``auto``: :func:`leaf_evaluator`)."""
    checkpoint: str | None = None
    """The value network's checkpoint folder (``evaluator=network``, ``prior=network``)."""
    selection: str = "duct"
    """``duct`` or ``exp3`` (see :class:`~policies.search.mcts.SearchConfig`)."""
    exploration: float = 0.6
    """UCB1's ``c`` (``exp3``: the share of uniform exploration)."""
    max_turns: int = 6
    """Depth below the root (in turns) at which states are evaluated."""
    chance: str = "expected"
    """``expected`` (the world model's expected turn) or ``sampled``."""
    prior: str = "none"
    """``heuristic`` (:class:`HeuristicPrior` at every node; PUCT), ``network`` (the
    checkpoint's policy head for our root actions, :class:`HeuristicPrior` elsewhere; the
    checkpoint needs that head), ``llm`` (a language model's probability of each legal
    action at the root, one scoring call; :class:`HeuristicPrior` elsewhere) or ``none``
    (UCB1, unless an anchor is set)."""
    prior_weight: float = 1.0
    """Scale of PUCT's prior term."""
    anchor: str = "none"
    """``abyssal``: the rule-based agent's choice gets ``anchor_share`` of the root prior
    (PUCT), or ``none``."""
    anchor_share: float = 0.5
    """The anchor's share of the root prior, in (0, 1)."""
    anchor_margin: float = 1.0
    """With an anchor, the search's most visited action replaces the anchor's only when
    its mean value is higher by more than this (win chance; 1: the search always decides)."""
    opponent_floor: float = 0.0
    """The share of a uniform prior mixed into the opponent's prior at every node
    (:class:`~policies.core.priors.AnchoredPrior`), in [0, 1): more of the search spent on
    the opponent's switches and status moves."""
    opponent_model: str = "none"
    """The opponent's prior at every node: ``none`` (the base prior: the damage prior, or
    uniform), ``default`` (the fitted model shipped,
    :data:`~policies.opponent_model.DEFAULT_MODEL`) or the path of a model fitted with
    ``pokegym train opponent`` (:class:`~policies.opponent_model.OpponentPrior`: a
    conditional logit over what opponents were seen to play)."""
    model_reply_turns: int = 0
    """For this many turns from the root the opponent plays by drawing from its prior
    (``opponent_model=``'s, or the damage prior) instead of maximising: the search answers
    the opponent as the model predicts it (:class:`~policies.search.mcts.SearchConfig`).
    0: never."""
    switch_gain: float = 0.0
    """With a heuristic prior: the prior's bonus for switching a threatened Pokémon out
    to one that takes the threat better (:class:`HeuristicPrior`), for both sides."""
    rollout_turns: int = 0
    """Turns of greedy play from each leaf before it is valued (0: none): both sides play
    the damage prior's best action on the expected turn (:mod:`policies.rollout`)."""
    alive_weight: float = 0.0
    """``evaluator=heuristic`` only: the value of each Pokémon left over and above its HP
    (see :class:`~policies.search.maximin.HeuristicEvaluator`)."""
    tera: bool = True
    """Allow Terastallization among our root actions."""
    model: Any = "qwen-0.5b"
    """``prior=llm``: the language model (a name for :func:`pokegym.llm.make_model`, or a
    model object)."""
    llm_seconds: float = 10.0
    """``prior=llm``: the most seconds the model's call may take (then it is stopped and
    the decision uses :class:`HeuristicPrior` at the root)."""
    prompt_layout: str = "battle"
    """``prior=llm``: the prompt's layout (:class:`pokegym.text.BattlePrompter`): ``battle``
    (append-only across the battle: a turn's call computes only what changed) or
    ``turn``."""

    def __post_init__(self) -> None:
        for f in fields(self):  # spec values arrive typed literally: 1 for 1.0, "1" never
            value = getattr(self, f.name)
            if f.type == "float" and isinstance(value, int) and not isinstance(value, bool):
                object.__setattr__(self, f.name, float(value))
            elif f.type == "str" and value is None:  # "none" in a spec arrives as None
                object.__setattr__(self, f.name, "none")
        if not self.budget > 0:
            raise ValueError("budget is the seconds of search per decision (> 0)")
        if self.iterations < 0:
            raise ValueError("iterations is a number of iterations per decision (0: use budget)")
        if self.determinizations < 1:
            raise ValueError("determinizations is the number of trees per decision (1 or more)")
        for name, allowed in (("evaluator", EVALUATORS), ("chance", CHANCE_MODES),
                              ("prior", PRIORS), ("anchor", ANCHORS)):  # fmt: skip
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"{name} is one of {', '.join(allowed)}, not {value!r}")
        if not 0.0 < self.anchor_share < 1.0:
            raise ValueError("anchor_share is the anchor's share of the root prior, in (0, 1)")
        if not 0.0 <= self.anchor_margin <= 1.0:
            raise ValueError("anchor_margin is a win-chance difference in [0, 1]")
        if self.alive_weight < 0:
            raise ValueError("alive_weight is a weight per Pokémon left (>= 0)")
        if self.rollout_turns < 0:
            raise ValueError("rollout_turns is a number of turns played from each leaf (>= 0)")
        if not 0.0 <= self.opponent_floor < 1.0:
            raise ValueError("opponent_floor is a share of the opponent's prior, in [0, 1)")
        if self.model_reply_turns and self.prior == "none" and self.opponent_model == "none":
            raise ValueError(
                "model_reply_turns needs a prior for the opponent: opponent_model=default "
                "(or a fitted model's path) or prior=heuristic"
            )
        if self.switch_gain < 0:
            raise ValueError("switch_gain is the prior's bonus for a relieving switch (>= 0)")
        if not self.llm_seconds > 0:
            raise ValueError("llm_seconds is the most seconds the model's call may take (> 0)")
        if self.prompt_layout not in LAYOUTS:
            raise ValueError(
                f"prompt_layout is one of {', '.join(LAYOUTS)}, not {self.prompt_layout!r}"
            )
        self.search_config()  # checks selection, exploration, max_turns, prior_weight

    def search_config(self) -> SearchConfig:
        return SearchConfig(selection=self.selection, exploration=self.exploration,
                            max_turns=self.max_turns, chance=self.chance == "sampled",
                            prior_weight=self.prior_weight,
                            model_reply_turns=self.model_reply_turns)  # fmt: skip


class MCTSPolicy(Policy):
    """Simultaneous-move MCTS over sampled determinizations (see the module docstring);
    the options are :class:`MCTSOptions`' fields, as keywords."""

    name = "mcts"

    def __init__(self, seed: int | None = None, **options: Any):
        super().__init__(seed)
        o = self.options = MCTSOptions(**options)
        self.config = o.search_config()
        self.budget, self.iterations, self.determinizations = (o.budget, o.iterations,
                                                                o.determinizations)  # fmt: skip
        self.evaluator_name, self.chance, self.prior_name = o.evaluator, o.chance, o.prior
        self.anchor_name, self.anchor_share, self.anchor_margin = (o.anchor, o.anchor_share,
                                                                   o.anchor_margin)  # fmt: skip
        self.alive_weight, self.tera = o.alive_weight, o.tera
        evaluator, prior, checkpoint, anchor = o.evaluator, o.prior, o.checkpoint, o.anchor
        self.network: Any = None
        if evaluator in ("network", "auto") or prior == "network":
            self.network = agent_network(checkpoint)
        if prior == "network" and not policy_head_features(self.network):
            raise ValueError(
                f"prior=network needs a checkpoint with a policy head, and "
                f"{checkpoint or 'the shipped checkpoint'} has none: train one with "
                "`pokegym distill --policy-head --policy-target search` (docs/distilled.md)"
            )
        self._observers: dict[int, Any] = {}
        self._codec: Any = None
        self.llm: Any = None
        self._prompter: Any = None
        if prior == "llm":
            self.llm = ModelHandle(o.model)
            self._prompter = BattlePrompter(layout=o.prompt_layout)
        self._report: dict[str, Any] | None = None
        self.opponent_model: Any = None
        if o.opponent_model != "none":
            path = DEFAULT_MODEL if o.opponent_model == "default" else o.opponent_model
            self.opponent_model = load_opponent_model(path)
        self._anchor = anchor_policy(anchor, seed)
        self._models: dict[tuple[int, str], tuple[TransitionModel, TransitionModel | None, Any]]
        self._models = {}
        self.last_stats: RootStats | None = None
        self.latencies: list[float] = []
        # CPU seconds of the deciding thread per searched decision (less moved than the
        # wall time by other processes' load).
        self.cpu_seconds: list[float] = []
        self.iteration_counts: list[int] = []

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        if self._anchor is not None:
            self._anchor.seed(seed)

    # ---------------------------------------------------------------- roles
    def _roles(self, battle: AbstractBattle) -> tuple[TransitionModel, TransitionModel | None, Any]:
        gen = battle.gen
        leaves = leaf_evaluator(self.evaluator_name, battle_format(battle), self.options.checkpoint)
        roles = self._models.get((gen, leaves))
        if roles is None:
            dex = load_dex(gen)
            model = TransitionModel(dex)
            sampler = TransitionModel(dex, mode="sample") if self.chance == "sampled" else None
            if leaves == "network":
                evaluator: Any = ValueNetEvaluator(StateEncoder(model), self.network)
            else:
                evaluator = HeuristicEvaluator(model, alive_weight=self.alive_weight)
            if self.options.rollout_turns:
                evaluator = RolloutEvaluator(model, evaluator, self.options.rollout_turns)
            roles = self._models[(gen, leaves)] = (model, sampler, evaluator)
        return roles

    def root_states(self, battle: AbstractBattle, dex: Any) -> list[BattleState]:
        """One world-model state per determinization drawn from the belief."""
        if self.determinizations == 1:
            return [decision_state(battle, dex)]
        worlds = belief_for(battle).sample_determinizations(self.rng, self.determinizations)
        return [decision_state(battle, dex, world) for world in worlds]

    # ---------------------------------------------------------------- choice
    def pop_search_report(self) -> dict[str, Any] | None:
        """What the last decision's search found, once (None when it did not search):
        ``search_policy``, ``[(order, visit share), ...]`` over our root orders, and
        ``search_value``, the visit-weighted mean value of our root actions (win chance)."""
        report, self._report = self._report, None
        return report

    def pop_usage(self) -> dict[str, float]:
        """Language-model cost since the last call (``prior=llm``; the arena reads it)."""
        return self.llm.usage.pop() if self.llm is not None else {}

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        started = time.perf_counter()
        cpu_started = time.thread_time()
        self._report = None
        if self._prompter is not None:
            self._prompter.attach(battle)
        orders = root_actions(battle, self.tera)
        if not orders:
            return DefaultBattleOrder()
        if len(orders) == 1 or battle.opponent_active_pokemon is None:
            return next(iter(orders.values()))
        model, sampler, evaluator = self._roles(battle)
        states = [s for s in self.root_states(battle, model.dex) if terminal_value(s) is None]
        ours = list(orders)
        favoured = self._favoured(battle, orders)
        if not states:
            # The battle goes on, but the model's state says it is over (what it knows of a
            # side disagrees with the battle): play without a search.
            log.warning("mcts: turn %d: the model's state is already over; no search",
                        battle.turn)  # fmt: skip
            self.latencies.append(time.perf_counter() - started)
            self.cpu_seconds.append(time.thread_time() - cpu_started)
            self.iteration_counts.append(0)
            return orders[favoured] if favoured is not None else next(iter(orders.values()))
        root = self.root_policy(battle, orders) if self.prior_name in ("network", "llm") else None
        stats = self.search(states, ours, evaluator, WorldGame(model, sampler), favoured,
                            started, root)  # fmt: skip
        self.last_stats = stats
        self._report = search_report(stats, orders)
        action = stats.best(0)
        if favoured is not None and action != favoured and self.anchor_margin < 1.0:
            values = dict(zip(stats.actions[0], stats.values[0], strict=True))
            anchor_value = values.get(favoured, math.nan)  # nan: the search never tried it
            if not math.isnan(anchor_value) and values[action] - anchor_value <= self.anchor_margin:
                action = favoured
        self.latencies.append(time.perf_counter() - started)
        self.cpu_seconds.append(time.thread_time() - cpu_started)
        self.iteration_counts.append(stats.iterations)
        return orders[action]

    def search(
        self,
        states: Sequence[BattleState],
        ours: list[Action],
        evaluator: Any,
        game: WorldGame,
        favoured: Action | None,
        started: float,
        root: dict[Action, float] | None = None,
    ) -> RootStats:
        """The root statistics of one tree per state, our root actions fixed to ``ours``
        (``root``: a prior over them that replaces the base prior at the root)."""
        game = _RootActions(game, states, ours)
        base: Any = None
        if self.prior_name != "none":
            base = HeuristicPrior(game.game.model, switch_gain=self.options.switch_gain)
        if self.opponent_model is not None:
            base = OpponentPrior(game.game.model, self.opponent_model, base)
        prior = None
        if base is not None or favoured is not None:
            prior = AnchoredPrior(base, states, favoured, self.anchor_share, root,
                                  self.options.opponent_floor)  # fmt: skip
        search = SMMCTS(game, evaluator, self.config, prior=prior,
                        outcome_key=outcome_key if self.config.chance else None)  # fmt: skip
        if self.iterations:
            return search.search(states, self.rng, iterations=self.iterations)
        return search.search(states, self.rng, budget=seconds_left(self.budget, started))

    def root_policy(
        self, battle: AbstractBattle, orders: dict[Action, BattleOrder]
    ) -> dict[Action, float]:
        """The policy head's (``prior=network``) or the language model's (``prior=llm``)
        probability of each root order, a softmax over the legal ones; {} when the model
        gave no answer in time."""
        if self._codec is None:
            self._codec = ActionCodec("terastallize" if battle.gen == 9 else None)
        logits = self._llm_scores(battle) if self.prior_name == "llm" else self._head_scores(battle)
        scores: dict[Action, float] = {}
        for action, order in orders.items():
            try:
                index = self._codec.from_order(order, battle)
            except IllegalActionError:
                continue  # not in the action layout: left to the search without a prior
            if index in logits:
                scores[action] = float(logits[index])
        if not scores:
            return {}
        top = max(scores.values())
        weights = {a: math.exp(v - top) for a, v in scores.items()}
        total = sum(weights.values())
        return {a: w / total for a, w in weights.items()}

    def _head_scores(self, battle: AbstractBattle) -> dict[int, float]:
        observer = self._observers.get(battle.gen)
        if observer is None:
            observer = self._observers[battle.gen] = ObservationEncoder(battle.gen)
        logits = self.network.policy_logits(observer.encode(battle))[0]
        return {i: float(v) for i, v in enumerate(logits)}

    def _llm_scores(self, battle: AbstractBattle) -> dict[int, float]:
        """Log-probabilities of our legal actions (by action index) from one scoring call,
        stopped after ``llm_seconds``; {} on any model error (counted as a fallback)."""
        messages, actions = self._prompter.action_prompt(battle)
        if len(actions) < 2:
            return {}
        began = time.monotonic()
        try:
            with call_deadline(began + self.options.llm_seconds):
                scores = self.llm.model.score(messages, [a.label for a in actions])
        except LLMError as error:
            log.warning("mcts: the language model's prior failed (%s); the damage prior", error)
            self.llm.usage.fallbacks += 1
            return {}
        self.llm.record("prior", scores.cost, time.monotonic() - began)
        return {a.action: lp for a, lp in zip(actions, scores.logprobs, strict=True)}

    def _favoured(self, battle: AbstractBattle, orders: dict[Action, BattleOrder]) -> Action | None:
        if self._anchor is None:
            return None
        action = world_action(self._anchor.choose(battle), battle)
        return action if action in orders else None


def policy_head_features(network: Any) -> int:
    """Observation features the network's policy head reads (0: it has no policy head)."""
    if network is None:
        return 0
    primary = getattr(network, "primary", network)  # an ensemble's policy is its primary's
    return int(primary.config.observation_features)


def search_report(stats: RootStats, orders: dict[Action, BattleOrder]) -> dict[str, Any]:
    """The root visit shares of our orders and the visit-weighted value of the root."""
    shares = stats.shares(0)
    values = dict(zip(stats.actions[0], stats.values[0], strict=True))
    weighted = [(w, values[a]) for a, w in shares.items() if w > 0 and not math.isnan(values[a])]
    mass = sum(w for w, _ in weighted)
    value = sum(w * v for w, v in weighted) / mass if mass > 0 else math.nan
    return {
        "search_policy": [(orders[a], float(s)) for a, s in shares.items() if a in orders],
        "search_value": float(value),
    }


class _RootActions:
    """A game whose side-0 actions at the given root states are fixed (the request's)."""

    def __init__(self, game: WorldGame, roots: Sequence[BattleState], ours: list[Action]):
        self.game = game
        self.roots = {id(s) for s in roots}
        self.ours = ours

    def actions(self, state: BattleState, side: int) -> list[Action]:
        if side == 0 and id(state) in self.roots:
            return list(self.ours)
        return self.game.actions(state, side)

    def step(self, state: BattleState, a0: Action, a1: Action, rng: np.random.Generator) -> Any:
        return self.game.step(state, a0, a1, rng)

    def terminal_value(self, state: BattleState) -> float | None:
        return self.game.terminal_value(state)
