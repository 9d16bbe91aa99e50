"""Simultaneous-move MCTS: tiny games with known answers first (matrix games, a forced
win, chance outcomes), then the budget rules with an injected clock, then the ``mcts``
agent on real battles."""

from __future__ import annotations

import contextlib
import gc

import numpy as np
import pytest

import policies.search.mcts as mcts_module
from policies.search.mcts import SMMCTS, SearchConfig, collector_paused


# ------------------------------------------------------------------ tiny games
class MatrixGame:
    """One simultaneous turn; the payoff of side 0 is ``table[a][b]``."""

    def __init__(self, table):
        self.table = table
        self.steps = 0

    def actions(self, state, side):
        if state != "start":
            return ["-"]
        return list(range(len(self.table) if side == 0 else len(self.table[0])))

    def step(self, state, a, b, rng):
        self.steps += 1
        return ("end", self.table[a][b])

    def terminal_value(self, state):
        return None if state == "start" else state[1]


class Half:
    """Evaluator for unfinished states: one half (never called in one-turn games)."""

    def __init__(self):
        self.calls = 0

    def evaluate(self, states):
        self.calls += len(states)
        return [0.5] * len(states)


RPS = [[0.5, 0.0, 1.0], [1.0, 0.5, 0.0], [0.0, 1.0, 0.5]]  # rock, paper, scissors


@pytest.mark.parametrize("selection,exploration", [("exp3", 0.2), ("duct", 0.6)])
def test_rock_paper_scissors_root_strategy_is_near_uniform(selection, exploration):
    search = SMMCTS(MatrixGame(RPS), Half(), SearchConfig(selection, exploration))
    stats = search.search(["start"], np.random.default_rng(1), iterations=6000)
    for side in (0, 1):
        shares = list(stats.shares(side).values())
        assert len(shares) == 3
        assert max(abs(s - 1 / 3) for s in shares) < 0.08, (selection, side, shares)
    assert abs(np.nanmean(stats.values[0]) - 0.5) < 0.05


@pytest.mark.parametrize("selection", ["exp3", "duct"])
def test_dominant_action_gets_most_visits(selection):
    # Row 1 beats row 0 against every column; column 0 is best for side 1 against both rows.
    table = [[0.2, 0.6], [0.4, 0.9]]
    search = SMMCTS(MatrixGame(table), Half(), SearchConfig(selection, 0.3))
    stats = search.search(["start"], np.random.default_rng(2), iterations=3000)
    assert stats.best(0) == 1
    assert stats.best(1) == 0
    assert stats.shares(0)[1] > 0.7
    # Equilibrium value of the pure saddle point (row 1, column 0).
    assert stats.values[0][1] == pytest.approx(0.4, abs=0.12)


class RaceGame:
    """Two turns. At the start, side 0 can ``go`` (then wins at once if side 1 played
    ``wait``, loses if it played ``block``) or ``prepare``; after ``prepare`` it wins
    next turn whatever side 1 does. Side 1 has ``wait`` and ``block`` at the start."""

    def actions(self, state, side):
        if state == "start":
            return ["go", "prepare"] if side == 0 else ["wait", "block"]
        return ["finish"] if side == 0 else ["wait", "block"]

    def step(self, state, a, b, rng):
        if state == "start":
            if a == "go":
                return ("over", 1.0 if b == "wait" else 0.0)
            return "prepared"
        return ("over", 1.0)

    def terminal_value(self, state):
        return state[1] if isinstance(state, tuple) else None


@pytest.mark.parametrize("selection", ["duct", "exp3"])
def test_finds_the_forced_win_two_turns_deep(selection):
    evaluator = Half()
    search = SMMCTS(RaceGame(), evaluator, SearchConfig(selection, 0.3))
    stats = search.search(["start"], np.random.default_rng(3), iterations=2000)
    assert stats.best(0) == "prepare"
    assert stats.values[0][stats.actions[0].index("prepare")] > 0.9
    assert stats.max_depth == 2


