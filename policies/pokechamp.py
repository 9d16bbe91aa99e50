"""``pokechamp``: the three LLM roles of PokéChamp inside the simultaneous-move minimax.

The frame is :class:`policies.core.maximin.MinimaxPolicy` (world-model state from the battle,
opponent sets from the priors, iterative-deepening maximin ``max_a min_b`` under a
deadline, batched and cached leaf evaluation); this agent fills its roles with a
language model:

* **player action sampling** (:class:`LLMProposer`): at the root, the model scores every
  legal action's label on the action prompt (battle description, last turns, the world
  model's one-step lookahead block); the ``candidates`` most likely join the lookahead's
  best move and best switch, which are always candidates. Deeper nodes are hypothetical
  states the prompt cannot describe: there the lookahead proposes its first
  ``inner_width`` actions (best move, best switch).
* **opponent modelling** (:class:`LLMOpponentModel`): the opponent's actions in the world
  model come from the priors (the modal set's moves, its seen Pokémon); at the root the
  model scores them on the opponent prompt and its ``opponent_candidates`` most likely
  join the lookahead's most damaging reply (always a candidate, so the search never
  ignores the biggest threat). Deeper nodes: the lookahead's first ``inner_width``.
* **value function** (:class:`LLMLeafEvaluator`): each leaf state is written as a short
  text (:func:`leaf_text`: the paper's factors: HP and Pokémon left on both sides, who is
  faster, our best move's effectiveness and turns to KO, the opponent's biggest threat,
  whether we switched) and scored on the value prompt: the probabilities of the score
  buckets 0-9 give an expected score, divided by 9 into [0, 1]. The leaves of a node are
  one ``score_batch`` call over the shared, cached battle description.

All model answers are cached within a turn (same prompt, same options: same answer).
The deadline of a decision comes from the turn clock (Showdown's 150 s bank + 15 s per
turn, minus a margin) or ``time_limit``; a model call expected to end after it is not
made (the lookahead's candidates, or the heuristic values at depth 1, take its place),
and a deeper iteration that cannot finish is dropped. The tree of every decision is
logged (``logging`` at INFO; also :attr:`PokeChampPolicy.last_log`).

``evaluator="heuristic"`` keeps the LLM proposer and opponent model but scores leaves with
:class:`policies.search.maximin.HeuristicEvaluator` (the ablation of the LLM value function).

``evaluator="distilled"`` is the hybrid: the language model where it is cheap and says
most (our candidates and the opponent's likely replies at the root, one call each per
turn), the distilled value network (:class:`policies.core.evaluators.ValueNetEvaluator`,
``checkpoint=`` or the shipped one) at every leaf, which costs well under a millisecond,
so the search goes two full turns deep by default (``depth`` up to 3) within the clock.
:attr:`PokeChampPolicy.depths` records the depth each decision completed; the arena's
usage columns count the model calls and tokens.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from poke_env.battle import AbstractBattle
from poke_env.player.battle_order import BattleOrder

from pokegym.llm import LanguageModel, LLMError, ScoreRequest, call_deadline, choose
from pokegym.text import VALUE_BUCKETS, BattlePrompter
from pokegym.world.data import Dex
from pokegym.world.priors import belief_for
from pokegym.world.state import BattleState, state_from_battle
from pokegym.world.transition import Action, TransitionModel
from policies.core.battle import root_actions
from policies.core.deadline import COARSE_DEADLINE_MARGIN, seconds_left
from policies.core.evaluation import HeuristicEvaluator
from policies.core.evaluators import ValueNetEvaluator
from policies.core.lookahead import one_step_lookahead
from policies.core.maximin import MinimaxPolicy
from policies.llm_common import DEFAULT_MODEL, Deadline, ModelHandle, TurnClock, _model_options
from policies.search.maximin import (
    Evaluator,
    LookaheadProposer,
    Proposer,
    SearchTimeout,
)
from policies.value_net import StateEncoder, agent_network

log = logging.getLogger(__name__)

BUCKET_VALUES = tuple(range(len(VALUE_BUCKETS)))
EVALUATORS = ("llm", "heuristic", "distilled")
"""Leaf evaluators: the model's score buckets, the hand-written value, the value network."""


