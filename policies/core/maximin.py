"""The maximin frame: a battle's decision by the simultaneous-move search of
:mod:`policies.search.maximin` (the ``minimax`` agent as it is, with heuristic roles).

Each decision builds the world-model state from the live battle (the opponent's hidden
sets from the modal set of the priors), asks the one-step lookahead for our candidates and
the opponent's (the paper's "always add the lookahead's move and the best switch"), and
scores leaves with :class:`~policies.search.maximin.HeuristicEvaluator`. It is the PokéChamp agent
without a language model — the "heuristic evaluator" ablation — and the frame that the
LLM agent (:mod:`policies.pokechamp`) and the distilled maximin
(:class:`policies.minimax.DistilledPolicy`) fill with other roles (override
:meth:`MinimaxPolicy.roles`). The agent ``minimax`` is registered from
:mod:`policies.minimax`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from poke_env.battle import AbstractBattle
from poke_env.player.battle_order import BattleOrder, DefaultBattleOrder

from pokegym.world.data import Dex, load_dex
from pokegym.world.priors import belief_for
from pokegym.world.state import BattleState
from pokegym.world.transition import Action, TransitionModel
from policies.base import Policy
from policies.core.battle import decision_state, root_actions
from policies.core.deadline import COARSE_DEADLINE_MARGIN, seconds_left
from policies.core.evaluation import HeuristicEvaluator
from policies.search.maximin import (
    Evaluator,
    LookaheadProposer,
    MinimaxSearch,
    Proposer,
)


@dataclass(frozen=True)
class MinimaxOptions:
    """The options of ``minimax`` (:class:`MinimaxPolicy`), checked when built; each is
    described in that class's docstring."""

    depth: int = 2
    width: int = 4
    opponent_width: int = 4
    time_limit: float = 10.0
    tera: bool = True
    caution: float = 1.0
    reply_decay: float = 1.0
    ko_rule: bool = False
    determinizations: int = 1
    chance: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.caution <= 1.0:
            raise ValueError("caution must be in [0, 1] (1 = maximin)")
        if not 0.0 < self.reply_decay <= 1.0:
            raise ValueError("reply_decay must be in (0, 1] (1 = the replies equally likely)")
        if self.determinizations < 1:
            raise ValueError("determinizations is the number of worlds searched (1 or more)")
        if self.chance < 0:
            raise ValueError("chance is the number of sampled first turns (0 = the expected turn)")
        if self.time_limit <= 0:
            raise ValueError("time_limit must be positive (seconds per decision)")


