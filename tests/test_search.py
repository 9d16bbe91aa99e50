"""The simultaneous-move minimax: backup rule on hand-built trees with known answers,
node independence on the real world model, the deadline, and real battles."""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import FakeClock

from pokegym.arena import ArenaConfig, run_arena
from pokegym.world.data import load_dex
from pokegym.world.sets import compute_stats
from pokegym.world.state import BattleState, MonState, SideState
from pokegym.world.transition import TransitionModel
from policies.core.evaluation import HeuristicEvaluator, terminal_value
from policies.search.maximin import LookaheadProposer, MinimaxSearch


# --------------------------------------------------------------- hand-built trees
def tree_state(path=()):
    """A live battle state that only carries the path of joint actions taken so far."""
    mon = MonState("pikachu", 50, ("Electric",), (100, 50, 50, 50, 50, 50), 100.0)
    other = MonState("eevee", 50, ("Normal",), (100, 50, 50, 50, 50, 50), 100.0)
    return BattleState(sides=[SideState([mon]), SideState([other])], notes={"path": path})


class TreeModel:
    """A game tree as a world model: a state is its path; actions are labels."""

    def __init__(self, ours, theirs):
        self.ours, self.theirs = ours, theirs
        self.steps = 0

    def legal_actions(self, state, side):
        return list(self.ours if side == 0 else self.theirs)

    def step(self, state, a, b):
        self.steps += 1
        return tree_state(state.notes["path"] + ((a, b),))


class Fixed:
    def __init__(self, actions):
        self.actions = actions

    def propose(self, state, side, legal):
        return [a for a in self.actions if a in legal]


class TableEvaluator:
    """Leaf values from a table keyed by the path of joint-action labels."""

    def __init__(self, table, delay=0.0):
        self.table, self.delay, self.batches = table, delay, []

    def evaluate(self, states):
        time.sleep(self.delay)
        self.batches.append(len(states))
        return [self.table[tuple((a[1], b[1]) for a, b in s.notes["path"])] for s in states]


A1, A2 = ("move", "a1", False), ("move", "a2", False)
B1, B2 = ("move", "b1", False), ("move", "b2", False)


def search_for(table, depth):
    model = TreeModel([A1, A2], [B1, B2])
    evaluator = TableEvaluator(table)
    search = MinimaxSearch(model, Fixed([A1, A2]), Fixed([B1, B2]), evaluator, depth=depth,
                           key=lambda s: s.notes["path"])  # fmt: skip
    return search, evaluator, model


def test_depth_one_backs_up_max_over_ours_of_min_over_theirs():
    table = {(("a1", "b1"),): 0.9, (("a1", "b2"),): 0.1, (("a2", "b1"),): 0.4, (("a2", "b2"),): 0.5}
    search, evaluator, _ = search_for(table, depth=1)
    assert search.search(tree_state(), [A1, A2]) == A2  # max-max would pick a1 (0.9)
    tree = search.last_tree
    assert tree.values == {A1: 0.1, A2: 0.4}
    assert tree.worst_reply == {A1: B2, A2: B1}
    assert evaluator.batches == [4]  # the node's four leaves in one call
    assert search.value(tree_state(), 1) == pytest.approx(0.4)


def test_caution_blends_the_worst_reply_with_the_mean_of_the_replies():
    # a1 is a gamble (0.9 or 0.1), a2 is safe (0.4 or 0.5).
    table = {(("a1", "b1"),): 0.9, (("a1", "b2"),): 0.1, (("a2", "b1"),): 0.4, (("a2", "b2"),): 0.5}
    model = TreeModel([A1, A2], [B1, B2])

    def run(caution):
        search = MinimaxSearch(model, Fixed([A1, A2]), Fixed([B1, B2]), TableEvaluator(table),
                               depth=1, key=lambda s: s.notes["path"], caution=caution)  # fmt: skip
        return search.search(tree_state(), [A1, A2]), search.last_tree

    assert run(1.0)[0] == A2  # maximin: the safe move
    chosen, tree = run(0.0)  # replies equally likely: 0.5 vs 0.45
    assert chosen == A1 and tree.values == {A1: pytest.approx(0.5), A2: pytest.approx(0.45)}
    _, tree = run(0.5)
    assert tree.values == {A1: pytest.approx(0.3), A2: pytest.approx(0.425)}
    assert tree.worst_reply == {A1: B2, A2: B1}  # still the reply that hurts most
    with pytest.raises(ValueError, match="caution"):
        MinimaxSearch(model, Fixed([A1]), Fixed([B1]), TableEvaluator(table), caution=1.5)


