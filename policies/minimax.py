"""``minimax``: the maximin over the world model with heuristic roles
(:class:`~policies.core.maximin.MinimaxPolicy`), and the distilled agent's maximin variant
(``distilled:search=maximin``, :class:`DistilledPolicy`): the same search with the value
network at the leaves and these roles:

* **evaluator**: :class:`~policies.core.evaluators.ValueNetEvaluator`, the value network
  of a checkpoint (:mod:`policies.value_net`) over the world-model state encoding of each
  leaf, batched per node; optionally blended with the k-NN value of an experience memory
  (:mod:`memory.experience`) and with the hand-written evaluator;
* **proposer** (ours): the one-step lookahead's candidates (its best move and best
  switch always included) plus, at the root, the actions the network's policy-prior
  head and the memory's action priors rate highest;
* **opponent model**: the lookahead's candidates for the opponent.
* **anchor** (``anchor=abyssal``, the default): the rule-based ``abyssal`` agent's choice
  is always a root candidate and is what the agent plays unless the search values another
  action higher by more than ``anchor_margin``. The network is right on average but noisy
  on single positions, and the rules are good where a two-turn search sees little
  (hazards, set-up and status pay off over many turns): the search only overrules them
  where it sees a clear difference — a missed KO, a hit it need not take.

The value network costs well under a millisecond per batch, so the search runs two full
turns (``depth=2``) inside a fraction of a second where an LLM evaluator needs seconds
per call.

Without ``checkpoint=`` the agent loads the checkpoint shipped for the battle format
(``policies/checkpoints/distilled-<format>``); ``memory=`` points at a memory folder
built for that checkpoint (``pokegym memorize`` or ``pokegym distill --memory``).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from poke_env.battle import AbstractBattle
from poke_env.player.battle_order import BattleOrder

from memory.experience import StateMemory
from pokegym.actions import GIMMICK_MOVE, MOVE, N_MOVES, SWITCH, request_moves
from pokegym.observation import ObservationEncoder
from pokegym.world.data import to_id
from pokegym.world.priors import belief_for
from pokegym.world.state import BattleState
from pokegym.world.transition import Action, TransitionModel
from policies.core.anchors import ANCHORS, anchor_policy, trusted_rules
from policies.core.battle import world_action
from policies.core.evaluators import ValueNetEvaluator
from policies.core.maximin import MinimaxOptions, MinimaxPolicy
from policies.opponent_view import RuleReplyModel
from policies.search.maximin import Evaluator, LookaheadProposer, Proposer
from policies.value_net import (
    CheckpointError,
    StateEncoder,
    action_label,
    checkpoint_id,
    default_checkpoint,
    load_checkpoint,
    load_ensemble,
)

DEFAULT_FORMAT = "gen9randombattle"


# ---------------------------------------------------------------------- roles
class PriorProposer:
    """The lookahead's candidates; at the root also the prior's favourites.

    Args:
        base: the lookahead proposer (its width bounds the candidates off the root).
        root_turn: the root state's turn (every search child is a later turn).
        root_priors: ``(state, legal) -> actions best first`` for the root, or None.
        extra: how many prior actions may be added beyond the lookahead's.
    """

    def __init__(
        self,
        base: LookaheadProposer,
        root_turn: int,
        root_priors: Callable[[BattleState, list[Action]], list[Action]] | None,
        extra: int = 1,
    ):
        self.base = base
        self.root_turn = root_turn
        self.root_priors = root_priors
        self.extra = extra
        self._root_cache: dict[tuple[Action, ...], list[Action]] = {}

    def propose(self, state: BattleState, side: int, legal: list[Action]) -> list[Action]:
        chosen = self.base.propose(state, side, legal)
        if side != 0 or state.turn != self.root_turn or self.root_priors is None or not self.extra:
            return chosen
        key = tuple(legal)
        if key not in self._root_cache:
            added = 0
            extended = list(chosen)
            for action in self.root_priors(state, legal):
                if added >= self.extra:
                    break
                if action in legal and action not in extended:
                    extended.append(action)
                    added += 1
            self._root_cache[key] = extended
        return list(self._root_cache[key])


# ---------------------------------------------------------------------- agent
@dataclasses.dataclass(frozen=True)
class DistilledOptions(MinimaxOptions):
    """The options of ``distilled:search=maximin`` (:class:`DistilledPolicy`): the search's
    (:class:`~policies.core.maximin.MinimaxOptions`, other defaults) and its own, checked when
    built; each is described in that class's docstring."""

    width: int = 6
    time_limit: float = 0.7
    caution: float = 0.5
    checkpoint: str | None = None
    memory: str | None = None
    prior_actions: int = 1
    memory_weight: float = 0.0
    heuristic_weight: float = 0.0
    anchor: str | None = "abyssal"
    anchor_margin: float = 0.05
    opponent_status: int = 0
    ensemble: bool = True
    trust: str = ""
    adaptive_caution: float = 0.0
    predict: str | None = "none"
    predict_weight: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("anchor", "predict"):  # None, "" and False all mean no agent
            value = getattr(self, name)
            object.__setattr__(self, name, "none" if value in (None, "", False) else str(value))
        if self.depth < 2:
            raise ValueError("the distilled agent searches at least two full turns (depth >= 2)")
        if self.opponent_status < 0:
            raise ValueError("opponent_status is a number of reply slots (0 or more)")
        if self.anchor not in ANCHORS:
            raise ValueError(f"anchor must be one of {sorted(ANCHORS)}, not {self.anchor!r}")
        if not 0.0 <= self.anchor_margin <= 1.0:
            raise ValueError("anchor_margin is a win-chance difference in [0, 1]")
        trusted_rules(self.trust)  # names the valid rules when one is not
        if not 0.0 <= self.adaptive_caution <= 1.0:
            raise ValueError("adaptive_caution is in [0, 1] (0 = the same caution throughout)")
        if self.predict not in ANCHORS:
            raise ValueError(f"predict must be one of {sorted(ANCHORS)}, not {self.predict!r}")
        if not 0.0 <= self.predict_weight <= 1.0:
            raise ValueError("predict_weight is in [0, 1] (1 = a best response to the "
                             "predicted reply alone)")  # fmt: skip

    def trusted_rules(self) -> frozenset[str]:
        return trusted_rules(self.trust)


