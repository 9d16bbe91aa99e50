"""The distilled agent: the shipped checkpoint loads, the evaluator scores world-model
states, root priors join the candidates, and the agent plays real battles at depth 2."""

from __future__ import annotations

import numpy as np
import pytest

from bench.worldmodel import play_and_score
from pokegym.agents import register_agent
from pokegym.arena import ArenaConfig, run_arena
from pokegym.world.data import load_dex
from pokegym.world.transition import TransitionModel
from policies.core.anchors import ANCHOR_RULES
from policies.core.battle import world_action
from policies.core.evaluators import ValueNetEvaluator
from policies.distilled import DistilledPolicy, PriorProposer
from policies.search.maximin import LookaheadProposer
from policies.value_net import CheckpointError, StateEncoder, default_checkpoint, load_checkpoint


@pytest.fixture(scope="module")
def states():
    _, samples = play_and_score(2, ["gen9randombattle"], seed=5, progress=False)
    return [state for state, _, _ in samples]


@pytest.mark.slow
def test_shipped_checkpoint_scores_world_model_states(states):
    network = load_checkpoint(default_checkpoint())
    model = TransitionModel(load_dex(9))
    evaluator = ValueNetEvaluator(StateEncoder(model), network)
    values = evaluator.evaluate(states)
    assert len(values) == len(states) and all(0.0 < v < 1.0 for v in values)
    # One state at a time (as the MCTS asks) takes the vector path: the same values.
    one_by_one = [evaluator.evaluate([s])[0] for s in states]
    assert np.allclose(one_by_one, values, rtol=0, atol=1e-6)
    assert len(set(np.round(values, 6))) > 1  # it tells positions apart
    # A position where side 0 lost its whole team but one Pokémon at 1 HP is worse.
    rich = [i for i, s in enumerate(states) if len(s.sides[0].alive()) >= 4]
    state = states[max(rich, key=lambda i: values[i])].copy()
    worse = state.copy()
    for mon in worse.sides[0].mons[1:]:
        mon.hp = 0.0
    worse.sides[0].active = 0
    worse.sides[0].mons[0].hp = 1.0
    better, bad = evaluator.evaluate([state, worse])
    assert bad < better
    # The heuristic blend is a convex combination.
    blended = ValueNetEvaluator(StateEncoder(model), network, heuristic_weight=1.0)
    assert blended.evaluate([state])[0] == pytest.approx(
        float(StateEncoder(model).encode(state)[-2]), abs=1e-6
    )


@pytest.mark.slow
def test_root_priors_are_added_only_at_the_root(states):
    model = TransitionModel(load_dex(9))
    state = states[0]
    legal = model.legal_actions(state, 0)
    base = LookaheadProposer(model, 1)
    plain = base.propose(state, 0, legal)
    wanted = next(a for a in reversed(legal) if a not in plain)
    proposer = PriorProposer(base, state.turn, lambda s, actions: [wanted, *actions], extra=1)
    assert proposer.propose(state, 0, legal) == [*plain, wanted]  # one extra, at the end
    child = model.step(state, legal[0], model.legal_actions(state, 1)[0])
    child_legal = model.legal_actions(child, 0)
    assert proposer.propose(child, 0, child_legal) == base.propose(child, 0, child_legal)
    assert proposer.propose(state, 1, model.legal_actions(state, 1)) == base.propose(
        state, 1, model.legal_actions(state, 1)
    )


def test_missing_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(CheckpointError, match="pokegym distill"):
        DistilledPolicy(checkpoint=str(tmp_path / "nothing"))
    with pytest.raises(ValueError, match="depth >= 2"):
        DistilledPolicy(depth=1)


@pytest.mark.slow
def test_distilled_plays_real_battles_at_depth_two():
    agents: list[DistilledPolicy] = []

    def factory(**options):
        agent = DistilledPolicy(**options)
        agents.append(agent)
        return agent

    register_agent("distilled_probe", factory)
    config = ArenaConfig(agents=["distilled_probe:time_limit=5.0", "max_power"],
                         battles_per_pair=2, concurrency=2, simulators=1, seed=4)  # fmt: skip
    result = run_arena(config)
    record = result.record("distilled_probe")
    assert record["battles"] == 2 and record["timeouts"] == 0
    depths = [d for agent in agents for d in agent.depths]
    assert depths and all(d >= 1 for d in depths)
    assert sum(d >= 2 for d in depths) / len(depths) > 0.9  # a generous clock: depth 2