def test_reply_decay_trusts_the_opponent_models_ranking_in_the_mean():
    # The opponent model ranks b1 first. a1 wins big against b1 and loses to b2.
    table = {(("a1", "b1"),): 0.9, (("a1", "b2"),): 0.1, (("a2", "b1"),): 0.4, (("a2", "b2"),): 0.5}
    model = TreeModel([A1, A2], [B1, B2])

    def run(decay):
        search = MinimaxSearch(model, Fixed([A1, A2]), Fixed([B1, B2]), TableEvaluator(table),
                               depth=1, key=lambda s: s.notes["path"], caution=0.0,
                               reply_decay=decay)  # fmt: skip
        return search.search(tree_state(), [A1, A2]), search.last_tree

    _, tree = run(1.0)  # equal weights
    assert tree.values == {A1: pytest.approx(0.5), A2: pytest.approx(0.45)}
    chosen, tree = run(0.25)  # weights 0.8 / 0.2: b1 is the expected reply
    assert chosen == A1
    assert tree.values == {A1: pytest.approx(0.74), A2: pytest.approx(0.42)}
    # With caution 1 the ranking does not matter: the worst reply decides.
    search = MinimaxSearch(model, Fixed([A1, A2]), Fixed([B1, B2]), TableEvaluator(table),
                           depth=1, key=lambda s: s.notes["path"], reply_decay=0.25)  # fmt: skip
    assert search.search(tree_state(), [A1, A2]) == A2
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="reply_decay"):
            MinimaxSearch(model, Fixed([A1]), Fixed([B1]), TableEvaluator(table), reply_decay=bad)


def test_a_predicted_reply_is_answered_at_the_root():
    # Maximin picks the safe a2; if the opponent is expected to play b1, a1 is better.
    table = {(("a1", "b1"),): 0.9, (("a1", "b2"),): 0.1, (("a2", "b1"),): 0.4, (("a2", "b2"),): 0.5}
    model = TreeModel([A1, A2], [B1, B2])

    def run(predicted, weight, opponent=(B1, B2)):
        search = MinimaxSearch(model, Fixed([A1, A2]), Fixed(list(opponent)),
                               TableEvaluator(table), depth=1,
                               key=lambda s: s.notes["path"])  # fmt: skip
        chosen = search.search(tree_state(), [A1, A2], predicted=predicted,
                               predicted_weight=weight)  # fmt: skip
        return chosen, search.last_tree

    chosen, tree = run(B1, 1.0)  # a best response to b1 alone
    assert chosen == A1 and tree.replies == [B1]
    assert tree.values == {A1: pytest.approx(0.9), A2: pytest.approx(0.4)}
    chosen, tree = run(B1, 0.5)  # half the prediction, half maximin
    assert tree.values == {A1: pytest.approx(0.5), A2: pytest.approx(0.4)}
    assert chosen == A1 and tree.worst_reply == {A1: B2, A2: B1}
    # A prediction the opponent model did not propose joins its replies.
    _, tree = run(B1, 0.5, opponent=(B2,))
    assert tree.replies == [B2, B1]  # and counts in the backup over the replies too
    assert tree.values == {A1: pytest.approx(0.5), A2: pytest.approx(0.4)}
    # An illegal prediction, or none, leaves plain maximin.
    for predicted in (None, ("move", "b9", False)):
        chosen, tree = run(predicted, 1.0)
        assert chosen == A2 and tree.values == {A1: 0.1, A2: 0.4}
    with pytest.raises(ValueError, match="predicted_weight"):
        run(B1, 1.5)


def test_depth_two_known_answer():
    # Leaves two turns down. After (a1, *) the position is good for us only if we then
    # play a1 again; after (a2, *) it is mediocre whatever happens.
    table = {}
    for first in (("a1", "b1"), ("a1", "b2")):
        for second, value in ((("a1", "b1"), 0.8), (("a1", "b2"), 0.7),
                              (("a2", "b1"), 0.2), (("a2", "b2"), 0.9)):  # fmt: skip
            table[(first, second)] = value
    for first in (("a2", "b1"), ("a2", "b2")):
        for second, value in ((("a1", "b1"), 0.6), (("a1", "b2"), 0.65),
                              (("a2", "b1"), 0.5), (("a2", "b2"), 0.3)):  # fmt: skip
            table[(first, second)] = value
    table.update({(first,): 0.5 for first, _ in table})  # depth 1 of iterative deepening
    search, _, model = search_for(table, depth=2)
    # V(after a1, ·) = max(min(.8, .7), min(.2, .9)) = .7
    # V(after a2, ·) = max(min(.6, .65), min(.5, .3)) = .6
    assert search.search(tree_state(), [A1, A2]) == A1
    assert search.last_tree.values == {A1: pytest.approx(0.7), A2: pytest.approx(0.6)}
    assert search.last_tree.depth_completed == 2
    assert model.steps == 4 + 16 + 4  # depth 1 then depth 2 (iterative deepening)