# ------------------------------------------------------------------ leaf text
def _name(dex: Dex, table: str, key: str) -> str:
    entry = getattr(dex, table).get(key)
    return str(entry["name"]) if entry else key


def _turns(value: float) -> str:
    if math.isinf(value):
        return "cannot KO"
    turns = max(1, math.ceil(value - 1e-9))
    return f"KOs in about {turns} turn{'s' if turns != 1 else ''}"


def leaf_text(model: TransitionModel, state: BattleState, root: BattleState | None = None) -> str:
    """A compact description of a search leaf (species and move names only)."""
    dex = model.dex
    ours, theirs = state.sides
    unseen = int(state.notes.get("unseen", 0))
    lines = []

    def team(side: Any) -> str:
        parts = []
        for mon in side.mons:
            if mon.hp > 0:
                status = f" {mon.status}" if mon.status else ""
                parts.append(f"{_name(dex, 'species', mon.species)} {mon.hp_fraction:.0%}{status}")
        return ", ".join(parts) or "none"

    our_left, their_left = len(ours.alive()), len(theirs.alive())
    lines.append(f"Your Pokémon left: {our_left} ({team(ours)}).")
    extra = f" plus {unseen} not yet seen" if unseen else ""
    lines.append(f"Opponent's Pokémon left: {their_left}{extra} ({team(theirs)}).")
    a, b = ours.active_mon, theirs.active_mon
    a_name, b_name = _name(dex, "species", a.species), _name(dex, "species", b.species)
    if root is not None:
        before = root.sides[0].active_mon
        if root.sides[0].active != ours.active and before.hp > 0 and a.hp > 0:
            was = _name(dex, "species", before.species)
            lines.append(f"You switched {was} out for {a_name}.")
    if a.hp > 0 and b.hp > 0:
        faster = model.faster(state, 0)
        lines.append(f"Active: your {a_name} vs their {b_name}; you are "
                     f"{'faster' if faster else 'slower'}.")  # fmt: skip
        look = one_step_lookahead(model, state, names={})
        matchup = look.matchup(False, False)
        best, threat = matchup.best_ours(), matchup.best_theirs()
        if best is not None:
            factor = _effectiveness(dex, best.move, b)
            lines.append(f"Your best move {_name(dex, 'moves', best.move)} (x{factor:g}) "
                         f"{_turns(best.expected_turns)}.")  # fmt: skip
        if threat is not None:
            factor = _effectiveness(dex, threat.move, a)
            lines.append(f"Their biggest threat {_name(dex, 'moves', threat.move)} (x{factor:g}) "
                         f"{_turns(threat.expected_turns)} on your {a_name}.")  # fmt: skip
    return "\n".join(lines)


def _effectiveness(dex: Dex, move: str, defender: Any) -> float:
    entry = dex.moves.get(move, {})
    if not entry.get("type") or entry.get("category") == "Status":
        return 1.0
    return dex.effectiveness(entry["type"], defender.current_types())


def action_label(dex: Dex, state: BattleState, side: int, action: Action) -> str:
    """``move X`` / ``terastallize and move X`` / ``switch Species`` for a world-model action."""
    kind, arg, tera = action
    if kind == "switch":
        return f"switch {_name(dex, 'species', state.sides[side].mons[int(arg)].species)}"
    if kind == "pass":
        return "pass"
    label = f"move {_name(dex, 'moves', str(arg))}"
    return f"terastallize and {label}" if tera else label


# ----------------------------------------------------------------------- roles
class _Turn:
    """What one decision's roles share: the battle, the root state, the model, the cache."""

    def __init__(
        self,
        policy: PokeChampPolicy,
        battle: AbstractBattle,
        root: BattleState,
        model: TransitionModel,
        deadline: Deadline,
    ):
        self.policy = policy
        self.battle = battle
        self.root = root
        self.model = model
        self.deadline = deadline
        self.notes: dict[str, Any] = {}

    @property
    def llm(self) -> ModelHandle:
        return self.policy.llm

    def cached(self, key: tuple[Any, ...]) -> Any:
        return self.policy.turn_cache(self.battle).get(key)

    def store(self, key: tuple[Any, ...], value: Any) -> None:
        self.policy.turn_cache(self.battle)[key] = value


