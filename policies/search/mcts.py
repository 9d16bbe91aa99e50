"""Simultaneous-move Monte-Carlo tree search (SM-MCTS) over a two-player game.

A Pokémon turn is simultaneous: both players choose, then the turn resolves. The tree's
nodes are joint-action nodes. Each node keeps *decoupled* statistics: for each side, the
visits and value sum of each of its own actions. One iteration:

1. **select**: from the root, each side picks one of its actions by its own statistics
   (``selection="duct"``: UCB1, or PUCT when a prior is given; ``selection="exp3"``: the
   Exp3 bandit, a mixed strategy sampled with the search's generator); the joint action
   leads to a child. With ``model_reply_turns``, side 1 instead draws its action from its
   prior near the root (the opponent as a model predicts it, not as a maximiser);
2. **expand**: the first time a joint action (or, with chance, one of its outcomes) is
   tried, the game steps once and the new state becomes a node;
3. **evaluate**: the new state's value for side 0 in [0, 1]: the battle's result when it
   is over, otherwise the evaluator's (the search never rolls out);
4. **backup**: every node on the path adds that value to the statistics of the action
   each side chose there.

Values are side 0's win chance; side 1 maximises ``1 − value``. The root result is a
*mixed* strategy per side: the share of visits of each action. Over several
determinizations (complete guesses of the opponent's hidden sets) the caller runs one
tree per determinization, round-robin under one budget, and sums the root visit shares.

Chance. With a deterministic ``step`` (the world model's expected mode) each joint
action has one child. With ``chance=True`` the game's ``step`` draws its random events
from the generator it is given; each joint action then has one child per distinct
outcome, told apart by ``outcome_key`` (the tree stays closed-loop: a sampled outcome
that was seen before reuses its node).

The search is anytime: ``budget`` seconds and/or ``iterations`` bound it, the clock is
injectable, and a seed makes every choice reproducible (with an iteration budget).

Python's cyclic garbage collector is paused while a search runs (:func:`collector_paused`):
an iteration allocates states and nodes that reference counting alone frees (the tree
holds no cycles), and the collector's passes over every live object of the process (the
priors' tables among them) took a large share of the search's time
(docs/experiments/mcts-search.md, "Where an iteration's time goes").
"""

from __future__ import annotations

import contextlib
import gc
import math
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

SELECTIONS = ("duct", "exp3")


class Game(Protocol):
    """The game as the search sees it (states are never edited in place)."""

    def actions(self, state: Any, side: int) -> list[Any]:
        """The legal actions of ``side`` at ``state`` (at least one: a pass when none)."""
        ...

    def step(self, state: Any, action_0: Any, action_1: Any, rng: np.random.Generator) -> Any:
        """The next state after both sides' actions."""
        ...

    def terminal_value(self, state: Any) -> float | None:
        """Side 0's result (1 win, 0 loss, ½ tie) when the game is over, else None."""
        ...


class Evaluator(Protocol):
    """Side 0's chance to win from each state, in [0, 1] (states are not finished)."""

    def evaluate(self, states: Sequence[Any]) -> list[float]: ...


class Prior(Protocol):
    """Prior probabilities of ``side``'s ``actions`` at ``state`` (they sum to 1)."""

    def prior(self, state: Any, side: int, actions: list[Any]) -> list[float]: ...