class AnchorProbe(DistilledPolicy):
    """Calls ``record(anchor, played)`` after each decision that had an anchor."""

    def anchor(self, battle, orders):
        self._probe_anchor = super().anchor(battle, orders)
        return self._probe_anchor

    def choose(self, battle):
        self._probe_anchor = None
        order = super().choose(battle)
        if self._probe_anchor is not None:
            self.record(self._probe_anchor, world_action(order, battle))
        return order

    def record(self, anchor, played):
        raise AssertionError("a probe records what it needs")


@pytest.mark.slow
def test_the_anchor_is_played_unless_the_search_beats_it_by_the_margin():
    """``anchor=abyssal``: abyssal's choice is always a root candidate; the search replaces
    it only with an action whose backed-up value is higher by more than the margin."""
    seen: list[tuple[float, object, object, dict]] = []

    class Probe(AnchorProbe):
        def record(self, anchor, played):
            tree = self.last_search.last_tree if self.last_search is not None else None
            if tree is not None:
                seen.append((self.anchor_margin, anchor, played, dict(tree.values)))
                assert anchor in tree.candidates

    register_agent("distilled_anchor_probe", Probe)
    for margin in (1.0, 0.0):
        config = ArenaConfig(agents=[f"distilled_anchor_probe:anchor_margin={margin}", "abyssal"],
                             battles_per_pair=2, concurrency=2, simulators=1, seed=9)  # fmt: skip
        assert run_arena(config).record("distilled_anchor_probe")["battles"] == 2
    strict = [s for s in seen if s[0] == 1.0]
    free = [s for s in seen if s[0] == 0.0]
    assert len(strict) > 10 and len(free) > 10
    assert all(anchor == played for _, anchor, played, _ in strict)
    for _, anchor, played, values in free:
        if anchor in values and played != anchor:
            assert values[played] > values[anchor]
    # With no margin the search does overrule the anchor sometimes.
    assert any(anchor != played for _, anchor, played, _ in free)


def test_bad_anchor_options_are_clear_errors():
    with pytest.raises(ValueError, match="anchor must be one of"):
        DistilledPolicy(anchor="nobody")
    with pytest.raises(ValueError, match="anchor_margin"):
        DistilledPolicy(anchor_margin=2.0)
    assert DistilledPolicy(anchor="none").anchor_name == "none"


@pytest.mark.slow
def test_trusted_rules_are_played_without_a_search():
    seen: list[tuple[object, object, object]] = []

    class Probe(AnchorProbe):
        def record(self, anchor, played):
            seen.append((anchor, played, self.last_search))

    register_agent("distilled_trust_probe", Probe)
    every = "+".join(ANCHOR_RULES)
    config = ArenaConfig(agents=[f"distilled_trust_probe:trust={every}", "max_power"],
                         battles_per_pair=1, concurrency=1, simulators=1, seed=3)  # fmt: skip
    assert run_arena(config).record("distilled_trust_probe")["battles"] == 1
    assert len(seen) > 5
    assert all(anchor == played and search is None for anchor, played, search in seen), [
        (a, p, s is None) for a, p, s in seen if a != p or s is not None
    ]
    agent = DistilledPolicy(trust="finish+hazard")
    assert agent.trusted_rules == {"finish", "hazard"}
    agent._anchor_rule = "hazard"
    assert agent.anchor_margin_now() == float("inf")
    agent._anchor_rule = "attack"
    assert agent.anchor_margin_now() == agent.anchor_margin
    with pytest.raises(ValueError, match="trust names the anchor's rules"):
        DistilledPolicy(trust="finish+finsh")


@pytest.mark.slow
def test_members_under_a_checkpoint_are_averaged(tmp_path, states):
    import shutil

    from policies.value_net import EnsembleNetwork, load_ensemble, save_checkpoint

    folder = tmp_path / "ck"
    shutil.copytree(default_checkpoint(), folder)
    single = load_checkpoint(folder)
    assert load_ensemble(folder) is not None and not isinstance(load_ensemble(folder),
                                                                 EnsembleNetwork)  # fmt: skip
    # A member whose value head is shifted: the average lies between the two.
    weights = {k: v.copy() for k, v in single.weights.items()}
    weights["value_head.bias"] = weights["value_head.bias"] + 1.0
    save_checkpoint(
        folder / "members" / "m1",
        single.config,
        weights,
        {k: v for k, v in single.meta.items() if k not in ("format", "version")},
    )
    ensemble = load_ensemble(folder)
    assert isinstance(ensemble, EnsembleNetwork) and len(ensemble.members) == 2
    features = StateEncoder(TransitionModel(load_dex(9))).encode_many(states[:20])
    low, high = single.win_probability(features), ensemble.members[1].win_probability(features)
    assert np.all(high > low)
    assert np.allclose(ensemble.win_probability(features), (low + high) / 2)
    one = [ensemble.win_probability_one(row) for row in features]
    assert np.allclose(one, (low + high) / 2, atol=1e-6)  # the one-state path agrees
    assert np.array_equal(ensemble.embed(features), single.embed(features))  # memory unchanged
    assert isinstance(DistilledPolicy(checkpoint=str(folder)).network, EnsembleNetwork)
    assert not isinstance(DistilledPolicy(checkpoint=str(folder), ensemble=False).network,
                          EnsembleNetwork)  # fmt: skip
    # A corrupt member is a clear error that names it.
    (folder / "members" / "m1" / "model.safetensors").write_bytes(b"not a tensor file")
    with pytest.raises(CheckpointError, match="m1"):
        load_ensemble(folder)