class CoinGame:
    """Side 0 picks ``safe`` (win chance 0.6, decided now) or ``coin`` (a fair coin:
    heads is a win, tails a loss); outcomes are told apart by the key."""

    def actions(self, state, side):
        return ["safe", "coin"] if state == "start" and side == 0 else ["-"]

    def step(self, state, a, b, rng):
        if a == "safe":
            return ("over", 0.6)
        return ("over", 1.0 if rng.random() < 0.5 else 0.0)

    def terminal_value(self, state):
        return state[1] if isinstance(state, tuple) else None


def test_chance_outcomes_are_separate_children_and_averaged():
    search = SMMCTS(CoinGame(), Half(), SearchConfig("duct", 1.5, chance=True),
                    outcome_key=lambda s: s)  # fmt: skip
    tree = search.new_tree("start")
    rng = np.random.default_rng(4)
    for _ in range(3000):
        search.iterate(tree, rng)
    coin = tree.root.actions[0].index("coin")
    assert set(tree.root.children[(coin, 0)]) == {("over", 1.0), ("over", 0.0)}
    stats = search.root_stats([tree])
    visits = tree.root.counts[0][coin]
    assert visits > 50
    # The mean of ``visits`` fair coin flips: within four standard errors of one half.
    assert stats.values[0][coin] == pytest.approx(0.5, abs=4 * 0.5 / visits**0.5)
    assert stats.best(0) == "safe"


def test_chance_needs_an_outcome_key():
    with pytest.raises(ValueError, match="outcome_key"):
        SMMCTS(CoinGame(), Half(), SearchConfig(chance=True))


@pytest.mark.parametrize(
    "kwargs,message",
    [({"selection": "ucb"}, "selection"), ({"exploration": 0}, "exploration"),
     ({"selection": "exp3", "exploration": 2}, "exp3"), ({"max_turns": 0}, "max_turns"),
     ({"prior_weight": -1}, "prior_weight"), ({"model_reply_turns": -1}, "model_reply_turns")],
)  # fmt: skip
def test_bad_config_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SearchConfig(**kwargs)


def test_same_seed_same_statistics():
    def run(seed):
        search = SMMCTS(MatrixGame(RPS), Half(), SearchConfig("exp3", 0.2))
        return search.search(["start"], np.random.default_rng(seed), iterations=500).visits

    assert run(7) == run(7)
    assert run(7) != run(8)


class StepClock:
    """A clock that advances ``tick`` seconds each time it is read."""

    def __init__(self, tick):
        self.now, self.tick, self.reads = 0.0, tick, 0

    def __call__(self):
        self.reads += 1
        self.now += self.tick
        return self.now


def test_time_budget_with_an_injected_clock():
    clock = StepClock(0.01)
    search = SMMCTS(MatrixGame(RPS), Half(), SearchConfig(), clock=clock)
    stats = search.search(["start"], np.random.default_rng(0), budget=1.0)
    # Each iteration reads the clock once: about 1.0 / 0.01 iterations fit in the budget.
    assert 95 <= stats.iterations <= 100
    assert stats.seconds == pytest.approx(stats.iterations * 0.01, abs=0.03)


def test_every_tree_gets_an_iteration_even_past_the_deadline():
    search = SMMCTS(MatrixGame(RPS), Half(), SearchConfig(), clock=StepClock(10.0))
    stats = search.search(["start", "start", "start"], np.random.default_rng(0), budget=0.5)
    assert stats.trees == 3
    assert stats.iterations == 3
    assert sum(stats.visits[0]) == pytest.approx(3.0)  # one share per tree


class GcWatcher(Half):
    """Records whether Python's cyclic collector was on at each evaluation."""

    def __init__(self):
        super().__init__()
        self.collector_on: list[bool] = []

    def evaluate(self, states):
        self.collector_on.append(gc.isenabled())
        return super().evaluate(states)


class Exploding(RaceGame):
    def step(self, state, a, b, rng):
        raise RuntimeError("the game broke")