@dataclass(frozen=True)
class SearchConfig:
    """How the search spends its budget (the defaults are the ``mcts`` agent's)."""

    selection: str = "duct"
    """``duct`` (decoupled UCB1 / PUCT) or ``exp3`` (decoupled Exp3)."""
    exploration: float = 0.6
    """UCB1's ``c`` (values are win chances in [0, 1]); for ``exp3`` the share γ of
    uniform exploration."""
    max_turns: int = 6
    """Turns below the root after which a state is evaluated, not expanded."""
    chance: bool = False
    """Outcomes of a joint action are sampled (one child per distinct outcome)."""
    prior_weight: float = 1.0
    """Scales the prior term of PUCT (only where a prior is given)."""
    model_reply_turns: int = 0
    """For this many turns from the root, side 1 plays by drawing from its prior (a fixed
    policy: the opponent as a model predicts it) instead of choosing by its own
    statistics (the opponent as a maximiser); side 0's values are then those of a best
    response to that model. 0: never. Only where a prior is given."""

    def __post_init__(self) -> None:
        if self.selection not in SELECTIONS:
            raise ValueError(f"selection is one of {', '.join(SELECTIONS)}, not {self.selection!r}")
        if not self.exploration > 0:
            raise ValueError("exploration must be positive")
        if self.selection == "exp3" and not self.exploration <= 1:
            raise ValueError("for exp3, exploration is the share of uniform play, in (0, 1]")
        if self.max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        if self.prior_weight < 0:
            raise ValueError("prior_weight must be non-negative")
        if self.model_reply_turns < 0:
            raise ValueError("model_reply_turns must be non-negative")


class Node:
    """A joint-action node: each side's actions with their own visits and value sums."""

    __slots__ = ("actions", "children", "counts", "gains", "prior", "state", "sums", "value",
                 "visits")  # fmt: skip

    def __init__(self, state: Any, actions: tuple[list[Any], list[Any]], value: float):
        self.state = state
        self.actions = actions
        self.value = value  # the evaluation when the node was created
        self.visits = 0
        self.counts = ([0] * len(actions[0]), [0] * len(actions[1]))
        self.sums = ([0.0] * len(actions[0]), [0.0] * len(actions[1]))
        self.gains: tuple[list[float], list[float]] | None = None  # exp3 only
        self.prior: tuple[list[float] | None, list[float] | None] = (None, None)
        self.children: dict[tuple[int, int], Any] = {}


@dataclass
class RootStats:
    """What one tree (or several, summed) says at the root, per side."""

    actions: tuple[list[Any], list[Any]]
    visits: tuple[list[float], list[float]]
    values: tuple[list[float], list[float]]  # mean side-0 value of each action (nan: unvisited)
    iterations: int = 0
    nodes: int = 0
    evaluations: int = 0
    max_depth: int = 0
    seconds: float = 0.0
    trees: int = 1

    def shares(self, side: int = 0) -> dict[Any, float]:
        """Visit share of each of ``side``'s actions (sums to 1 when anything was visited)."""
        total = sum(self.visits[side]) or 1.0
        return {a: v / total for a, v in zip(self.actions[side], self.visits[side], strict=True)}

    def best(self, side: int = 0) -> Any:
        """The most visited action of ``side`` (ties: the higher value for that side)."""
        acts, visits, values = self.actions[side], self.visits[side], self.values[side]
        sign = 1.0 if side == 0 else -1.0

        def key(i: int) -> tuple[float, float]:
            v = values[i]
            return visits[i], sign * (0.0 if math.isnan(v) else v)

        return acts[max(range(len(acts)), key=key)]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block (reference counting still
    frees everything that is not in a cycle); it is switched back on afterwards, also
    when the block raises, unless it was off before."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass
class Tree:
    """One search tree (one determinization) and its counters."""

    root: Node
    iterations: int = 0
    nodes: int = 1
    evaluations: int = 0
    max_depth: int = 0