def _prompt_key(messages: Sequence[dict[str, str]], options: Sequence[str]) -> tuple[Any, ...]:
    return (tuple(m["content"] for m in messages), tuple(options))


class LLMProposer:
    """Our candidates: the lookahead's best move and best switch, plus the model's top
    ``m`` actions at the root (the lookahead alone at deeper nodes)."""

    def __init__(self, turn: _Turn, lookahead: LookaheadProposer, m: int, inner_width: int = 2):
        self.turn, self.lookahead, self.m, self.inner_width = turn, lookahead, m, inner_width

    def propose(self, state: BattleState, side: int, legal: list[Action]) -> list[Action]:
        base = self.lookahead.propose(state, side, legal)
        if state is not self.turn.root or side != 0:
            return base[: self.inner_width]
        chosen = list(base[:2])
        for action in self.ranking(legal):
            if len(chosen) >= 2 + self.m:
                break
            if action not in chosen:
                chosen.append(action)
        if len(chosen) == len(base[:2]):  # no model answer: the lookahead's other picks
            chosen = list(base)
        self.turn.notes["our_candidates"] = chosen
        return chosen

    def ranking(self, legal: list[Action]) -> list[Action]:
        """The legal root actions the model finds most likely, best first ([] if none)."""
        turn = self.turn
        labels = {action_label(turn.model.dex, turn.root, 0, a): a for a in legal}
        prompter = turn.policy.prompter
        messages, actions = prompter.action_prompt(turn.battle)
        options = [a.label for a in actions if a.label in labels]
        if len(options) < 2:
            return [labels[o] for o in options]
        key = ("propose", *_prompt_key(messages, options))
        probabilities = turn.cached(key)
        if probabilities is None:
            kind = "propose-reasoning" if turn.policy.reasoning else "propose"
            if not turn.llm.affordable(kind, turn.deadline):
                return []
            began = time.monotonic()
            try:
                decision = choose(
                    turn.llm.model, messages, options, reasoning=turn.policy.reasoning,
                    reasoning_tokens=turn.policy.reasoning_tokens,
                )  # fmt: skip
            except LLMError as error:  # choose() falls back itself; this is a backstop
                log.warning("pokechamp: the proposer failed (%s)", error)
                return []
            turn.llm.record(kind, decision.cost, time.monotonic() - began)
            if decision.scores is None:
                turn.llm.usage.fallbacks += 1
                return []
            probabilities = dict(zip(options, decision.scores.probabilities(), strict=True))
            turn.store(key, probabilities)
        turn.notes["our_probabilities"] = probabilities
        ranked = sorted(options, key=lambda o: (-probabilities[o], options.index(o)))
        return [labels[o] for o in ranked]


class LLMOpponentModel:
    """The opponent's candidates: the lookahead's most damaging reply plus the model's
    ``m`` most likely actions at the root, among those the priors allow."""

    def __init__(self, turn: _Turn, lookahead: LookaheadProposer, m: int, inner_width: int = 2):
        self.turn, self.lookahead, self.m, self.inner_width = turn, lookahead, m, inner_width

    def propose(self, state: BattleState, side: int, legal: list[Action]) -> list[Action]:
        base = self.lookahead.propose(state, side, legal)
        if state is not self.turn.root or side != 1:
            return base[: self.inner_width]
        chosen = list(base[:1])
        for action in self.ranking(legal):
            if len(chosen) >= 1 + self.m:
                break
            if action not in chosen:
                chosen.append(action)
        if len(chosen) == len(base[:1]):
            chosen = list(base)
        self.turn.notes["their_candidates"] = chosen
        return chosen

    def ranking(self, legal: list[Action]) -> list[Action]:
        turn = self.turn
        labels: dict[str, Action] = {}
        for action in legal:
            if not action[2]:  # the model predicts moves and switches, not Terastallization
                labels.setdefault(action_label(turn.model.dex, turn.root, 1, action), action)
        options = list(labels)
        if len(options) < 2:
            return [labels[o] for o in options]
        messages, options = turn.policy.prompter.opponent_prompt(turn.battle, options)
        key = ("opponent", *_prompt_key(messages, options))
        probabilities = turn.cached(key)
        if probabilities is None:
            if not turn.llm.affordable("opponent", turn.deadline):
                return []
            began = time.monotonic()
            try:
                scores = turn.llm.model.score(messages, options)
            except LLMError as error:
                log.warning("pokechamp: the opponent model failed (%s)", error)
                turn.llm.usage.fallbacks += 1
                return []
            turn.llm.record("opponent", scores.cost, time.monotonic() - began)
            probabilities = dict(zip(options, scores.probabilities(), strict=True))
            turn.store(key, probabilities)
        turn.notes["their_probabilities"] = probabilities
        ranked = sorted(options, key=lambda o: (-probabilities[o], options.index(o)))
        return [labels[o] for o in ranked]