def test_the_collector_is_paused_during_a_search_and_restored_after():
    assert gc.isenabled()
    watcher = GcWatcher()
    SMMCTS(RaceGame(), watcher).search(["start"], np.random.default_rng(0), iterations=50)
    assert watcher.collector_on and not any(watcher.collector_on)
    assert gc.isenabled()
    with pytest.raises(RuntimeError, match="the game broke"):
        SMMCTS(Exploding(), Half()).search(["start"], np.random.default_rng(0), iterations=5)
    assert gc.isenabled()  # switched back on when the search raised
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off before, so it stays off
    finally:
        gc.enable()


def test_iterations_and_budget_are_checked():
    search = SMMCTS(MatrixGame(RPS), Half())
    with pytest.raises(ValueError, match="budget"):
        search.search(["start"], np.random.default_rng(0))
    with pytest.raises(ValueError, match="iterations"):
        search.search(["start"], np.random.default_rng(0), iterations=0)
    with pytest.raises(ValueError, match="root"):
        search.search([], np.random.default_rng(0), iterations=5)
    with pytest.raises(ValueError, match="over"):
        search.search([("over", 1.0)], np.random.default_rng(0), iterations=5)


def test_prior_steers_the_first_visits():
    class Favour:
        def prior(self, state, side, actions):
            n = len(actions)
            if side == 0 and n > 1:
                return [0.9 if a == 2 else 0.1 / (n - 1) for a in actions]
            return [1.0 / n] * n

    flat = [[0.5] * 3 for _ in range(3)]  # every action is worth the same
    search = SMMCTS(MatrixGame(flat), Half(), SearchConfig("duct", 0.6), prior=Favour())
    stats = search.search(["start"], np.random.default_rng(0), iterations=200)
    assert stats.best(0) == 2
    plain = SMMCTS(MatrixGame(flat), Half(), SearchConfig("duct", 0.6))
    assert max(plain.search(["start"], np.random.default_rng(0), iterations=200).visits[0]) < 0.4


def test_a_model_reply_makes_the_search_answer_the_opponent_it_predicts():
    """Rock-paper-scissors against an opponent whose prior says it plays rock 90 % of the
    time. In the plain search the prior only steers side 1's first visits: side 1 then
    maximises and leaves rock once paper is searched. With model_reply_turns=1 side 1
    draws its root actions from that prior, so side 0's values are those of a best
    response to it: paper, worth 0.9 + 0.05 × ½."""

    class Rocky:
        def prior(self, state, side, actions):
            n = len(actions)
            if side == 1 and n > 1:
                return [0.9, 0.05, 0.05]
            return [1.0 / n] * n

    plain = SMMCTS(MatrixGame(RPS), Half(), SearchConfig("duct", 0.6), prior=Rocky())
    stats = plain.search(["start"], np.random.default_rng(4), iterations=6000)
    assert stats.shares(1)[0] < 0.5  # side 1 does not stay on rock
    config = SearchConfig("duct", 0.6, model_reply_turns=1)
    told = SMMCTS(MatrixGame(RPS), Half(), config, prior=Rocky())
    stats = told.search(["start"], np.random.default_rng(4), iterations=6000)
    assert stats.best(0) == 1 and stats.shares(0)[1] > 0.8
    assert stats.shares(1)[0] == pytest.approx(0.9, abs=0.03)  # drawn as predicted
    assert stats.values[0][1] == pytest.approx(0.9 * 1.0 + 0.05 * 0.5, abs=0.03)
    # Without a prior there is nothing to draw from: the opponent maximises as before.
    bare = SMMCTS(MatrixGame(RPS), Half(), config)
    stats = bare.search(["start"], np.random.default_rng(1), iterations=6000)
    assert max(abs(v - 1 / 3) for v in stats.shares(1).values()) < 0.08


# ------------------------------------------------------------ the mcts agent
from pokegym.agents import make_agent  # noqa: E402
from pokegym.arena import ArenaConfig, run_arena  # noqa: E402
from pokegym.errors import AgentOptionError  # noqa: E402


class Recording:
    """Wraps an agent and records every order it sends (as text)."""

    def __init__(self, agent):
        self.agent, self.orders = agent, []

    def choose(self, battle):
        order = self.agent.choose(battle)
        self.orders.append(order.message)
        return order

    def seed(self, seed):
        self.agent.seed(seed)