@dataclass
class SMMCTS:
    """The search (see the module docstring).

    Args:
        game: the game's rules (:class:`Game`).
        evaluator: leaf values (:class:`Evaluator`).
        config: :class:`SearchConfig`.
        prior: optional priors over each side's actions at a new node (PUCT under
            ``duct``); None: UCB1.
        outcome_key: with ``config.chance``, what makes two sampled outcomes the same child.
        clock: seconds, monotonic (injectable for tests).
    """

    game: Game
    evaluator: Evaluator
    config: SearchConfig = field(default_factory=SearchConfig)
    prior: Prior | None = None
    outcome_key: Callable[[Any], Hashable] | None = None
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        if self.config.chance and self.outcome_key is None:
            raise ValueError("chance=True needs outcome_key (what makes two outcomes the same)")

    # ------------------------------------------------------------------ public
    def new_tree(self, state: Any) -> Tree:
        """A tree rooted at ``state`` (evaluated once, so a root can be compared)."""
        done = self.game.terminal_value(state)
        if done is not None:
            raise ValueError("the root state is already over")
        return Tree(self._node(state, self.evaluator.evaluate([state])[0]))

    def search(
        self,
        states: Sequence[Any],
        rng: np.random.Generator,
        *,
        iterations: int | None = None,
        budget: float | None = None,
    ) -> RootStats:
        """Search one tree per state (determinizations), round-robin, until ``iterations``
        in all or ``budget`` seconds have passed (at least one of them must be given), and
        return the root statistics summed over the trees."""
        if not states:
            raise ValueError("give at least one root state")
        if iterations is None and budget is None:
            raise ValueError("give an iteration budget, a time budget, or both")
        if iterations is not None and iterations < 1:
            raise ValueError("iterations must be at least 1")
        if budget is not None and not budget >= 0:
            raise ValueError("budget is seconds (>= 0)")
        start = self.clock()
        deadline = math.inf if budget is None else start + budget
        limit = math.inf if iterations is None else iterations
        with collector_paused():
            trees = [self.new_tree(s) for s in states]
            done = 0
            while done < limit:
                if self.clock() >= deadline and done >= len(trees):
                    break
                self.iterate(trees[done % len(trees)], rng)
                done += 1
            stats = self.root_stats(trees)
            del trees  # freed now, so the collector's first pass after the search is short
        stats.seconds = self.clock() - start
        return stats

    def iterate(self, tree: Tree, rng: np.random.Generator) -> float:
        """One select-expand-evaluate-backup pass; returns the value backed up."""
        config = self.config
        node = tree.root
        path: list[tuple[Node, int, int, float, float]] = []
        depth = 0
        while True:
            i, p0 = self._select(node, 0, rng)
            if depth < config.model_reply_turns and node.prior[1] is not None:
                j, p1 = self._draw(node.prior[1], rng)
            else:
                j, p1 = self._select(node, 1, rng)
            path.append((node, i, j, p0, p1))
            depth += 1
            slot = node.children.get((i, j))
            if config.chance:
                if slot is None:
                    slot = node.children[(i, j)] = {}
                state = self.game.step(node.state, node.actions[0][i], node.actions[1][j], rng)
                key = self.outcome_key(state)  # type: ignore[misc]
                child = slot.get(key)
                if child is None:
                    child = slot[key] = self._expand(tree, state, depth)
                    value = child if isinstance(child, float) else child.value
                    break
            else:
                child = slot
                if child is None:
                    state = self.game.step(node.state, node.actions[0][i], node.actions[1][j], rng)
                    child = node.children[(i, j)] = self._expand(tree, state, depth)
                    value = child if isinstance(child, float) else child.value
                    break
            if isinstance(child, float):
                value = child
                break
            node = child
        tree.max_depth = max(tree.max_depth, depth)
        tree.iterations += 1
        self._backup(path, value)
        return value

    def root_stats(self, trees: Sequence[Tree]) -> RootStats:
        """Root statistics of ``trees`` summed per action (visits as shares per tree, so
        each determinization counts once; values visit-weighted)."""
        sides = [_Tally(), _Tally()]
        for tree in trees:
            root = tree.root
            for side, tally in enumerate(sides):
                tally.add(root.actions[side], root.counts[side], root.sums[side])
        return RootStats(
            actions=(sides[0].actions, sides[1].actions),
            visits=(sides[0].shares(), sides[1].shares()),
            values=(sides[0].means(), sides[1].means()),
            iterations=sum(t.iterations for t in trees),
            nodes=sum(t.nodes for t in trees),
            evaluations=sum(t.evaluations for t in trees),
            max_depth=max((t.max_depth for t in trees), default=0),
            trees=len(trees),
        )

    # --------------------------------------------------------------- internals
    def _node(self, state: Any, value: float) -> Node:
        game = self.game
        node = Node(state, (game.actions(state, 0), game.actions(state, 1)), value)
        if self.prior is not None:
            node.prior = (self.prior.prior(state, 0, node.actions[0]),
                          self.prior.prior(state, 1, node.actions[1]))  # fmt: skip
        if self.config.selection == "exp3":
            node.gains = ([0.0] * len(node.actions[0]), [0.0] * len(node.actions[1]))
        return node

    def _expand(self, tree: Tree, state: Any, depth: int) -> Node | float:
        done = self.game.terminal_value(state)
        if done is not None:
            return float(done)
        value = min(1.0, max(0.0, float(self.evaluator.evaluate([state])[0])))
        tree.evaluations += 1
        if depth >= self.config.max_turns:
            return value
        tree.nodes += 1
        return self._node(state, value)

    def _select(self, node: Node, side: int, rng: np.random.Generator) -> tuple[int, float]:
        """(action index, the probability it was chosen with: 1 for deterministic rules)."""
        counts = node.counts[side]
        if len(counts) == 1:
            return 0, 1.0
        if node.gains is not None:
            return self._exp3(node, side, rng)
        sums = node.sums[side]
        prior = node.prior[side]
        c = self.config.exploration
        if prior is None:
            for i, n in enumerate(counts):
                if n == 0:
                    return i, 1.0
            log_total = math.log(node.visits)
            best_i, best = 0, -math.inf
            for i, n in enumerate(counts):
                q = sums[i] / n
                score = (q if side == 0 else 1.0 - q) + c * math.sqrt(log_total / n)
                if score > best:
                    best_i, best = i, score
            return best_i, 1.0
        # PUCT: unvisited actions start from the node's own value for this side.
        fpu = node.value if side == 0 else 1.0 - node.value
        scale = c * self.config.prior_weight * math.sqrt(node.visits + 1)
        best_i, best = 0, -math.inf
        for i, n in enumerate(counts):
            if n:
                q = sums[i] / n
                q = q if side == 0 else 1.0 - q
            else:
                q = fpu
            score = q + scale * prior[i] / (1 + n)
            if score > best:
                best_i, best = i, score
        return best_i, 1.0

    @staticmethod
    def _draw(probs: list[float], rng: np.random.Generator) -> tuple[int, float]:
        """An action drawn with the probabilities ``probs`` (and its probability)."""
        u = float(rng.random())
        acc = 0.0
        for i, p in enumerate(probs):
            acc += p
            if u < acc:
                return i, p
        return len(probs) - 1, probs[-1]

    def _exp3(self, node: Node, side: int, rng: np.random.Generator) -> tuple[int, float]:
        gains = node.gains[side]  # type: ignore[index]
        k = len(gains)
        gamma = self.config.exploration
        eta = gamma / k
        top = max(gains)
        weights = [math.exp(eta * (g - top)) for g in gains]
        total = sum(weights)
        probs = [(1.0 - gamma) * w / total + gamma / k for w in weights]
        return self._draw(probs, rng)

    @staticmethod
    def _backup(path: list[tuple[Node, int, int, float, float]], value: float) -> None:
        for node, i, j, p0, p1 in path:
            node.visits += 1
            node.counts[0][i] += 1
            node.counts[1][j] += 1
            node.sums[0][i] += value
            node.sums[1][j] += value
            if node.gains is not None:
                node.gains[0][i] += value / p0
                node.gains[1][j] += (1.0 - value) / p1


class _Tally:
    """One side's root actions over several trees: visit shares and value sums."""

    def __init__(self) -> None:
        self.actions: list[Any] = []
        self._share: dict[Any, float] = {}
        self._sum: dict[Any, float] = {}
        self._count: dict[Any, int] = {}

    def add(self, actions: list[Any], counts: list[int], sums: list[float]) -> None:
        total = sum(counts) or 1
        for action, n, value in zip(actions, counts, sums, strict=True):
            if action not in self._share:
                self.actions.append(action)
                self._share[action], self._sum[action], self._count[action] = 0.0, 0.0, 0
            self._share[action] += n / total
            self._sum[action] += value
            self._count[action] += n

    def shares(self) -> list[float]:
        return [self._share[a] for a in self.actions]

    def means(self) -> list[float]:
        return [self._sum[a] / self._count[a] if self._count[a] else math.nan
                for a in self.actions]  # fmt: skip
