"""MCTS iterations per CPU second on recorded decision states, and what each speed-up adds.

Records the states of ``--battles`` real battles (gen9randombattle, the embedded
simulator), then runs the ``distilled`` agent's search (network leaves, the damage prior,
``--trees`` trees per decision as its determinizations, ``--iterations`` in all, the
agent's 2,000 by default) on every ``--stride``-th state in four set-ups,
in interleaved rounds so that a change in the machine's load falls on all of them:

* ``shipped``: as the agent runs it;
* ``collector on``: Python's cyclic garbage collector left on during the search;
* ``batch path``: each leaf scored through the network's batch path (a 1-row matrix)
  instead of its one-state vector path;
* ``hand-written``: the hand-written evaluator's leaves instead of the network's.

Time is this process's CPU time (``time.process_time``), so other processes' load moves
it less than wall time; the ratios against ``shipped`` are measured in the same run. The
world model is the compiled one when a build exists (``pokegym accel status``); run with
``POKEGYM_ACCEL=0`` for the Python modules.

    pokegym bench search_speed --battles 4 --rounds 3
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import policies.search.mcts as mcts
from bench.worldmodel import play_and_score
from pokegym.world import _accel
from pokegym.world.data import load_dex
from pokegym.world.priors.sources import prior_for_format
from pokegym.world.state import BattleState
from pokegym.world.transition import TransitionModel
from policies.core.encoding import StateEncoder
from policies.core.evaluation import HeuristicEvaluator, terminal_value
from policies.core.evaluators import ValueNetEvaluator
from policies.mcts_agent import AnchoredPrior, HeuristicPrior, WorldGame
from policies.value_net import agent_network


class _BatchPath:
    """A network evaluator that scores one leaf through the batch path."""

    def __init__(self, inner: ValueNetEvaluator):
        self.inner = inner

    def evaluate(self, states: Any) -> list[float]:
        return self.inner.evaluate_batch(states)


@contextlib.contextmanager
def _collector_left_on() -> Iterator[None]:
    original = mcts.collector_paused
    mcts.collector_paused = contextlib.nullcontext  # type: ignore[assignment]
    try:
        yield
    finally:
        mcts.collector_paused = original


def _search_seconds(
    states: list[BattleState], model: TransitionModel, evaluator: Any, iterations: int,
    trees: int,
) -> float:  # fmt: skip
    """CPU seconds for a decision's search (``trees`` trees, ``iterations`` in all) on
    each state."""
    game = WorldGame(model)
    rng = np.random.default_rng(0)
    started = time.process_time()
    for state in states:
        roots = [state.copy() for _ in range(trees)]
        prior = AnchoredPrior(HeuristicPrior(model), roots, None, 0.5)
        search = mcts.SMMCTS(game, evaluator, mcts.SearchConfig(), prior=prior)
        search.search(roots, rng, iterations=iterations)
    return time.process_time() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=4)
    parser.add_argument("--stride", type=int, default=6, help="search every k-th state")
    parser.add_argument("--iterations", type=int, default=2000, help="per decision")
    parser.add_argument("--trees", type=int, default=4, help="per decision")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    print(_accel.describe())
    _, samples = play_and_score(args.battles, ["gen9randombattle"], seed=args.seed)
    states = [s for s, _, _ in samples[:: args.stride] if terminal_value(s) is None]
    model = TransitionModel(load_dex(9))
    network = ValueNetEvaluator(StateEncoder(model), agent_network(None))
    setups: dict[str, Callable[[], float]] = {
        "shipped": lambda: _search_seconds(states, model, network, args.iterations, args.trees),
        "collector on": lambda: _with(_collector_left_on, states, model, network, args),
        "batch path": lambda: _search_seconds(
            states, model, _BatchPath(network), args.iterations, args.trees
        ),
        "hand-written": lambda: _search_seconds(
            states, model, HeuristicEvaluator(model), args.iterations, args.trees
        ),
    }
    # What an agent's process holds besides the search: the format's set priors, and the
    # world model's caches after a few decisions (a warm-up round, not timed). The
    # collector's passes cost in proportion to the live objects.
    prior_for_format("gen9randombattle")
    setups["shipped"]()
    print(f"live objects tracked by the collector: {len(gc.get_objects()):,}")
    seconds: dict[str, list[float]] = {name: [] for name in setups}
    for _ in range(args.rounds):
        for name, run in setups.items():
            seconds[name].append(run())
    total = len(states) * args.iterations
    rate = {name: total / statistics.median(s) for name, s in seconds.items()}
    print(f"{len(states)} decision states from {args.battles} battles (seed {args.seed}), "
          f"{args.iterations} iterations over {args.trees} trees each, "
          f"{args.rounds} interleaved rounds; iterations per CPU second (median):")  # fmt: skip
    for name in setups:
        print(f"  {name:13s} {rate[name]:8.0f}   {rate[name] / rate['shipped']:.2f}x shipped")
    print(" ".join(f"{name.replace(' ', '_')}={rate[name]:.0f}" for name in setups))
    return 0


def _with(context: Any, states: list[BattleState], model: TransitionModel, evaluator: Any,
          args: argparse.Namespace) -> float:  # fmt: skip
    with context():
        return _search_seconds(states, model, evaluator, args.iterations, args.trees)


if __name__ == "__main__":
    raise SystemExit(main())