def play(spec, opponent="random", battles=2, seed=3, battle_format="gen9randombattle"):
    from pokegym.agents import register_agent

    made = []

    def factory(**options):
        agent = Recording(make_agent(spec))
        made.append(agent)
        return agent

    register_agent("recorded", factory)
    result = run_arena(ArenaConfig(agents=["recorded", opponent], battles_per_pair=battles,
                                   seed=seed, concurrency=1, clock_bank=None,
                                   battle_format=battle_format))  # fmt: skip
    return result, made


@pytest.mark.slow
def test_mcts_agent_beats_random_with_legal_orders_and_reports_its_search():
    result, made = play("mcts:iterations=60,determinizations=2", battles=2)
    record = result.record("recorded")
    assert record["battles"] == 2 and record["wins"] == 2, result.table()
    agent = max((m.agent for m in made), key=lambda a: len(a.iteration_counts))
    assert agent.iteration_counts and min(agent.iteration_counts) >= 60
    stats = agent.last_stats
    assert stats is not None and stats.trees == 2
    assert sum(stats.visits[0]) == pytest.approx(2.0)  # one visit share per determinization


@pytest.mark.slow
def test_mcts_agent_is_reproducible_with_a_seed_and_an_iteration_budget():
    first = [a.orders for a in play("mcts:iterations=40,prior=heuristic", battles=1, seed=9)[1]]
    second = [a.orders for a in play("mcts:iterations=40,prior=heuristic", battles=1, seed=9)[1]]
    assert first == second and any(first)


@pytest.mark.slow
def test_mcts_agent_with_sampled_chance_and_the_network_plays_a_battle():
    result, _ = play("mcts:iterations=40,chance=sampled,evaluator=network,determinizations=1",
                     battles=1)  # fmt: skip
    assert result.record("recorded")["battles"] == 1


def test_auto_leaves_are_the_network_where_it_was_trained():
    from pokegym.world.priors import battle_format
    from policies.mcts_agent import leaf_evaluator

    assert leaf_evaluator("auto", "gen9randombattle", None) == "network"
    assert leaf_evaluator("auto", "gen9ou", None) == "heuristic"
    assert leaf_evaluator("auto", "gen9ou", "runs/my-ou-network") == "network"
    assert leaf_evaluator("heuristic", "gen9randombattle", None) == "heuristic"

    class Tagged:
        format, battle_tag = None, "battle-gen9ou-1234"

    assert battle_format(Tagged()) == "gen9ou"


@pytest.mark.slow
@pytest.mark.parametrize(
    "battle_format,leaves", [("gen9randombattle", "network"), ("gen9ou", "heuristic")]
)
def test_distilled_picks_its_leaves_by_the_format_it_plays(battle_format, leaves):
    from policies.core.evaluators import ValueNetEvaluator

    result, made = play("distilled:iterations=20,determinizations=1", battles=1,
                        battle_format=battle_format)  # fmt: skip
    assert result.record("recorded")["battles"] == 1
    agent = max((m.agent for m in made), key=lambda a: len(a.iteration_counts))
    assert agent.iteration_counts  # it searched
    assert {key[1] for key in agent._models} == {leaves}
    evaluators = [roles[2] for roles in agent._models.values()]
    assert all(isinstance(e, ValueNetEvaluator) == (leaves == "network") for e in evaluators)


@pytest.mark.slow
def test_an_anchor_with_a_wide_margin_plays_the_rule_based_choice():
    from policies.abyssal import AbyssalPolicy
    from policies.core.battle import world_action

    class Compare:
        def __init__(self):
            self.agent = make_agent("mcts:iterations=30,anchor=abyssal,anchor_margin=0.99")
            self.rules, self.same, self.searched = AbyssalPolicy(0), 0, 0

        def choose(self, battle):
            order = self.agent.choose(battle)
            if self.agent.last_stats is not None and len(battle.available_moves) > 1:
                self.searched += 1
                self.agent.last_stats = None
                self.same += world_action(order, battle) == world_action(
                    self.rules.choose(battle), battle
                )
            return order

        def seed(self, seed):
            self.agent.seed(seed)
            self.rules.seed(seed)

    from pokegym.agents import register_agent

    made = []
    register_agent("compared", lambda **_: made.append(Compare()) or made[-1])
    run_arena(ArenaConfig(agents=["compared", "random"], battles_per_pair=1, seed=4,
                          concurrency=1, clock_bank=None))  # fmt: skip
    compared = max(made, key=lambda m: m.searched)
    assert compared.searched > 5
    assert compared.same == compared.searched


