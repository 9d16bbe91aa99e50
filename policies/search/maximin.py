"""Depth-K simultaneous-move minimax over the world model (the PokéChamp search, generalised).

A turn is simultaneous: both players choose, then the turn resolves. At a node with
state ``s`` the search asks three roles for their opinion, each a small protocol so that
any source can fill it (heuristics, a language model, a value network, a memory):

* a **proposer** gives our candidate actions ``A`` (the one-step lookahead's best move and
  best switch are always added, as in the paper);
* an **opponent model** gives the opponent's candidate actions ``B``;
* an **evaluator** scores leaf states: our chance to win, in [0, 1].

The world model's ``step(s, a, b)`` gives the next state of every joint action, and the
backup is the maximin over pure strategies::

    V(s, 0) = evaluator(s)                           (or 1 / 0 / ½ when the battle is over)
    V(s, k) = max_{a in A(s)}  min_{b in B(s)}  V(step(s, a, b), k - 1)

that is, the best action against the opponent's best reply to it — never a max over the
opponent's replies. With ``caution`` below 1 the inner min becomes
``caution · min_b + (1 − caution) · mean_b``: an opponent that does not always find its
best reply (pure maximin assumes it reads our move, which makes every risky move look
bad). Every child is a new state (the transition model never edits the state it is
given), so siblings never share a mutable object.

The search is **anytime**: it first computes the lookahead's move (a legal answer at
once), then searches depth 1, 2, … up to ``depth`` (iterative deepening); an iteration
that runs past the deadline is abandoned and the deepest completed one decides. Leaf
evaluations are batched per node (one ``evaluate`` call for a node's whole grid of
children) and cached within a decision. The tree of the last decision (candidates, their
values, the principal line) is kept in :attr:`MinimaxSearch.last_tree` for inspection.

Opponent Pokémon never seen are not in the world-model state; ``state.notes["unseen"]``
counts them, and a battle is only won in the search when none are left.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from pokegym.world.state import BattleState
from pokegym.world.transition import Action, TransitionModel
from policies.core.battle import legal_actions
from policies.core.evaluation import terminal_value
from policies.core.lookahead import one_step_lookahead
from policies.core.state_key import state_key
from policies.search.mcts import Evaluator, collector_paused


class Proposer(Protocol):
    """Candidate actions for ``side`` at ``state``, best first (a subset of ``legal``)."""

    def propose(self, state: BattleState, side: int, legal: list[Action]) -> list[Action]: ...


class SearchTimeout(Exception):
    """Raised inside the search when the deadline has passed (the iteration is dropped)."""


# ------------------------------------------------------------------ heuristics
@dataclass
class LookaheadProposer:
    """The one-step lookahead's view of the actions of ``side``, best first.

    Moves ranked by expected turns to KO (then damage), the plain move before its Tera
    version; then switches ranked by the lookahead's switch score. At most ``width``
    actions, always including the best move and (when there is one) the best switch.
    Status moves the lookahead cannot value are kept after the attacks, unless
    ``status_slots`` reserves places for them right after the best move and switch: a
    rule-based player uses hazards, set-up and status moves often (about one decision in
    five for ``abyssal``), and an opponent model without them never sees those replies.
    """

    model: TransitionModel
    width: int = 4
    status_slots: int = 0

    def propose(self, state: BattleState, side: int, legal: list[Action]) -> list[Action]:
        if len(legal) <= 1:
            return list(legal)
        view = state if side == 0 else _swap_sides(state)
        look = one_step_lookahead(self.model, view, names={})
        legal_set = set(legal)
        scored: list[tuple[tuple[float, ...], Action]] = []
        plain = {hit.move: hit for hit in look.matchup(False, False).ours}
        for we_tera in (False, True):
            for hit in look.matchup(we_tera, False).ours:
                action: Action = ("move", hit.move, we_tera)
                if action not in legal_set:
                    continue
                if we_tera and not hit.expected_turns < plain[hit.move].expected_turns:
                    continue  # Tera is a candidate only where it KOs sooner
                scored.append(((hit.expected_turns, -hit.expected, int(we_tera)), action))
        moves = [a for _, a in sorted(scored, key=lambda item: item[0])]
        switch_rank = sorted(
            look.switches,
            key=lambda s: (-(min(s.their_turns_to_ko, 9) - min(s.our_turns_to_ko, 9)),
                           -s.hp_fraction),
        )  # fmt: skip
        switches = [("switch", s.index, False) for s in switch_rank]
        switches = [a for a in switches if a in legal_set]
        chosen: list[Action] = []
        if moves:
            chosen.append(moves[0])
        if switches:
            chosen.append(switches[0])
        if self.status_slots:
            status = [a for a in legal if a[0] == "move" and not a[2] and a not in chosen
                      and self._is_status(a[1])]  # fmt: skip
            chosen.extend(status[: max(0, min(self.status_slots, self.width - len(chosen)))])
        for action in moves[1:] + switches[1:] + [a for a in legal if a not in chosen]:
            if len(chosen) >= self.width:
                break
            if action not in chosen:
                chosen.append(action)
        return chosen

    def _is_status(self, move: str) -> bool:
        entry = self.model.dex.moves.get(move)
        return entry is not None and entry.get("category") == "Status"


def _swap_sides(state: BattleState) -> BattleState:
    swapped = state.copy()
    swapped.sides.reverse()
    return swapped


# ------------------------------------------------------------------- search
@dataclass
class SearchTree:
    """What the last decision looked at."""

    depth_completed: int = 0
    candidates: list[Action] = field(default_factory=list)
    replies: list[Action] = field(default_factory=list)
    values: dict[Action, float] = field(default_factory=dict)  # min over replies, per candidate
    worst_reply: dict[Action, Action] = field(default_factory=dict)
    chosen: Action | None = None
    principal_line: list[tuple[Action, Action]] = field(default_factory=list)
    nodes: int = 0
    evaluations: int = 0
    seconds: float = 0.0
    timed_out: bool = False

    def summary(self) -> str:
        lines = [f"depth {self.depth_completed}, {self.nodes} nodes, {self.evaluations} "
                 f"evaluations, {self.seconds * 1e3:.1f} ms" + (" (deadline)" if self.timed_out
                                                              else "")]  # fmt: skip
        for action, value in sorted(self.values.items(), key=lambda kv: -kv[1]):
            mark = "*" if action == self.chosen else " "
            lines.append(f" {mark} {_label(action)}: {value:.3f} "
                         f"(worst reply {_label(self.worst_reply.get(action))})")  # fmt: skip
        return "\n".join(lines)


def _label(action: Action | None) -> str:
    if action is None:
        return "-"
    kind, arg, tera = action
    if kind == "switch":
        return f"switch {arg}"
    if kind == "pass":
        return "pass"
    return f"{arg}{' +tera' if tera else ''}"


class MinimaxSearch:
    """Iterative-deepening maximin over joint actions (see the module docstring).

    Args:
        model: the transition model (expected mode keeps each child a single state).
        proposer: our candidates; opponent: the opponent's candidates (a Proposer asked
            for side 1); evaluator: leaf values.
        depth: full turns to look ahead.
        caution: weight of the opponent's best reply against the mean of its replies
            (1 = maximin, 0 = the mean alone).
        reply_decay: the mean over the opponent's replies weights the ``i``-th candidate
            of the opponent model by ``reply_decay ** i`` (1 = equally likely; lower
            trusts the model's ranking: its first reply is the one it expects).
        key: what makes two leaf states the same for the evaluation cache (default:
            :func:`~policies.core.state_key.state_key`, everything the transition model reads).
        chance: at the root, each joint action's child is ``chance`` turns drawn with
            ``sampler`` (a ``mode="sample"`` transition model) and ``rng`` instead of
            the one expected-mode child, and its value is their mean (0: off). Expected
            mode settles every random event by a threshold (a 30 % burn never happens,
            a 60 % sleep always does, speed ties go to side 0); sampling the first turn
            replaces those verdicts by their frequencies, at ``chance`` times the cost.
            The ``i``-th draws of all joint actions share a seed (common random numbers).
    """

    def __init__(
        self,
        model: TransitionModel,
        proposer: Proposer,
        opponent: Proposer,
        evaluator: Evaluator,
        depth: int = 2,
        key: Callable[[BattleState], Hashable] | None = None,
        caution: float = 1.0,
        reply_decay: float = 1.0,
        chance: int = 0,
        sampler: TransitionModel | None = None,
        rng: np.random.Generator | None = None,
    ):
        if depth < 1:
            raise ValueError("depth must be at least 1 (full turns)")
        if not 0.0 <= caution <= 1.0:
            raise ValueError("caution must be in [0, 1] (1 = maximin)")
        if not 0.0 < reply_decay <= 1.0:
            raise ValueError("reply_decay must be in (0, 1] (1 = the replies equally likely)")
        if chance < 0:
            raise ValueError("chance is the number of sampled first turns (0 = off)")
        if chance and (sampler is None or sampler.mode != "sample"):
            raise ValueError("chance > 0 needs sampler=TransitionModel(dex, mode='sample')")
        self.chance = int(chance)
        self.sampler = sampler
        self.rng = rng if rng is not None else np.random.default_rng()
        self._root_state: BattleState | None = None
        self._dice = 0
        self.caution = float(caution)
        self.reply_decay = float(reply_decay)
        self.model = model
        self.proposer = proposer
        self.opponent = opponent
        self.evaluator = evaluator
        self.depth = depth
        self.key = key or state_key
        self.last_tree = SearchTree()
        self._deadline = math.inf
        self._cache: dict[Hashable, float] = {}
        self._tree = SearchTree()
        self._predicted: Action | None = None
        self._predicted_weight = 1.0

    # ------------------------------------------------------------------ public
    def search(
        self,
        state: BattleState,
        our_actions: list[Action],
        *,
        deadline: float = math.inf,
        fallback: Action | None = None,
        predicted: Action | None = None,
        predicted_weight: float = 1.0,
    ) -> Action:
        """The action to play at ``state`` among ``our_actions`` (legal at the root).

        ``deadline`` is a ``time.monotonic()`` instant; ``fallback`` is returned when not
        even depth 1 finishes in time (default: the first candidate).

        ``predicted`` is the opponent's expected reply at the root (from a reply model,
        e.g. :class:`~policies.opponent_view.RuleReplyModel`): each root candidate is then
        valued ``w · V(a, predicted) + (1 − w) · backup over the opponent model's replies``
        with ``w = predicted_weight`` (1: a best response to the prediction alone). An
        illegal or missing prediction leaves the search as it was.
        """
        if not our_actions:
            raise ValueError("no legal action to search over")
        if not 0.0 <= predicted_weight <= 1.0:
            raise ValueError("predicted_weight is in [0, 1] (1 = trust the prediction alone)")
        self._predicted, self._predicted_weight = predicted, float(predicted_weight)
        start = time.monotonic()
        self._deadline = deadline
        self._cache = {}
        tree = self._tree = SearchTree()
        self._root_state = state
        self._dice = int(self.rng.integers(2**62))
        candidates = self._candidates(self.proposer, state, 0, our_actions)
        if fallback is not None and fallback in our_actions and fallback not in candidates:
            candidates.append(fallback)
        tree.candidates = candidates
        best = fallback if fallback in our_actions else candidates[0]
        tree.chosen = best
        try:
            with collector_paused():  # see policies/search/mcts.py: the tree holds no cycles
                for depth in range(1, self.depth + 1):
                    values, replies, worst = self._root(state, candidates, depth)
                    tree.values, tree.replies, tree.worst_reply = values, replies, worst
                    best = max(candidates, key=lambda a: (values[a], -candidates.index(a)))
                    tree.chosen = best
                    tree.depth_completed = depth
        except SearchTimeout:
            tree.timed_out = True
        tree.principal_line = self._principal_line(state, best, tree)
        tree.seconds = time.monotonic() - start
        self.last_tree = tree
        return best

    def value(self, state: BattleState, depth: int) -> float:
        """The backed-up value of ``state`` searched ``depth`` full turns (no deadline)."""
        self._deadline = math.inf
        self._cache = {}
        self._tree = SearchTree()
        self._root_state = state
        self._dice = int(self.rng.integers(2**62))
        return self._value(state, depth)

    # ---------------------------------------------------------------- internals
    def _check(self) -> None:
        if time.monotonic() > self._deadline:
            raise SearchTimeout

    def _candidates(
        self, role: Proposer, state: BattleState, side: int, legal: list[Action]
    ) -> list[Action]:
        proposed = [a for a in role.propose(state, side, legal) if a in legal]
        return list(dict.fromkeys(proposed)) or list(legal[:1])

    def _root(
        self, state: BattleState, candidates: list[Action], depth: int
    ) -> tuple[dict[Action, float], list[Action], dict[Action, Action]]:
        legal = legal_actions(self.model, state, 1)
        predicted, weight = self._predicted, self._predicted_weight
        if predicted not in legal:
            predicted = None
        if predicted is not None and weight >= 1.0:
            replies = [predicted]
        else:
            replies = self._candidates(self.opponent, state, 1, legal)
            if predicted is not None and predicted not in replies:
                replies.append(predicted)
        grid = self._grid(state, candidates, replies, depth)
        values: dict[Action, float] = {}
        worst: dict[Action, Action] = {}
        for a in candidates:
            row = [(grid[(a, b)], b) for b in replies]
            _, reply = min(row, key=lambda item: item[0])
            values[a], worst[a] = self._backup([v for v, _ in row]), reply
            if predicted is not None and weight < 1.0:
                values[a] = weight * grid[(a, predicted)] + (1.0 - weight) * values[a]
        return values, replies, worst

    def _grid(
        self, state: BattleState, ours: list[Action], theirs: list[Action], depth: int
    ) -> dict[tuple[Action, Action], float]:
        """Values of every joint action's child, leaves evaluated in one batch.

        A joint action has one child (the expected turn), or at the root with
        ``chance`` set, ``chance`` sampled ones whose values are averaged."""
        sampled = self.chance > 0 and state is self._root_state
        children: dict[tuple[Action, Action], list[BattleState]] = {}
        for a in ours:
            for b in theirs:
                self._check()
                if sampled:
                    assert self.sampler is not None
                    # Common random numbers: the i-th draw of every joint action starts
                    # from the same seed, so candidates are compared under the same dice.
                    children[(a, b)] = [
                        self.sampler.step(state, a, b, rng=np.random.default_rng((self._dice, i)))
                        for i in range(self.chance)
                    ]
                else:
                    children[(a, b)] = [self.model.step(state, a, b)]
                self._tree.nodes += len(children[(a, b)])
        found: dict[tuple[tuple[Action, Action], int], float] = {}
        pending: list[tuple[tuple[tuple[Action, Action], int], BattleState, Hashable]] = []
        for joint, states in children.items():
            for i, child in enumerate(states):
                done = terminal_value(child)
                if done is not None:
                    found[(joint, i)] = done
                elif depth > 1:
                    found[(joint, i)] = self._value(child, depth - 1)
                else:
                    key = self.key(child)
                    cached = self._cache.get(key)
                    if cached is None:
                        pending.append(((joint, i), child, key))
                    else:
                        found[(joint, i)] = cached
        if pending:
            self._check()
            scores = self.evaluator.evaluate([child for _, child, _ in pending])
            if len(scores) != len(pending):
                raise ValueError(
                    f"the evaluator returned {len(scores)} values for {len(pending)} states"
                )
            self._tree.evaluations += len(pending)
            for (slot, _, key), score in zip(pending, scores, strict=True):
                value = min(1.0, max(0.0, float(score)))
                self._cache[key] = value
                found[slot] = value
        return {
            joint: sum(found[(joint, i)] for i in range(len(states))) / len(states)
            for joint, states in children.items()
        }

    def _value(self, state: BattleState, depth: int) -> float:
        done = terminal_value(state)
        if done is not None:
            return done
        if depth == 0:
            return self.evaluator.evaluate([state])[0]
        ours = self._candidates(self.proposer, state, 0, legal_actions(self.model, state, 0))
        theirs = self._candidates(self.opponent, state, 1, legal_actions(self.model, state, 1))
        grid = self._grid(state, ours, theirs, depth)
        return max(self._backup([grid[(a, b)] for b in theirs]) for a in ours)

    def _backup(self, row: list[float]) -> float:
        """The value of one of our actions from its values against each reply."""
        worst = min(row)
        if self.caution >= 1.0:
            return worst
        if self.reply_decay >= 1.0:
            mean = sum(row) / len(row)
        else:
            weights = [self.reply_decay**i for i in range(len(row))]
            mean = sum(w * v for w, v in zip(weights, row, strict=True)) / sum(weights)
        return self.caution * worst + (1.0 - self.caution) * mean

    def _principal_line(
        self, state: BattleState, best: Action, tree: SearchTree
    ) -> list[tuple[Action, Action]]:
        reply = tree.worst_reply.get(best)
        return [(best, reply)] if reply is not None else []