@pytest.mark.slow
def test_adaptive_caution_follows_the_value_of_the_root(states):
    class Fixed:
        def __init__(self, value):
            self.value, self.seen = value, []

        def evaluate(self, batch):
            self.seen.extend(batch)
            return [self.value] * len(batch)

    agent = DistilledPolicy(caution=0.5, adaptive_caution=0.5)
    ahead, behind, even = Fixed(0.9), Fixed(0.1), Fixed(0.5)
    assert agent.caution_now(states[0], ahead) == pytest.approx(0.9)  # keep the lead safely
    assert agent.caution_now(states[0], behind) == pytest.approx(0.1)  # play the odds
    assert agent.caution_now(states[0], even) == pytest.approx(0.5)
    assert ahead.seen == [states[0]]
    assert DistilledPolicy(caution=0.9, adaptive_caution=1.0).caution_now(states[0], ahead) == 1.0
    fixed = Fixed(0.9)
    assert DistilledPolicy(caution=0.5).caution_now(states[0], fixed) == 0.5 and not fixed.seen
    with pytest.raises(ValueError, match="adaptive_caution"):
        DistilledPolicy(adaptive_caution=1.5)


@pytest.mark.slow
def test_several_determinizations_average_the_root_values():
    calls: list[dict] = []

    class Probe(DistilledPolicy):
        def _other_worlds(self, battle, model, first, actions, *rest):
            values = super()._other_worlds(battle, model, first, actions, *rest)
            calls.append({"first": dict(first.last_tree.values), "mean": values,
                          "legal": set(actions)})  # fmt: skip
            return values

    register_agent("distilled_worlds_probe", Probe)
    config = ArenaConfig(agents=["distilled_worlds_probe:determinizations=3,time_limit=3.0",
                                 "max_power"], battles_per_pair=1, concurrency=1,
                         simulators=1, seed=6)  # fmt: skip
    assert run_arena(config).record("distilled_worlds_probe")["battles"] == 1
    assert len(calls) > 5
    for call in calls:
        assert call["mean"] and set(call["mean"]) <= set(call["first"]) <= call["legal"]
        assert all(0.0 <= v <= 1.0 for v in call["mean"].values())
    # Sampled worlds differ from the modal one somewhere: the average is not the first table.
    assert any(call["mean"] != {a: call["first"][a] for a in call["mean"]} for call in calls)
    with pytest.raises(ValueError, match="determinizations"):
        DistilledPolicy(determinizations=0)


@pytest.mark.slow
def test_chance_samples_the_root_turn_in_real_battles():
    searches: list[tuple[int, int, int]] = []

    class Probe(DistilledPolicy):
        def choose(self, battle):
            order = super().choose(battle)
            search = self.last_search
            if search is not None and search.last_tree.depth_completed:
                tree = search.last_tree
                assert search.sampler is not None and search.sampler.mode == "sample"
                searches.append((search.chance, tree.nodes, len(tree.candidates)))
            return order

    register_agent("distilled_chance_probe", Probe)
    config = ArenaConfig(agents=["distilled_chance_probe:chance=3,time_limit=3.0", "max_power"],
                         battles_per_pair=1, concurrency=1, simulators=1, seed=8)  # fmt: skip
    record = run_arena(config).record("distilled_chance_probe")
    assert record["battles"] == 1 and record["timeouts"] == 0
    assert len(searches) > 5
    # Every root joint action has three sampled children: at least 3 nodes per candidate.
    assert all(chance == 3 and nodes >= 3 * n for chance, nodes, n in searches)
    with pytest.raises(ValueError, match="chance"):
        DistilledPolicy(chance=-1)
