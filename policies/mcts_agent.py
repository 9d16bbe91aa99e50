"""``mcts``: sampled-set simultaneous-move MCTS over the world model.

Each decision:

1. draws ``determinizations`` complete guesses of the opponent's hidden sets from the
   belief (:meth:`~pokegym.world.priors.BeliefState.sample_determinizations`; one guess is
   the modal set when ``determinizations=1``) and builds one world-model state per guess;
2. runs one simultaneous-move search tree per state (:class:`~policies.mcts.SMMCTS`),
   round-robin, until the time budget (or the iteration budget) is spent — our actions at
   the root are exactly the legal orders of the request;
3. sums the root visit shares over the trees and plays the most visited action.

Leaves are scored by the hand-written evaluator (``evaluator=heuristic``) or by the
distilled value network (``evaluator=network``, the shipped checkpoint unless
``checkpoint=`` names another). ``chance=sampled`` draws each turn's random events
(misses, critical hits, secondary effects, speed ties) instead of the world model's
expected turn. ``prior=abyssal`` gives the rule-based agent's choice a share of the
prior at the root (PUCT); ``prior=none`` uses plain UCB1 everywhere.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from poke_env.battle import AbstractBattle
from poke_env.player.battle_order import BattleOrder, DefaultBattleOrder

from pokegym.world.data import load_dex
from pokegym.world.priors import belief_for
from pokegym.world.state import BattleState
from pokegym.world.transition import Action, TransitionModel
from policies.base import Policy
from policies.mcts import SMMCTS, RootStats, SearchConfig
from policies.minimax import decision_state, root_actions
from policies.search import HeuristicEvaluator, legal_actions, state_key, terminal_value

EVALUATORS = ("heuristic", "network")
CHANCE_MODES = ("expected", "sampled")
PRIORS = ("none", "abyssal")
# Seconds kept in hand before a decision's deadline for building and sending the order.
DEADLINE_MARGIN = 0.05


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


class RootPrior:
    """A prior at the root only: ``share`` on one favoured action of side 0, the rest
    spread evenly; uniform everywhere else."""

    def __init__(self, root: BattleState, favoured: Action | None, share: float):
        self.root = root
        self.favoured = favoured
        self.share = share

    def prior(self, state: BattleState, side: int, actions: list[Action]) -> list[float]:
        n = len(actions)
        if side != 0 or state is not self.root or self.favoured not in actions or n == 1:
            return [1.0 / n] * n
        rest = (1.0 - self.share) / (n - 1)
        return [self.share if a == self.favoured else rest for a in actions]


class MCTSPolicy(Policy):
    """Simultaneous-move MCTS over sampled determinizations (see the module docstring).

    Args:
        budget: seconds of search per decision.
        iterations: a fixed number of iterations per decision instead (0: use ``budget``);
            with a seed this makes every decision reproducible.
        determinizations: opponent-set guesses searched per decision (one tree each).
        evaluator: ``heuristic`` or ``network`` leaves.
        checkpoint: the value network's checkpoint folder (``evaluator=network``).
        selection: ``duct`` or ``exp3`` (see :class:`~policies.mcts.SearchConfig`).
        exploration: UCB1's ``c`` (``exp3``: the share of uniform exploration).
        max_turns: depth below the root (in turns) at which states are evaluated.
        chance: ``expected`` (the world model's expected turn) or ``sampled``.
        prior: ``none`` or ``abyssal`` (the rules' choice gets ``prior_share`` of the
            root prior; PUCT).
        tera: allow Terastallization among our root actions.
    """

    name = "mcts"

    def __init__(
        self,
        seed: int | None = None,
        budget: float = 0.5,
        iterations: int = 0,
        determinizations: int = 4,
        evaluator: str = "heuristic",
        checkpoint: str | None = None,
        selection: str = "duct",
        exploration: float = 0.6,
        max_turns: int = 6,
        chance: str = "expected",
        prior: str = "none",
        prior_share: float = 0.5,
        prior_weight: float = 1.0,
        tera: bool = True,
    ):
        super().__init__(seed)
        if not float(budget) > 0:
            raise ValueError("budget is the seconds of search per decision (> 0)")
        if int(iterations) < 0:
            raise ValueError("iterations is a number of iterations per decision (0: use budget)")
        if int(determinizations) < 1:
            raise ValueError("determinizations is the number of trees per decision (1 or more)")
        if evaluator not in EVALUATORS:
            raise ValueError(f"evaluator is one of {', '.join(EVALUATORS)}, not {evaluator!r}")
        if chance not in CHANCE_MODES:
            raise ValueError(f"chance is one of {', '.join(CHANCE_MODES)}, not {chance!r}")
        if prior not in PRIORS:
            raise ValueError(f"prior is one of {', '.join(PRIORS)}, not {prior!r}")
        if not 0.0 < float(prior_share) < 1.0:
            raise ValueError("prior_share is the favoured action's prior, in (0, 1)")
        self.config = SearchConfig(selection=str(selection), exploration=float(exploration),
                                   max_turns=int(max_turns), chance=chance == "sampled",
                                   prior_weight=float(prior_weight))  # fmt: skip
        self.budget = float(budget)
        self.iterations = int(iterations)
        self.determinizations = int(determinizations)
        self.evaluator_name = evaluator
        self.chance = chance
        self.prior_name = prior
        self.prior_share = float(prior_share)
        self.tera = bool(tera)
        self.network: Any = None
        if evaluator == "network":
            from policies.value_net import CheckpointError, default_checkpoint, load_checkpoint

            folder = Path(checkpoint) if checkpoint else default_checkpoint("gen9randombattle")
            if not folder.exists():
                raise CheckpointError(
                    f"No value-network checkpoint at {folder}. Train one with "
                    "`pokegym distill --out DIR`, then pass checkpoint=DIR."
                )
            self.network = load_checkpoint(folder)
        self._anchor = None
        if prior == "abyssal":
            from policies.abyssal import AbyssalPolicy

            self._anchor = AbyssalPolicy(seed)
        self._models: dict[int, tuple[TransitionModel, TransitionModel | None, Any]] = {}
        self.last_stats: RootStats | None = None
        self.latencies: list[float] = []
        self.iteration_counts: list[int] = []

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        if self._anchor is not None:
            self._anchor.seed(seed)

    # ---------------------------------------------------------------- roles
    def _roles(self, gen: int) -> tuple[TransitionModel, TransitionModel | None, Any]:
        roles = self._models.get(gen)
        if roles is None:
            dex = load_dex(gen)
            model = TransitionModel(dex)
            sampler = TransitionModel(dex, mode="sample") if self.chance == "sampled" else None
            if self.network is not None:
                from policies.distilled import ValueNetEvaluator
                from policies.value_net import StateEncoder

                evaluator: Any = ValueNetEvaluator(StateEncoder(model), self.network)
            else:
                evaluator = HeuristicEvaluator(model)
            roles = self._models[gen] = (model, sampler, evaluator)
        return roles

    def root_states(self, battle: AbstractBattle, dex: Any) -> list[BattleState]:
        """One world-model state per determinization drawn from the belief."""
        if self.determinizations == 1:
            return [decision_state(battle, dex)]
        worlds = belief_for(battle).sample_determinizations(self.rng, self.determinizations)
        return [decision_state(battle, dex, world) for world in worlds]

    # ---------------------------------------------------------------- choice
    def choose(self, battle: AbstractBattle) -> BattleOrder:
        started = time.perf_counter()
        orders = root_actions(battle, self.tera)
        if not orders:
            return DefaultBattleOrder()
        if len(orders) == 1 or battle.opponent_active_pokemon is None:
            return next(iter(orders.values()))
        model, sampler, evaluator = self._roles(battle.gen)
        states = self.root_states(battle, model.dex)
        ours = list(orders)
        favoured = self._favoured(battle, orders)
        stats = self.search(states, ours, evaluator, WorldGame(model, sampler), favoured,
                            started)  # fmt: skip
        self.last_stats = stats
        action = stats.best(0)
        self.latencies.append(time.perf_counter() - started)
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
    ) -> RootStats:
        """The root statistics of one tree per state, our root actions fixed to ``ours``."""
        game = _RootActions(game, states, ours)
        prior = None
        if favoured is not None:
            prior = _Priors([RootPrior(s, favoured, self.prior_share) for s in states])
        search = SMMCTS(game, evaluator, self.config, prior=prior,
                        outcome_key=state_key if self.config.chance else None)  # fmt: skip
        if self.iterations:
            return search.search(states, self.rng, iterations=self.iterations)
        spent = time.perf_counter() - started
        budget = max(0.0, self.budget - spent - DEADLINE_MARGIN)
        return search.search(states, self.rng, budget=budget)

    def _favoured(self, battle: AbstractBattle, orders: dict[Action, BattleOrder]) -> Action | None:
        if self._anchor is None:
            return None
        from policies.distilled import world_action

        action = world_action(self._anchor.choose(battle), battle)
        return action if action in orders else None


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


class _Priors:
    """Dispatches to the :class:`RootPrior` of the tree a state belongs to."""

    def __init__(self, priors: list[RootPrior]):
        self.priors = priors

    def prior(self, state: BattleState, side: int, actions: list[Action]) -> list[float]:
        for p in self.priors:
            if state is p.root:
                return p.prior(state, side, actions)
        n = len(actions)
        return [1.0 / n] * n


def outcome_key(state: BattleState) -> Hashable:
    """What makes two sampled outcomes of a turn the same search node."""
    return state_key(state)