@pytest.mark.parametrize(
    "spec,message",
    [("mcts:budget=0", "budget"), ("mcts:determinizations=0", "determinizations"),
     ("mcts:evaluator=oracle", "evaluator"), ("mcts:chance=maybe", "chance"),
     ("mcts:selection=ucb", "selection"), ("mcts:anchor=nobody", "anchor"),
     ("mcts:anchor_margin=2", "anchor_margin"), ("mcts:prior=oracle", "prior"),
     ("mcts:opponent_floor=1", "opponent_floor"), ("mcts:rollout_turns=-1", "rollout_turns"),
     ("mcts:prior=llm,llm_seconds=0", "llm_seconds"),
     ("mcts:colour=red", "colour"), ("mcts:prior=network", "policy head"),
     ("mcts:evaluator=network,checkpoint=/no/such/dir", "checkpoint"),
     ("mcts:model_reply_turns=1", "needs a prior for the opponent"),
     ("mcts:opponent_model=/no/such/model.json", "no opponent model")],
)  # fmt: skip
def test_bad_mcts_options_are_one_clear_error(spec, message):
    with pytest.raises((AgentOptionError, Exception), match=message) as caught:
        make_agent(spec)
    assert "Traceback" not in str(caught.value)


def test_none_in_a_spec_is_the_option_none():
    from pokegym.agents import make_agent

    agent = make_agent("distilled:anchor=none,prior=none,iterations=10")
    assert (agent.options.anchor, agent.options.prior) == ("none", "none")
    assert agent._anchor is None


def test_distilled_answers_the_predicted_reply_and_the_previous_search_stays_reachable():
    agent = make_agent("distilled")
    assert agent.config.model_reply_turns == 1 and agent.options.prior == "heuristic"
    assert make_agent("distilled:model_reply_turns=0").config.model_reply_turns == 0
    # Without a prior there is no prediction to answer: the default steps aside ...
    assert make_agent("distilled:prior=none").config.model_reply_turns == 0
    assert make_agent("distilled:prior=none,opponent_model=default").config.model_reply_turns
    # ... and asking for it there is one clear error.
    with pytest.raises(AgentOptionError, match="needs a prior for the opponent"):
        make_agent("distilled:prior=none,model_reply_turns=1")


@pytest.mark.slow
def test_the_budget_benchmark_reports_the_agent_s_own_decisions(benchmark_script, capsys):
    bench = benchmark_script("search_budget")
    assert bench.main(["--agent", "distilled:iterations=40", "--opponent", "random",
                       "--battles", "1", "--seed", "3"]) == 0  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("distilled:iterations=40 vs random, gen9randombattle, 1 battles")
    decisions = int(lines[1].split(";")[0].split(": ")[1])
    assert decisions > 3
    # A fixed count of iterations per decision, except where the tree is one forced line.
    assert "median 40," in lines[2]
    assert lines[3].startswith("CPU seconds per decision: median ")
    assert float(lines[3].rsplit(": ", 1)[1]) > 0  # iterations per CPU second
    with pytest.raises(SystemExit):
        bench.main(["--agent", "random"])


@pytest.mark.slow
def test_the_speed_benchmark_runs_every_setup_on_the_same_states(benchmark_script, capsys):
    bench = benchmark_script("search_speed")
    assert bench.main(["--battles", "1", "--stride", "8", "--iterations", "40", "--trees", "2",
                       "--rounds", "1"]) == 0  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    summary = dict(field.split("=") for field in out[-1].split())
    assert set(summary) == {"shipped", "collector_on", "batch_path", "hand-written"}
    assert all(float(rate) > 0 for rate in summary.values())
    assert any(line.startswith("live objects tracked by the collector") for line in out)
    assert mcts_module.collector_paused is not contextlib.nullcontext  # patched back
    assert gc.isenabled()