class LLMLeafEvaluator:
    """Leaf values from the model's score buckets (expected bucket / 9), one batch per node.

    When the batch is not expected to end before the deadline: at the first batch of the
    decision (depth 1) the heuristic values are used instead, so depth 1 always completes;
    later, :class:`~policies.search.maximin.SearchTimeout` drops the deeper iteration.
    """

    def __init__(self, turn: _Turn, heuristic: HeuristicEvaluator):
        self.turn, self.heuristic = turn, heuristic
        self.batches = 0
        self.calls = 0  # evaluate() calls with leaves to score (the first is depth 1's)
        self.degraded = 0

    def evaluate(self, states: Sequence[BattleState]) -> list[float]:
        turn = self.turn
        texts = [leaf_text(turn.model, s, turn.root) for s in states]
        values: list[float | None] = []
        requests: list[ScoreRequest] = []
        pending: list[int] = []
        for i, text in enumerate(texts):
            cached = turn.cached(("value", text))
            values.append(cached)
            if cached is None:
                messages, buckets = turn.policy.prompter.value_prompt(turn.battle, text)
                requests.append(ScoreRequest(messages, buckets))
                pending.append(i)
        if requests:
            first = not self.calls
            self.calls += 1
            if not turn.llm.affordable("value", turn.deadline, len(requests)):
                if not first:
                    raise SearchTimeout
                self.degraded += len(requests)
                turn.llm.usage.fallbacks += 1
                return self.heuristic.evaluate(states)
            began = time.monotonic()
            try:
                results = turn.llm.model.score_batch(requests)
            except LLMError as error:
                log.warning("pokechamp: leaf values failed (%s); heuristic values", error)
                turn.llm.usage.fallbacks += 1
                return self.heuristic.evaluate(states)
            elapsed = time.monotonic() - began
            cost = results[0].cost
            for other in results[1:]:
                cost = cost + other.cost
            turn.llm.record("value", cost, elapsed, len(requests))
            self.batches += 1
            for i, scores in zip(pending, results, strict=True):
                value = scores.expectation(BUCKET_VALUES) / (len(BUCKET_VALUES) - 1)
                values[i] = value
                turn.store(("value", texts[i]), value)
        return [float(v) for v in values]  # type: ignore[arg-type]


# ----------------------------------------------------------------------- agent
@dataclass(frozen=True)
class PokeChampOptions:
    """The options of ``pokechamp`` (:class:`PokeChampPolicy`, where each is described),
    checked when built. Backend options of the model are given as ``model_<name>=`` besides
    these (or as ``model_options``)."""

    model: str | LanguageModel = DEFAULT_MODEL
    model_options: dict[str, Any] | None = None
    reasoning: bool = False
    reasoning_tokens: int = 96
    depth: int | None = None
    candidates: int = 3
    opponent_candidates: int = 3
    evaluator: str = "llm"
    checkpoint: str | None = None
    inner_width: int = 2
    history_turns: int = 2
    knowledge: bool = False
    lookahead_text: bool = True
    prompt_layout: str = "battle"
    time_limit: float | None = None
    clock_bank: float = 150.0
    clock_increment: float = 15.0
    clock_margin: float = 3.0
    tera: bool = True

    def __post_init__(self) -> None:
        evaluator, depth = self.evaluator, self.depth
        if evaluator not in EVALUATORS:
            raise ValueError(f"evaluator is one of {', '.join(EVALUATORS)}, got {evaluator!r}")
        if depth is None:
            depth = 2 if evaluator == "distilled" else 1
            object.__setattr__(self, "depth", depth)
        deepest = 3 if evaluator == "distilled" else 2
        if depth not in range(1, deepest + 1):
            raise ValueError(
                f"depth is 1 or 2 (full turns), or up to 3 with evaluator=distilled; got {depth}"
            )
        if self.checkpoint is not None and evaluator != "distilled":
            raise ValueError("checkpoint= is the value network of evaluator=distilled")
        if self.candidates < 1 or self.opponent_candidates < 1:
            raise ValueError("candidates and opponent_candidates must be at least 1")
        if self.time_limit is not None and self.time_limit <= 0:
            raise ValueError("time_limit must be positive (seconds per decision) or None")
        if self.inner_width < 1:
            raise ValueError("inner_width must be at least 1")