def test_deadline_returns_the_deepest_completed_answer_in_time(monkeypatch):
    """On a clock that only the evaluator moves (0.2 s a batch, a 0.5 s budget): the
    search stops at the first check past the deadline and answers with the deepest
    depth it completed."""
    import policies.search.maximin

    table = {(("a1", "b1"),): 0.2, (("a1", "b2"),): 0.3, (("a2", "b1"),): 0.6, (("a2", "b2"),): 0.7}
    clock = FakeClock()
    clock.install(monkeypatch, policies.search.maximin)

    class Slow(TableEvaluator):
        def evaluate(self, states):
            clock.advance(self.delay)  # the cost of the batch, reported on the clock
            self.batches.append(len(states))
            paths = [tuple((a[1], b[1]) for a, b in s.notes["path"]) for s in states]
            return [self.table.get(path, 0.5) for path in paths]

    model = TreeModel([A1, A2], [B1, B2])
    slow = Slow(table, delay=0.2)
    search = MinimaxSearch(model, Fixed([A1, A2]), Fixed([B1, B2]), slow,
                           depth=3, key=lambda s: s.notes["path"])  # fmt: skip
    start = clock()
    action = search.search(tree_state(), [A1, A2], deadline=start + 0.5, fallback=A1)
    # Depth 1 is one batch (0-0.2 s); depth 2's batches start at 0.2 and 0.4 s, the one
    # under way at the deadline ends past it, and no batch starts after it.
    assert len(slow.batches) == 3
    assert clock() - start == pytest.approx(0.6)
    assert search.last_tree.timed_out
    assert search.last_tree.depth_completed == 1 and action == A2
    # Past the deadline before anything finished: the fallback, without evaluating.
    batches = len(slow.batches)
    start = clock()
    assert search.search(tree_state(), [A1, A2], deadline=start - 1, fallback=A1) == A1
    assert search.last_tree.depth_completed == 0
    assert len(slow.batches) == batches and clock() == start


# ------------------------------------------------------------ the real world model
def make_mon(dex, species, moves, hp_fraction=1.0):
    entry = dex.species_entry(species)
    raw = compute_stats(dex, species, 100, (84,) * 6, (31,) * 6, "")
    stats = (raw["hp"], raw["atk"], raw["def"], raw["spa"], raw["spd"], raw["spe"])
    ability = next(iter(entry["abilities"].values())).lower().replace(" ", "")
    return MonState(species, 100, tuple(entry["types"]), stats, stats[0] * hp_fraction,
                    tuple(moves), ability=ability)  # fmt: skip


def test_search_on_the_world_model_keeps_nodes_independent():
    dex = load_dex(9)
    model = TransitionModel(dex)
    ours = [make_mon(dex, "garchomp", ("earthquake", "dragonclaw", "stealthrock")),
            make_mon(dex, "corviknight", ("bravebird", "roost"))]  # fmt: skip
    theirs = [make_mon(dex, "heatran", ("magmastorm", "earthpower")),
              make_mon(dex, "rotomwash", ("hydropump", "voltswitch"))]  # fmt: skip
    root = BattleState(sides=[SideState(ours), SideState(theirs)])
    root.sides[1].stealth_rock = True
    snapshot = root.copy()
    seen = []

    class Recording(HeuristicEvaluator):
        def evaluate(self, states):
            seen.extend(states)
            return super().evaluate(states)

    search = MinimaxSearch(model, LookaheadProposer(model, 4), LookaheadProposer(model, 4),
                           Recording(model), depth=2)  # fmt: skip
    legal = model.legal_actions(root, 0)
    action = search.search(root, legal)
    assert root == snapshot, "the search changed the root state"
    assert len({id(s) for s in seen}) == len(seen) > 20, "leaves must be distinct objects"
    assert action in legal
    # Earthquake KOs Heatran; Heatran's reply cannot stop it: the search must see that.
    assert action[:2] == ("move", "earthquake")
    # The same search again gives the same tree (no state leaks between searches).
    values = dict(search.last_tree.values)
    search.search(root, legal)
    assert search.last_tree.values == values