def test_search_report_holds_visit_shares_and_the_visit_weighted_value():
    from policies.mcts_agent import search_report
    from policies.search.mcts import RootStats

    stats = RootStats(actions=(["a", "b", "c"], ["x"]), visits=([3.0, 1.0, 0.0], [4.0]),
                      values=([0.8, 0.4, float("nan")], [0.7]))  # fmt: skip
    report = search_report(stats, {"a": "order-a", "b": "order-b", "c": "order-c"})
    assert report["search_policy"] == [("order-a", 0.75), ("order-b", 0.25), ("order-c", 0.0)]
    assert report["search_value"] == pytest.approx(0.75 * 0.8 + 0.25 * 0.4)


def test_a_root_prior_replaces_the_base_prior_at_the_root_only():
    from policies.core.priors import AnchoredPrior

    class Base:
        def prior(self, state, side, actions):
            return [1.0 / len(actions)] * len(actions)

    root, elsewhere = object(), object()
    prior = AnchoredPrior(Base(), [root], favoured="b", share=0.5, root={"a": 0.6, "b": 0.2})
    assert prior.prior(root, 0, ["a", "b", "c"]) == pytest.approx([0.375, 0.625, 0.0])
    assert prior.prior(root, 1, ["a", "b"]) == pytest.approx([0.5, 0.5])  # their side: base
    assert prior.prior(elsewhere, 0, ["a", "b"]) == pytest.approx([0.5, 0.5])


@pytest.mark.slow
def test_the_opponent_floor_spreads_the_search_over_the_opponent_s_actions():
    import time

    from bench.worldmodel import play_and_score
    from pokegym.world.data import load_dex
    from pokegym.world.transition import TransitionModel
    from policies.core.battle import legal_actions
    from policies.core.encoding import StateEncoder
    from policies.core.evaluation import terminal_value
    from policies.core.evaluators import ValueNetEvaluator
    from policies.mcts_agent import MCTSPolicy, WorldGame

    _, samples = play_and_score(1, ["gen9randombattle"], seed=5, progress=False)
    model = TransitionModel(load_dex(9))
    states = [s for s, _, _ in samples if terminal_value(s) is None
              and len(legal_actions(model, s, 1)) > 2][:10]  # fmt: skip
    assert len(states) >= 5
    neglected, switching = {}, {}
    for floor in (0.0, 0.5):
        agent = MCTSPolicy(seed=1, iterations=500, opponent_floor=floor, prior="heuristic",
                           evaluator="network")  # fmt: skip
        leaves = ValueNetEvaluator(StateEncoder(model), agent.network)
        rare, switches = [], []
        for state in states:
            stats = agent.search([state], legal_actions(model, state, 0), leaves,
                                 WorldGame(model), None, time.perf_counter())  # fmt: skip
            shares = stats.shares(1)
            rare.append(sum(v < 0.01 for v in shares.values()) / len(shares))
            switches.append(sum(v for a, v in shares.items() if a[0] == "switch"))
        neglected[floor], switching[floor] = float(np.mean(rare)), float(np.mean(switches))
    # With the floor, fewer of the opponent's actions go (nearly) unsearched, and its
    # switches get more of the visits (measured: 34 % -> 16 %, 9 % -> 21 %).
    assert neglected[0.5] < neglected[0.0] - 0.05, neglected
    assert switching[0.5] > switching[0.0] + 0.03, switching


def test_the_opponent_floor_flattens_only_the_opponent_s_prior():
    from policies.core.priors import AnchoredPrior

    class Peaked:  # all the mass on the first action, as the damage prior nearly does
        def prior(self, state, side, actions):
            return [1.0] + [0.0] * (len(actions) - 1)

    state = object()
    prior = AnchoredPrior(Peaked(), [], favoured=None, share=0.5, opponent_floor=0.4)
    assert prior.prior(state, 1, ["hit", "switch", "status", "setup"]) == pytest.approx(
        [0.7, 0.1, 0.1, 0.1]
    )
    assert prior.prior(state, 0, ["hit", "switch"]) == pytest.approx([1.0, 0.0])  # ours: as is
    assert prior.prior(state, 1, ["pass"]) == pytest.approx([1.0])