_OPTION_NAMES = frozenset(f.name for f in fields(PokeChampOptions))


class PokeChampPolicy(MinimaxPolicy):
    """LLM-guided depth-``depth`` maximin (see the module docstring).

    Args:
        model, model_options (or ``model_<name>=``), reasoning, reasoning_tokens: the
            language model (see :class:`policies.llm_common.LLMPolicy`).
        depth: full turns searched (iterative deepening): 1 or 2, up to 3 with
            ``evaluator="distilled"``; default 1, or 2 with ``evaluator="distilled"``.
        candidates: the model's candidates for us (m), besides the lookahead's two.
        opponent_candidates: the model's predictions for the opponent (m'), besides the
            lookahead's most damaging reply.
        evaluator: ``"llm"`` (score buckets), ``"heuristic"`` (the ablation) or
            ``"distilled"`` (the value network at the leaves: the hybrid agent).
        checkpoint: the value network's checkpoint folder for ``evaluator="distilled"``
            (default: the one shipped for gen9randombattle).
        inner_width: candidates per side below the root (depth 2): the lookahead's first
            ``inner_width`` (best move, best switch), which keeps depth 2 within reach of
            a CPU model (a root grid of 5 x 4 makes 20 inner nodes of 2 x 2 leaves).
        history_turns, knowledge, lookahead_text: what the prompts show.
        prompt_layout: ``battle`` (append-only across the battle, so the model's prefix
            cache leaves each turn only what changed to compute, which makes decisions
            faster than ``turn`` on a CPU: docs/llm.md) or ``turn`` (the description made anew
            each turn, as in the results measured before the battle layout existed); see
            :class:`pokegym.text.BattlePrompter`.
        time_limit: seconds per decision; None: the turn clock.
        clock_bank, clock_increment, clock_margin: the turn clock.
        tera: allow Terastallization among our candidates.
    """

    name = "pokechamp"

    def __init__(self, seed: int | None = None, **options: Any):
        extra = {k: options.pop(k) for k in list(options) if k not in _OPTION_NAMES}
        o = self.options = PokeChampOptions(**options)
        assert o.depth is not None  # set from the evaluator when not given
        super().__init__(
            seed, depth=o.depth, width=o.candidates + 2, opponent_width=o.opponent_candidates + 1,
            time_limit=o.time_limit or 10.0, tera=o.tera,
        )  # fmt: skip
        self.llm = ModelHandle(o.model, _model_options(o.model_options, extra))
        self.reasoning = bool(o.reasoning)
        self.reasoning_tokens = int(o.reasoning_tokens)
        self.candidates = int(o.candidates)
        self.opponent_candidates = int(o.opponent_candidates)
        self.evaluator = o.evaluator
        self.network: Any = None
        if o.evaluator == "distilled":
            self.network = agent_network(o.checkpoint)
        #: The depth each searched decision completed.
        self.depths: list[int] = []
        self.inner_width = int(o.inner_width)
        self.fixed_time_limit = o.time_limit
        self.clock = TurnClock(o.clock_bank, o.clock_increment, o.clock_margin)
        self.prompter = BattlePrompter(
            history_turns=int(o.history_turns),
            knowledge=bool(o.knowledge),
            lookahead=self._lookahead_text if o.lookahead_text else None,
            layout=o.prompt_layout,
        )
        self.last_log = ""
        self.last_turn: _Turn | None = None
        self._cache_key: tuple[str, int] | None = None
        self._cache: dict[tuple[Any, ...], Any] = {}
        self._root: BattleState | None = None
        self._deadline = Deadline(math.inf)

    # ------------------------------------------------------------- services
    @property
    def model_handle(self) -> ModelHandle:
        return self.llm

    def pop_usage(self) -> dict[str, float]:
        """Model cost since the last call (the arena reads it after each decision)."""
        return self.llm.usage.pop()

    def turn_cache(self, battle: AbstractBattle) -> dict[tuple[Any, ...], Any]:
        """Model answers of the current turn of ``battle`` (cleared when the turn changes)."""
        key = (battle.battle_tag, battle.turn)
        if key != self._cache_key:
            self._cache_key, self._cache = key, {}
        return self._cache

    def _lookahead_text(self, battle: AbstractBattle) -> str:
        model = self.model(battle.gen)
        state = self._root
        if state is None:
            state = state_from_battle(battle, belief_for(battle).modal_determinization(), model.dex)
        return one_step_lookahead(model, state).text()

    # ------------------------------------------------------------- decision
    def state(self, battle: AbstractBattle, dex: Dex) -> BattleState:
        self._root = super().state(battle, dex)
        return self._root

    def roles(
        self, battle: AbstractBattle, model: TransitionModel
    ) -> tuple[Proposer, Proposer, Evaluator]:
        assert self._root is not None, "state() runs before roles()"
        turn = _Turn(self, battle, self._root, model, self._deadline)
        self.last_turn = turn
        proposer = LLMProposer(
            turn, LookaheadProposer(model, self.width), self.candidates, self.inner_width
        )
        opponent = LLMOpponentModel(
            turn,
            LookaheadProposer(model, self.opponent_width),
            self.opponent_candidates,
            self.inner_width,
        )
        heuristic = HeuristicEvaluator(model)
        evaluator: Evaluator = heuristic
        if self.evaluator == "llm":
            evaluator = LLMLeafEvaluator(turn, heuristic)
        elif self.evaluator == "distilled":
            evaluator = ValueNetEvaluator(StateEncoder(model), self.network)
        turn.notes["evaluator"] = evaluator
        return proposer, opponent, evaluator

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        start = time.monotonic()
        self.prompter.attach(battle)
        seconds = self.fixed_time_limit or self.clock.budget(battle.battle_tag)
        self.time_limit = seconds
        self._deadline = Deadline(
            start + seconds_left(seconds, start, now=start, margin=COARSE_DEADLINE_MARGIN)
        )
        self._root = None
        self.last_search = None
        try:
            with call_deadline(self._deadline.at):  # a model call past it stops (LLMError)
                order = super().choose(battle)
            if self.last_search is not None:
                self.depths.append(self.last_search.last_tree.depth_completed)
            self._log_tree(battle)
            return order
        finally:
            self.clock.spent(battle.battle_tag, time.monotonic() - start)

    def _log_tree(self, battle: AbstractBattle) -> None:
        search, turn = self.last_search, self.last_turn
        if search is None or turn is None or self._root is None:
            return
        dex = turn.model.dex

        def labels(actions: Any) -> str:
            return ", ".join(action_label(dex, self._root, s, a) for s, a in actions)  # type: ignore[arg-type]

        lines = [f"pokechamp turn {battle.turn}: " + search.last_tree.summary()]
        if "our_candidates" in turn.notes:
            lines.append("our candidates: " + labels((0, a) for a in turn.notes["our_candidates"]))
        if "their_candidates" in turn.notes:
            lines.append("their candidates: "
                         + labels((1, a) for a in turn.notes["their_candidates"]))  # fmt: skip
        evaluator = turn.notes.get("evaluator")
        if isinstance(evaluator, LLMLeafEvaluator) and evaluator.degraded:
            lines.append(f"heuristic values for {evaluator.degraded} leaves (deadline)")
        self.last_log = "\n".join(lines)
        log.info("%s", self.last_log)


def root_orders(battle: AbstractBattle, tera: bool = True) -> dict[Action, BattleOrder]:
    """Our legal root actions with their orders (re-exported for tests and tools)."""
    return root_actions(battle, tera)