def test_chance_samples_the_first_turn_and_averages_it():
    dex = load_dex(9)
    model, sampler = TransitionModel(dex), TransitionModel(dex, mode="sample")
    # Stone Edge (80 % accurate) finishes the last opposing Pokémon when it hits.
    root = BattleState(sides=[
        SideState([make_mon(dex, "garchomp", ("stoneedge", "earthquake"))]),
        SideState([make_mon(dex, "charizard", ("airslash",), hp_fraction=0.01)]),
    ])  # fmt: skip
    edge, reply = ("move", "stoneedge", False), ("move", "airslash", False)
    legal = [a for a in model.legal_actions(root, 0) if not a[2]]
    evaluator = HeuristicEvaluator(model)
    snapshot = root.copy()

    def search(**options):
        return MinimaxSearch(model, LookaheadProposer(model, 4), LookaheadProposer(model, 4),
                             evaluator, depth=1, **options)  # fmt: skip

    expected = search()
    expected.search(root, legal)
    assert expected.last_tree.values[edge] == 1.0  # expected mode: an 80 % hit always lands

    sampled = search(chance=32, sampler=sampler, rng=np.random.default_rng(3))
    sampled.search(root, legal)
    dice = int(np.random.default_rng(3).integers(2**62))
    draws = []
    for i in range(32):
        child = sampler.step(root, edge, reply, rng=np.random.default_rng((dice, i)))
        done = terminal_value(child)
        draws.append(done if done is not None else min(1.0, evaluator.evaluate([child])[0]))
    assert 0 < draws.count(1.0) < 32, "some draws miss, most hit"
    assert sampled.last_tree.values[edge] == pytest.approx(sum(draws) / 32)
    assert 0.5 < sampled.last_tree.values[edge] < 1.0
    assert root == snapshot, "sampling changed the root state"

    with pytest.raises(ValueError, match="sampler"):
        search(chance=4)
    with pytest.raises(ValueError, match="sampler"):
        search(chance=4, sampler=model)
    with pytest.raises(ValueError, match="chance"):
        search(chance=-1)


def test_status_slots_keep_the_opponents_status_moves_among_its_replies():
    dex = load_dex(9)
    model = TransitionModel(dex)
    ours = [make_mon(dex, "garchomp", ("earthquake", "dragonclaw", "stoneedge", "stealthrock")),
            make_mon(dex, "corviknight", ("bravebird", "roost"))]  # fmt: skip
    theirs = [make_mon(dex, "heatran", ("magmastorm",))]
    state = BattleState(sides=[SideState(ours), SideState(theirs)])
    legal = model.legal_actions(state, 0)
    plain = LookaheadProposer(model, 3).propose(state, 0, legal)
    assert ("move", "stealthrock", False) not in plain  # attacks fill the places first
    kept = LookaheadProposer(model, 3, status_slots=1).propose(state, 0, legal)
    assert kept[:2] == plain[:2]  # best attack and best switch still lead
    assert kept[2] == ("move", "stealthrock", False) and len(kept) == 3
    # The width still bounds the candidates.
    assert len(LookaheadProposer(model, 2, status_slots=1).propose(state, 0, legal)) == 2


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_minimax_agent_plays_real_battles_within_its_time_limit():
    result = run_arena(
        ArenaConfig(
            agents=["minimax:time_limit=2.0", "max_power"],
            battles_per_pair=6,
            seed=2,
            concurrency=3,
        )
    )
    record = result.record("minimax")
    assert record["wins"] + record["losses"] + record["ties"] == 6
    assert record["wins"] >= 4, result.table()
    stats = result.agent_stats["minimax"]
    assert len(stats.latencies) == stats.decisions > 0


def test_alive_weight_makes_a_knock_out_worth_more_than_its_hp():
    dex = load_dex(9)

    def state(their_hp):
        ours = [
            make_mon(dex, "garchomp", ("earthquake",)),
            make_mon(dex, "corviknight", ("roost",)),
        ]
        theirs = [make_mon(dex, "heatran", ("magmastorm",), hp_fraction=their_hp),
                  make_mon(dex, "rotomwash", ("hydropump",))]  # fmt: skip
        return BattleState(sides=[SideState(ours), SideState(theirs)])

    sliver, knocked_out = state(0.05), state(0.0)
    knocked_out.sides[1].active = 1  # the replacement is in
    plain = HeuristicEvaluator(None)
    counting = HeuristicEvaluator(None, alive_weight=0.5)
    plain_gain = plain.value(knocked_out) - plain.value(sliver)
    counting_gain = counting.value(knocked_out) - counting.value(sliver)
    assert counting_gain > 3 * plain_gain > 0
    # Unseen opponents count as Pokémon left.
    unseen = state(1.0)
    unseen.notes = {"unseen": 2}
    assert counting.value(unseen) < plain.value(unseen)