class MinimaxPolicy(Policy):
    """Depth-``depth`` maximin over ``width`` × ``opponent_width`` joint actions per turn.

    Args:
        depth: full turns searched (iterative deepening: 1, then 2, ...).
        width: our candidates per node; opponent_width: the opponent's.
        time_limit: seconds per decision (the search is anytime: it returns the deepest
            completed answer, at worst the lookahead's move, before this).
        tera: allow Terastallization among our candidates.
        caution: 1 = maximin; lower blends in the mean over the opponent's replies
            (see :class:`~policies.search.maximin.MinimaxSearch`).
        reply_decay: weight of the opponent model's ``i``-th reply in that mean is
            ``reply_decay ** i`` (1 = equally likely).
        determinizations: worlds searched per decision: the modal one and ``n - 1`` with
            the opponent's sets drawn from the belief, each in its share of the time; the
            root values are averaged over the worlds that finished as deep as the first.
        ko_rule: the world model knocks a Pokémon out when a hit's chance to do so is at
            least one half (see :class:`~pokegym.world.transition.TransitionModel`).
        chance: sampled first turns per joint action at the root (0: the expected turn;
            see :class:`~policies.search.maximin.MinimaxSearch`).
    """

    name = "minimax"

    def __init__(self, seed: int | None = None, **options: Any):
        super().__init__(seed)
        o = self.minimax_options = MinimaxOptions(**options)
        self.caution = o.caution
        self.reply_decay = o.reply_decay
        self.ko_rule = o.ko_rule
        self.determinizations = o.determinizations
        self.chance = o.chance
        self._samplers: dict[int, TransitionModel] = {}
        self.depth = o.depth
        self.width = o.width
        self.opponent_width = o.opponent_width
        self.time_limit = o.time_limit
        self.tera = o.tera
        self._models: dict[int, TransitionModel] = {}
        self.last_search: MinimaxSearch | None = None
        #: How much better (in win chance) the search's choice must be to replace the anchor.
        self.anchor_margin = 0.0
        #: Weight of :meth:`predict_reply`'s reply in the root values (1: it alone).
        self.predicted_weight = 1.0

    # ------------------------------------------------------------------ roles
    def model(self, gen: int) -> TransitionModel:
        model = self._models.get(gen)
        if model is None:
            model = self._models[gen] = TransitionModel(load_dex(gen), ko_rule=self.ko_rule)
        return model

    def search_for(
        self,
        model: TransitionModel,
        proposer: Proposer,
        opponent: Proposer,
        evaluator: Evaluator,
        caution: float,
    ) -> MinimaxSearch:
        """This agent's search over ``model`` with these roles."""
        sampler = None
        if self.chance:
            sampler = self._samplers.get(id(model))
            if sampler is None:
                sampler = self._samplers[id(model)] = TransitionModel(
                    model.dex, mode="sample", replacement=model.replacement,
                    ko_rule=model.ko_rule)  # fmt: skip
        return MinimaxSearch(model, proposer, opponent, evaluator, depth=self.depth,
                             caution=caution, reply_decay=self.reply_decay,
                             chance=self.chance, sampler=sampler, rng=self.rng)  # fmt: skip

    def roles(
        self, battle: AbstractBattle, model: TransitionModel
    ) -> tuple[Proposer, Proposer, Evaluator]:
        """(our proposer, the opponent model, the leaf evaluator) for this decision."""
        return (
            LookaheadProposer(model, self.width),
            LookaheadProposer(model, self.opponent_width),
            HeuristicEvaluator(model),
        )

    # ---------------------------------------------------------------- choice
    def state(self, battle: AbstractBattle, dex: Dex) -> BattleState:
        return decision_state(battle, dex)

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        started = time.monotonic()
        orders = root_actions(battle, self.tera)
        if not orders:
            return DefaultBattleOrder()
        if len(orders) == 1 or battle.opponent_active_pokemon is None:
            return next(iter(orders.values()))
        anchor = self.anchor(battle, orders)
        margin = self.anchor_margin_now() if anchor is not None else 0.0
        if anchor is not None and math.isinf(margin):
            return orders[anchor]  # never overruled: no need to search
        model = self.model(battle.gen)
        state = self.state(battle, model.dex)
        proposer, opponent, evaluator = self.roles(battle, model)
        caution = self.caution_now(state, evaluator)
        search = self.search_for(model, proposer, opponent, evaluator, caution)
        self.last_search = search
        actions = list(orders)
        fallback = (
            anchor
            if anchor is not None
            else next(iter(proposer.propose(state, 0, actions)[:1]), None)
        )
        budget = seconds_left(self.time_limit, 0.0, now=0.0, margin=COARSE_DEADLINE_MARGIN)
        worlds = self.determinizations
        predicted = self.predict_reply(battle, state)
        action = search.search(state, actions, deadline=started + budget / worlds,
                               fallback=fallback, predicted=predicted,
                               predicted_weight=self.predicted_weight)  # fmt: skip
        values = search.last_tree.values
        if worlds > 1 and search.last_tree.depth_completed:
            values = self._other_worlds(battle, model, search, actions, fallback, started, budget,
                                        predicted)  # fmt: skip
            action = max(values, key=lambda a: (values[a], a == fallback))
            search.last_tree.chosen = action
        if anchor is not None and action != anchor:
            if anchor in values and values[action] - values[anchor] <= margin:
                action = search.last_tree.chosen = anchor
        return orders[action]

    def _other_worlds(
        self,
        battle: AbstractBattle,
        model: TransitionModel,
        first: MinimaxSearch,
        actions: list[Action],
        fallback: Action | None,
        started: float,
        budget: float,
        predicted: Action | None = None,
    ) -> dict[Action, float]:
        """Root values averaged over the modal world and ``determinizations - 1`` sampled
        ones (the opponent's sets drawn from the belief); actions every completed search
        valued. A sampled world whose search does not finish depth 1 is left out."""
        tables = [first.last_tree.values]
        worlds = self.determinizations
        sampled = belief_for(battle).sample_determinizations(self.rng, worlds - 1)
        for i, determinization in enumerate(sampled, start=2):
            state = decision_state(battle, model.dex, determinization)
            proposer, opponent, evaluator = self.roles(battle, model)
            search = self.search_for(model, proposer, opponent, evaluator, first.caution)
            search.search(state, actions, deadline=started + budget * i / worlds,
                          fallback=fallback, predicted=predicted,
                          predicted_weight=self.predicted_weight)  # fmt: skip
            if search.last_tree.depth_completed == first.last_tree.depth_completed:
                tables.append(search.last_tree.values)
        shared = [a for a in tables[0] if all(a in table for table in tables)]
        if not shared:
            return dict(tables[0])
        return {a: sum(table[a] for table in tables) / len(tables) for a in shared}

    def caution_now(self, state: BattleState, evaluator: Evaluator) -> float:
        """The caution of this decision's search (``caution``; subclasses may adapt it)."""
        return self.caution

    def predict_reply(self, battle: AbstractBattle, state: BattleState) -> Action | None:
        """The opponent's expected reply now (side 1's world-model action), or None (the
        default: the search backs up over the opponent model's replies alone). With one,
        the root values weight it by :attr:`predicted_weight`
        (see :meth:`~policies.search.maximin.MinimaxSearch.search`)."""
        return None

    def anchor_margin_now(self) -> float:
        """The margin for the anchor just given (infinite: play it without searching)."""
        return self.anchor_margin

    def anchor(self, battle: AbstractBattle, orders: dict[Action, BattleOrder]) -> Action | None:
        """A trusted default action for this decision, or None (the default).

        When a subclass gives one, it is always a root candidate, it is played when the
        search does not finish depth 1, and the search's choice replaces it only when its
        backed-up value is higher by more than :attr:`anchor_margin`.
        """
        return None
