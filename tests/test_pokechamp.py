"""pokechamp: the LLM roles wired into the minimax (scripted backend, real battle
positions), the deadline with a slow backend, real battles in the arena, and one
decision of the real 0.5B model.

The backup rule and node independence of the search itself are pinned in
tests/test_search.py on hand-built trees and on the world model.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from helpers import FakeClock

from pokegym.actions import ActionCodec
from pokegym.agents import register_agent
from pokegym.arena import ArenaConfig, run_arena
from pokegym.backends.sim import SimBattleSession
from pokegym.formats import resolve_format
from pokegym.llm import ModelBundleError
from pokegym.llm.scripted import ScriptedModel
from pokegym.showdown.simulator import shared_simulator
from pokegym.text import VALUE_BUCKETS, ProtocolRecorder
from policies.pokechamp import LLMLeafEvaluator, PokeChampPolicy, action_label, leaf_text
from policies.search.maximin import LookaheadProposer
from policies.value_net import CheckpointError


def battle_position(seed: int = 3, turn: int = 3):
    """A live gen9randombattle seen by p1 at ``turn`` or later, after random play."""
    sim = shared_simulator()
    sim.ensure_running()
    fmt = resolve_format("gen9randombattle", simulator=sim)
    session = SimBattleSession(sim, fmt, seeds=(seed, seed + 1, seed + 2), names=("p1", "p2"))
    codec = ActionCodec(fmt.gimmick)
    ProtocolRecorder.attach(session.battles[0])  # the prompts' history of the turns
    rng = np.random.default_rng(seed)
    for _ in range(300):
        battle = session.battles[0]
        if (
            session.needs_choice(0) and not battle.teampreview and battle.turn >= turn
            and battle.available_moves and battle.available_switches
        ):  # fmt: skip
            return session, battle
        if session.finished:
            break
        choices = {}
        for side in (0, 1):
            if session.needs_choice(side):
                view = session.battles[side]
                choices[side] = codec.to_choice(int(rng.choice(codec.legal_actions(view))), view)
        session.choose(choices)
    session.close()
    raise AssertionError("no position with moves and switches found")


class RoleModel(ScriptedModel):
    """Scores by prompt kind: actions (a chosen label), opponent, value buckets.

    ``delay``: seconds each call (or batched call) costs, reported by advancing ``clock``
    (a :class:`helpers.FakeClock`) rather than by sleeping.
    """

    def __init__(
        self, favourite: str | None = None, delay: float = 0.0, clock: FakeClock | None = None
    ):
        super().__init__(scores=self._scores_for)
        self.favourite = favourite
        self.delay = delay
        self.clock = clock
        self.kinds: list[str] = []
        self.batches = 0
        self.calls: list[tuple[float, float]] = []  # (start, end) on the clock

    def _spend(self) -> None:
        if self.clock is not None and self.delay:
            start = self.clock()
            self.clock.advance(self.delay)
            self.calls.append((start, self.clock()))

    def _scores_for(self, prefix, options):
        text = prefix[-1]["content"]
        if tuple(options) == VALUE_BUCKETS:
            self.kinds.append("value")
            # Buckets 3 and 7 equally likely, the rest impossible: expected bucket 5.
            return [0.0 if o in ("3", "7") else -1e9 for o in options]
        if "opponent most likely do" in text:
            self.kinds.append("opponent")
            return [-float(i) for i in range(len(options))]
        self.kinds.append("action")
        return [5.0 if o == self.favourite else -float(i) for i, o in enumerate(options)]

    def score(self, prefix, options):
        self._spend()
        return super().score(prefix, options)

    def score_batch(self, requests):  # one batched pass: one delay
        self._spend()
        self.batches += 1
        return [ScriptedModel.score(self, r.prefix, r.options) for r in requests]


@pytest.mark.slow
def test_llm_roles_candidates_values_and_turn_cache():
    session, battle = battle_position()
    try:
        # The model's favourite: the last switch (not the lookahead's pick, as a rule).
        policy = PokeChampPolicy(model=RoleModel(), depth=1, candidates=1, time_limit=60)
        model = policy.model(battle.gen)
        root = policy.state(battle, model.dex)
        legal = model.legal_actions(root, 0)
        favourite = [a for a in legal if a[0] == "switch"][-1]
        scripted = RoleModel(action_label(model.dex, root, 0, favourite))
        policy = PokeChampPolicy(
            model=scripted, depth=1, candidates=1, opponent_candidates=1, time_limit=60
        )
        order = policy.choose(battle)
        assert order.order in (*battle.available_moves, *battle.available_switches)
        tree = policy.last_search.last_tree
        lookahead = LookaheadProposer(model, 2).propose(root, 0, legal)[:2]
        # The lookahead's best move and best switch are always candidates...
        assert set(lookahead) <= set(tree.candidates)
        # ...plus the model's favourite, and nothing else with candidates=1.
        assert favourite in tree.candidates and len(tree.candidates) <= 3
        assert policy.last_turn.notes["our_probabilities"]
        # The opponent model: the lookahead's worst reply plus the model's top prediction.
        assert 1 <= len(tree.replies) <= 2
        # Every leaf got the expectation of its buckets: (3 + 7) / 2 / 9 (or a terminal value).
        for value in tree.values.values():
            assert value == pytest.approx(5 / 9) or value in (0.0, 1.0)
        assert scripted.kinds.count("action") == 1 and scripted.kinds.count("opponent") == 1
        assert scripted.kinds.count("value") == len(tree.candidates) * len(tree.replies)
        assert "our candidates" in policy.last_log and "worst reply" in policy.last_log
        usage = policy.pop_usage()
        assert usage["calls"] == len(scripted.kinds) and policy.pop_usage()["calls"] == 0
        # Same turn again: every model answer comes from the turn's cache.
        calls = len(scripted.kinds)
        again = policy.choose(battle)
        assert len(scripted.kinds) == calls
        assert str(again) == str(order)
    finally:
        session.close()


@pytest.mark.slow
def test_leaf_text_and_value_expectation():
    session, battle = battle_position(seed=5)
    try:
        policy = PokeChampPolicy(model=RoleModel(), time_limit=60)
        model = policy.model(battle.gen)
        root = policy.state(battle, model.dex)
        ours = model.legal_actions(root, 0)
        switch = next(a for a in ours if a[0] == "switch")
        theirs = model.legal_actions(root, 1)[0]
        child = model.step(root, switch, theirs)
        text = leaf_text(model, child, root)
        assert "You switched" in text and "Your Pokémon left" in text
        assert "p1" not in text and "p2" not in text  # species and move names only
        policy._root = root
        from policies.llm_common import Deadline
        from policies.pokechamp import _Turn

        turn = _Turn(policy, battle, root, model, Deadline(math.inf))
        evaluator = LLMLeafEvaluator(turn, None)  # type: ignore[arg-type]
        values = evaluator.evaluate([child, model.step(root, ours[0], theirs)])
        assert values == pytest.approx([5 / 9, 5 / 9])
    finally:
        session.close()


@pytest.mark.slow
def test_slow_backend_still_answers_in_time(monkeypatch):
    """The deadline logic on a clock that only the model moves: each call costs 1 s of
    a 2 s limit. Calls not expected to end before the deadline are not started, the
    search keeps the deepest depth it completed, and the order comes at once."""
    import policies.llm_common
    import policies.pokechamp
    import policies.search.maximin

    session, battle = battle_position(seed=7)
    try:
        clock = FakeClock()
        clock.install(monkeypatch, policies.search.maximin, policies.pokechamp, policies.llm_common)
        slow = RoleModel(delay=1.0, clock=clock)
        policy = PokeChampPolicy(model=slow, depth=2, time_limit=2.0)
        start = clock()
        order = policy.choose(battle)
        assert order.order in (*battle.available_moves, *battle.available_switches)
        deadline = policy._deadline.at
        assert start < deadline <= start + 2.0
        # The first call has no estimate yet and is made; after it, a call is started only
        # while its expected cost still fits before the deadline.
        assert slow.calls and slow.calls[0][0] == start
        for began, _ in slow.calls[1:]:
            assert deadline - began > 1.0, (slow.calls, deadline)
        assert clock() <= deadline, policy.last_log  # no call ran past the deadline
        assert len(slow.calls) <= 2 and policy.llm.usage.deadline_misses >= 1
        tree = policy.last_search.last_tree
        assert tree.depth_completed >= 1 and tree.chosen in tree.candidates
    finally:
        session.close()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_pokechamp_plays_real_battles_with_the_scripted_backend():
    register_agent("pokechamp_scripted", lambda **o: PokeChampPolicy(model=RoleModel(), **o))
    result = run_arena(
        ArenaConfig(
            agents=["pokechamp_scripted:depth=2", "max_power"],
            battles_per_pair=2,
            seed=4,
            concurrency=2,
        )
    )
    record = result.record("pokechamp_scripted")
    assert record["battles"] == 2 and record["timeouts"] == 0
    stats = result.agent_stats["pokechamp_scripted"]
    assert stats.usage["calls"] > stats.decisions  # proposer + opponent + leaf batches
    assert len(stats.latencies) == stats.decisions


def test_bad_options_are_refused(tmp_path):
    with pytest.raises(ValueError, match="depth"):
        PokeChampPolicy(model="scripted", depth=3)
    with pytest.raises(ValueError, match="up to 3 with evaluator=distilled"):
        PokeChampPolicy(model="scripted", evaluator="distilled", depth=4)
    with pytest.raises(ValueError, match="evaluator"):
        PokeChampPolicy(model="scripted", evaluator="oracle")
    with pytest.raises(ValueError, match="checkpoint= is the value network"):
        PokeChampPolicy(model="scripted", checkpoint=str(tmp_path))
    with pytest.raises(CheckpointError, match="pokegym distill"):
        PokeChampPolicy(model="scripted", evaluator="distilled", checkpoint=str(tmp_path / "no"))
    with pytest.raises(TypeError, match="model_"):
        PokeChampPolicy(model="scripted", dept=2)


def _bundle_installed() -> bool:
    try:
        from pokegym.llm.bundle import BUNDLES, part_files

        part_files(BUNDLES["qwen-0.5b"])
    except (ImportError, ModelBundleError):
        return False
    return True


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.skipif(
    not _bundle_installed() and not os.environ.get("CI"),
    reason="the qwen-0.5b bundle is not installed (in CI, where make installs it, this fails)",
)
def test_one_real_model_decision():
    """The real model through every role of one decision. How long it takes depends on
    the machine (`pokegym bench llm` measures it); the deadline logic is tested with a
    scripted model and a fake clock above."""
    session, battle = battle_position(seed=11)
    try:
        policy = PokeChampPolicy(model="qwen-0.5b", model_threads=1, depth=1, time_limit=90)
        assert policy.llm.model is not None  # load outside the decision clock
        order = policy.choose(battle)
        assert order.order in (*battle.available_moves, *battle.available_switches)
        usage = policy.pop_usage()
        assert usage["calls"] >= 1 and usage["tokens_in"] > 500, usage
        assert "our candidates" in policy.last_log
    finally:
        session.close()


@pytest.mark.slow
def test_depth_two_uses_the_model_at_the_root_and_narrow_inner_nodes():
    session, battle = battle_position(seed=9)
    try:
        scripted = RoleModel()
        policy = PokeChampPolicy(model=scripted, depth=2, inner_width=2, time_limit=60)
        policy.choose(battle)
        tree = policy.last_search.last_tree
        assert tree.depth_completed == 2 and not tree.timed_out
        assert scripted.kinds.count("action") == 1 and scripted.kinds.count("opponent") == 1
        # Leaves: the root grid at depth 1, then at most 2 x 2 per inner node (one inner
        # node per root joint action), one batch per node.
        inner_nodes = len(tree.candidates) * len(tree.replies)
        assert 0 < scripted.kinds.count("value") <= inner_nodes * (1 + 4)
        assert scripted.batches <= 1 + inner_nodes
    finally:
        session.close()


@pytest.mark.slow
def test_the_hybrid_asks_the_model_at_the_root_and_the_network_at_the_leaves():
    """evaluator=distilled: one model call for our candidates and one for the opponent's
    replies, no value prompt, every leaf from the value network, two full turns."""
    session, battle = battle_position(seed=9)
    try:
        scripted = RoleModel()
        policy = PokeChampPolicy(model=scripted, evaluator="distilled", time_limit=60)
        order = policy.choose(battle)
        assert order.order in (*battle.available_moves, *battle.available_switches)
        tree = policy.last_search.last_tree
        assert tree.depth_completed == 2 and policy.depths == [2]
        assert sorted(scripted.kinds) == ["action", "opponent"]
        evaluator = policy.last_turn.notes["evaluator"]
        assert type(evaluator).__name__ == "ValueNetEvaluator" and evaluator.states > 0
        assert {v for v in tree.values.values() if v not in (0.0, 1.0)}  # not bucket values
        assert policy.pop_usage()["calls"] == 2
    finally:
        session.close()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_one_real_model_decision_of_the_hybrid():
    """The hybrid with the real local model: the model proposes at the root, the network
    values the leaves of a two-turn search."""
    session, battle = battle_position(seed=11)
    try:
        policy = PokeChampPolicy(model="qwen-0.5b", model_threads=1, evaluator="distilled",
                                 time_limit=120)  # fmt: skip
        assert policy.llm.model is not None  # load outside the decision clock
        order = policy.choose(battle)
        assert order.order in (*battle.available_moves, *battle.available_switches)
        usage = policy.pop_usage()
        # The prompts' tokens were read now or come from the model's prompt cache (an
        # earlier test may have shown it the same battle).
        assert 1 <= usage["calls"] <= 2, usage
        assert usage["tokens_in"] + usage.get("cached_tokens", 0) > 500, usage
        assert policy.depths[-1] >= 1 and "our candidates" in policy.last_log
    finally:
        session.close()