@pytest.mark.slow
def test_a_language_model_prior_steers_the_root_and_is_metered():
    """prior=llm on a real battle with a scripted model that likes switching: the root
    prior is the model's softmax over our legal orders, and its calls are counted."""
    from pokegym.llm import make_model
    from policies.core.battle import root_actions

    def likes_switching(prompt, options):
        return [0.0 if o.startswith("switch") else -5.0 for o in options]

    scripted = make_model("scripted", scores=likes_switching)
    checked = []

    class Checking:
        def __init__(self):
            self.agent = make_agent("mcts:iterations=20,determinizations=1,prior=llm",
                                    model=scripted)  # fmt: skip

        def choose(self, battle):
            order = self.agent.choose(battle)
            orders = root_actions(battle, True)
            if len(orders) > 1 and battle.available_switches and battle.available_moves:
                prior = self.agent.root_policy(battle, orders)
                assert sum(prior.values()) == pytest.approx(1.0)
                switch_mass = sum(p for a, p in prior.items() if a[0] == "switch")
                checked.append(switch_mass)
            return order

        def seed(self, seed):
            self.agent.seed(seed)

        def pop_usage(self):
            return self.agent.pop_usage()

    from pokegym.agents import register_agent

    made = []
    register_agent("llm_prior", lambda **_: made.append(Checking()) or made[-1])
    result = run_arena(ArenaConfig(agents=["llm_prior", "random"], battles_per_pair=1, seed=6,
                                   concurrency=1, clock_bank=None))  # fmt: skip
    assert result.record("llm_prior")["battles"] == 1
    assert checked and min(checked) > 0.9  # e^-5 per move against 1 per switch
    assert result.agent_stats["llm_prior"].usage.get("calls", 0) >= len(checked)


def _world_mon(dex, species, moves):
    from pokegym.world.sets import compute_stats
    from pokegym.world.state import MonState

    entry = dex.species_entry(species)
    raw = compute_stats(dex, species, 100, (84,) * 6, (31,) * 6, "")
    stats = (raw["hp"], raw["atk"], raw["def"], raw["spa"], raw["spd"], raw["spe"])
    return MonState(species, 100, tuple(entry["types"]), stats, float(stats[0]), tuple(moves))


def test_the_switch_prior_favours_leaving_a_threat_for_a_pokemon_that_takes_it():
    """Heatran faces Garchomp's Earthquake (4x): with switch_gain, switching to
    Corviknight (immune to Ground) gets more prior than to Tyranitar (weak to Ground), and
    both more than a plain switch; Garchomp itself, not threatened by Heatran, gets no
    bonus for switching."""
    from pokegym.world.data import load_dex
    from pokegym.world.state import BattleState, SideState
    from pokegym.world.transition import TransitionModel
    from policies.core.action_prior import HeuristicPrior

    dex = load_dex(9)
    model = TransitionModel(dex)
    ours = [_world_mon(dex, "heatran", ("magmastorm", "earthpower")),
            _world_mon(dex, "corviknight", ("bravebird",)),
            _world_mon(dex, "tyranitar", ("crunch",))]  # fmt: skip
    theirs = [_world_mon(dex, "garchomp", ("earthquake", "dragonclaw")),
              _world_mon(dex, "blissey", ("seismictoss",))]  # fmt: skip
    state = BattleState(sides=[SideState(mons=ours), SideState(mons=theirs)])
    actions = [("move", "magmastorm", False), ("switch", 1, False), ("switch", 2, False)]
    plain = HeuristicPrior(model).scores(state, 0, actions)
    gain = HeuristicPrior(model, switch_gain=0.6)
    scored = gain.scores(state, 0, actions)
    assert plain[1] == plain[2] == pytest.approx(0.2)
    assert gain.danger(state, 0) == pytest.approx(1.0)  # Earthquake takes it all
    # Corviknight is immune to Earthquake; Dragon Claw is what is left (80 x 1.5 STAB x
    # 0.5 against Steel) of Earthquake's 100 x 1.5 x 4 against Heatran.
    assert scored[1] == pytest.approx(0.2 + 0.6 * (1 - 60 / 600))
    assert 0.2 < scored[2] < scored[1]
    assert scored[0] == plain[0]  # moves are scored as before
    probs = gain.prior(state, 0, actions)
    assert probs[1] > probs[2] and probs[1] > HeuristicPrior(model).prior(state, 0, actions)[1]
    their_actions = [("move", "earthquake", False), ("switch", 1, False)]
    assert gain.scores(state, 1, their_actions)[1] < 0.2 + 0.6 * 0.5