class DistilledPolicy(MinimaxPolicy):
    """Depth-``depth`` maximin with a distilled value network at the leaves.

    Args:
        checkpoint: a checkpoint folder (default: the one shipped for gen9randombattle).
        memory: an experience-memory folder built for that checkpoint (optional).
        depth, width, opponent_width, time_limit, tera: as :class:`MinimaxPolicy`.
        prior_actions: root candidates added from the policy-prior head and the memory.
        memory_weight, heuristic_weight: leaf-value blend (see
            :class:`~policies.core.evaluators.ValueNetEvaluator`).
        anchor: a rule-based agent whose choice is the default action (``abyssal``) or
            ``none``. The search overrules it only when its own choice is worth more than
            ``anchor_margin`` (win chance) more: a value network that is right on average
            is still noisy on single positions, and the rules are strong where the world
            model is weak (hazards, set-up, status over many turns).
        caution: 1 = maximin over the opponent's replies; lower blends in their mean.
        reply_decay: that mean weights the opponent model's ``i``-th reply by
            ``reply_decay ** i`` (1 = equally likely).
        ko_rule: the world model's KO rule (see :class:`~policies.core.maximin.MinimaxPolicy`).
        ensemble: average the checkpoint with the members under its ``members/``
            folder (:func:`~policies.value_net.load_ensemble`); False uses it alone.
        determinizations: worlds searched per decision (see :class:`MinimaxPolicy`).
        chance: sampled first turns per joint action at the root (see
            :class:`MinimaxPolicy`; 0: the expected turn).
        adaptive_caution: how far ``caution`` moves with the network's value of the root
            (see :meth:`caution_now`).
        trust: anchor rules whose choice is never overruled, joined by ``+`` (e.g.
            ``finish+hazard``; names in :data:`ANCHOR_RULES`): rules whose payoff lies
            beyond the search's two turns.
        opponent_status: places among the opponent's replies kept for its status moves
            (hazards, set-up, status), right after its best attack and best switch.
        predict: a rule-based agent asked what it would play in the opponent's place
            (``abyssal``; :class:`~policies.opponent_view.RuleReplyModel`), or ``none``.
            The root values then weight that reply by ``predict_weight`` (1: a best
            response to it; see :meth:`~policies.search.maximin.MinimaxSearch.search`).
    """

    name = "distilled"

    def __init__(self, seed: int | None = None, **options: Any):
        o = self.options = DistilledOptions(**options)
        search = {f.name: getattr(o, f.name) for f in dataclasses.fields(MinimaxOptions)}
        super().__init__(seed, **search)
        checkpoint, memory, ensemble = o.checkpoint, o.memory, o.ensemble
        folder = Path(checkpoint) if checkpoint else default_checkpoint(DEFAULT_FORMAT)
        if not folder.exists():
            raise CheckpointError(
                f"No distilled checkpoint at {folder}. Train one with `pokegym collect` and "
                "`pokegym distill --out DIR`, then pass checkpoint=DIR."
            )
        self.checkpoint = folder
        self.network = load_ensemble(folder) if ensemble else load_checkpoint(folder)
        self.memory = None
        if memory:
            self.memory = StateMemory.load(memory, embedding_id=checkpoint_id(folder))
        self.prior_actions = o.prior_actions
        self.opponent_status = o.opponent_status
        self.memory_weight = o.memory_weight
        self.heuristic_weight = o.heuristic_weight
        self.anchor_name = o.anchor
        self.anchor_margin = o.anchor_margin
        self._anchor_policy = anchor_policy(o.anchor, seed)
        self.trusted_rules = o.trusted_rules()
        self.adaptive_caution = o.adaptive_caution
        self.predict_name = o.predict
        self.predicted_weight = o.predict_weight
        predictor = anchor_policy(o.predict, seed)
        self._reply_model = RuleReplyModel(predictor) if predictor is not None else None
        self.predictions = 0
        self._anchor_rule: str | None = None
        self._encoders: dict[int, StateEncoder] = {}
        self._observers: dict[int, Any] = {}
        self.depths: list[int] = []
        self.latencies: list[float] = []

    def encoder(self, model: TransitionModel) -> StateEncoder:
        encoder = self._encoders.get(id(model))
        if encoder is None:
            encoder = self._encoders[id(model)] = StateEncoder(model)
        return encoder

    def roles(
        self, battle: AbstractBattle, model: TransitionModel
    ) -> tuple[Proposer, Proposer, Evaluator]:
        encoder = self.encoder(model)
        evaluator = ValueNetEvaluator(encoder, self.network, self.memory,
                                      self.memory_weight, self.heuristic_weight)  # fmt: skip
        priors = self._root_priors(battle, encoder) if self.prior_actions else None
        proposer = PriorProposer(LookaheadProposer(model, self.width), battle.turn, priors,
                                 self.prior_actions)  # fmt: skip
        opponent = LookaheadProposer(model, self.opponent_width, self.opponent_status)
        return proposer, opponent, evaluator

    def _root_priors(
        self, battle: AbstractBattle, encoder: StateEncoder
    ) -> Callable[[BattleState, list[Action]], list[Action]] | None:
        """Root actions ranked by the policy-prior head, then by the memory."""
        logits: dict[Action, float] = {}
        if self.network.config.observation_features:
            observer = self._observers.get(battle.gen)
            if observer is None:
                observer = self._observers[battle.gen] = ObservationEncoder(battle.gen)
            scores = self.network.policy_logits(observer.encode(battle))
            if scores is not None:
                moves = [to_id(m["id"]) for m in request_moves(battle)][:N_MOVES]
                for i, move in enumerate(moves):
                    logits[("move", move, False)] = float(scores[0, MOVE + i])
                    logits[("move", move, True)] = float(scores[0, GIMMICK_MOVE + i])
                for i in range(len(battle.team)):
                    if SWITCH + i < scores.shape[1] - 1:
                        logits[("switch", i, False)] = float(scores[0, SWITCH + i])
        memory = self.memory
        if not logits and memory is None:
            return None

        def ranked(state: BattleState, legal: list[Action]) -> list[Action]:
            order: list[Action] = sorted((a for a in legal if a in logits),
                                         key=lambda a: -logits[a])  # fmt: skip
            if memory is not None:
                features = encoder.encode(state)
                hood = memory.query(self.network.embed(features), k=32)[0]
                labels = [action_label(state, 0, a) for a in legal]
                scores = memory.action_priors(hood, labels)
                best = sorted(zip(scores, range(len(legal)), strict=True), reverse=True)
                order = [legal[i] for s, i in best if s > 0][:2] + order
            return list(dict.fromkeys(order))

        return ranked

    def anchor(self, battle: AbstractBattle, orders: dict[Action, BattleOrder]) -> Action | None:
        """The rule-based agent's choice (``anchor=abyssal``), when it is a legal action."""
        self._anchor_rule = None
        if self._anchor_policy is None:
            return None
        action = world_action(self._anchor_policy.choose(battle), battle)
        self._anchor_rule = getattr(self._anchor_policy, "last_rule", None)
        return action if action in orders else None

    def predict_reply(self, battle: AbstractBattle, state: BattleState) -> Action | None:
        """The reply the ``predict`` rules would play in the opponent's place (its hidden
        moves and Tera type from the modal set of the priors, as in the search's state)."""
        if self._reply_model is None:
            return None
        reply = self._reply_model.predict(battle, belief_for(battle).modal_determinization())
        self.predictions += reply is not None
        return reply

    def caution_now(self, state: BattleState, evaluator: Evaluator) -> float:
        """``caution``, moved up when the network says we are ahead and down when behind:
        ``caution + adaptive_caution · (2 · v(root) − 1)``, clipped to [0, 1]. Ahead, the
        safe action against every reply keeps the lead; behind, only actions that pay off
        against the opponent's likely replies can turn the battle."""
        if not self.adaptive_caution:
            return self.caution
        value = evaluator.evaluate([state])[0]
        return min(1.0, max(0.0, self.caution + self.adaptive_caution * (2.0 * value - 1.0)))

    def anchor_margin_now(self) -> float:
        """``anchor_margin``, or infinite (played without a search) when a trusted rule
        chose the anchor."""
        if self._anchor_rule is not None and self._anchor_rule in self.trusted_rules:
            return math.inf
        return self.anchor_margin

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        start = time.perf_counter()
        self.last_search = None
        order = super().choose(battle)
        if self.last_search is not None:
            self.depths.append(self.last_search.last_tree.depth_completed)
            self.latencies.append(time.perf_counter() - start)
        return order


__all__ = [
    "DistilledOptions",
    "DistilledPolicy",
    "MinimaxOptions",
    "MinimaxPolicy",
    "PriorProposer",
]