@pytest.mark.slow
def test_a_root_the_model_thinks_is_over_is_played_without_a_search(caplog):
    """When what the model knows says the battle is over while it goes on (a side it
    thinks has nothing left), the agent answers a legal order without searching: every
    other decision here gets a state whose opponent has no Pokémon left."""
    from pokegym.agents import register_agent

    made = []

    def factory(**options):
        agent = make_agent("mcts:iterations=30,anchor=abyssal")
        real = agent.root_states

        def root_states(battle, dex):
            states = real(battle, dex)
            if len(agent.iteration_counts) % 2:
                for state in states:
                    for mon in state.sides[1].mons:
                        mon.hp = 0.0
                    state.notes = {**(state.notes or {}), "unseen": 0}
            return states

        agent.root_states = root_states
        made.append(agent)
        return agent

    register_agent("overruled", factory)
    with caplog.at_level("WARNING", logger="policies.mcts_agent"):
        result = run_arena(ArenaConfig(agents=["overruled", "random"], battles_per_pair=1,
                                       seed=5, concurrency=1, clock_bank=None))  # fmt: skip
    assert result.record("overruled")["battles"] == 1
    counts = max((m.iteration_counts for m in made), key=len)
    assert 0 in counts and any(c >= 30 for c in counts)
    assert "already over" in caplog.text


class _Recording:
    """An inner evaluator that keeps the states it was asked about."""

    def __init__(self):
        self.seen = []

    def evaluate(self, states):
        self.seen.extend(states)
        return [0.5] * len(states)


def test_a_playout_plays_the_greedy_attacks_before_the_leaf_is_valued():
    """Garchomp (faster) against Heatran: the greedy playout uses Earthquake (4x) and KOs
    Heatran on the first turn; the inner evaluator sees the state after the playout, the
    leaf itself is unchanged, and a battle that is over stops the playout early."""
    from pokegym.world.data import load_dex
    from pokegym.world.state import BattleState, SideState
    from pokegym.world.transition import TransitionModel
    from policies.rollout import RolloutEvaluator

    dex = load_dex(9)
    model = TransitionModel(dex)
    ours = [_world_mon(dex, "garchomp", ("earthquake", "dragonclaw", "swordsdance"))]
    theirs = [_world_mon(dex, "heatran", ("magmastorm", "earthpower")),
              _world_mon(dex, "blissey", ("seismictoss",))]  # fmt: skip
    leaf = BattleState(sides=[SideState(mons=ours), SideState(mons=theirs)])
    inner = _Recording()
    rollout = RolloutEvaluator(model, inner, turns=1)
    assert rollout.greedy(leaf, 0) == ("move", "earthquake", False)
    assert rollout.evaluate([leaf]) == [0.5]
    after = inner.seen[-1]
    assert after is not leaf and leaf.sides[1].mons[0].hp == leaf.sides[1].mons[0].stats[0]
    assert after.sides[1].mons[0].hp <= 0  # Heatran fell to the 4x Earthquake
    # One Pokémon each, one of them already down: the playout ends at once.
    done = BattleState(sides=[SideState(mons=ours), SideState(mons=theirs[:1])])
    done.sides[1].mons[0].hp = 0.0
    assert RolloutEvaluator(model, inner, turns=3).playout(done) is done
    with pytest.raises(ValueError, match="turns"):
        RolloutEvaluator(model, inner, turns=0)
