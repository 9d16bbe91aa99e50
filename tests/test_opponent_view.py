"""The opponent's chair: the swapped view of a real battle, and the rule-based reply model
checked against what the rules actually played on the other side of the same battles."""

from __future__ import annotations

import re

import pytest

from pokegym.actions import ActionCodec
from pokegym.agents import register_agent
from pokegym.arena import ArenaConfig, run_arena
from pokegym.backends.sim import SimBattleSession
from pokegym.formats import resolve_format
from pokegym.showdown.simulator import shared_simulator
from pokegym.world.data import load_dex, to_id
from pokegym.world.priors import belief_for
from policies.abyssal import AbyssalPolicy
from policies.core.battle import decision_state, legal_actions
from policies.distilled import DistilledPolicy
from policies.opponent_view import OpponentView, RuleReplyModel, reply_action, seen_opponents

# Every test here plays real battles or starts Node (`pytest -m "not slow"` skips them).
pytestmark = pytest.mark.slow


def abyssal_mirror(seed: int, check):
    """Plays one gen9randombattle abyssal vs abyssal; ``check(p1 battle, p2 battle, p2 order)``
    runs at every turn both sides choose, before the choices are sent."""
    sim = shared_simulator()
    sim.ensure_running()
    fmt = resolve_format("gen9randombattle", simulator=sim)
    codec = ActionCodec(fmt.gimmick)
    session = SimBattleSession(sim, fmt, seeds=(seed, seed + 1, seed + 2), names=("p1", "p2"))
    players = (AbyssalPolicy(seed), AbyssalPolicy(seed + 1))
    try:
        for _ in range(400):
            if session.finished:
                return
            orders = {side: players[side].choose(session.battles[side]) for side in (0, 1)
                      if session.needs_choice(side)}  # fmt: skip
            if len(orders) == 2 and session.battles[0].opponent_active_pokemon is not None:
                check(session.battles[0], session.battles[1], orders[1])
            session.choose({side: codec.order_to_choice(order, session.battles[side])
                            for side, order in orders.items()})  # fmt: skip
    finally:
        session.close()
    raise AssertionError("the battle did not end in 400 decisions")


def test_the_view_swaps_the_sides_of_a_real_battle():
    dex = load_dex(9)
    looked = []

    def check(ours, theirs, order):
        sets = belief_for(ours).modal_determinization()
        view = OpponentView(ours, sets)
        assert view.active_pokemon is ours.opponent_active_pokemon
        assert view.opponent_active_pokemon is ours.active_pokemon
        assert view.side_conditions == ours.opponent_side_conditions
        assert view.opponent_side_conditions == ours.side_conditions
        assert view.opponent_team is ours.team
        assert view.battle_tag != ours.battle_tag  # its own switch memory
        moves = [to_id(m.id) for m in view.available_moves]
        assert 1 <= len(moves) <= 4 and len(set(moves)) == len(moves)
        shown = {to_id(m) for m in ours.opponent_active_pokemon.moves}
        assert shown <= set(moves) or len(shown) > 4
        # The set fills the rest: the world model's state gives the same four moves.
        state = decision_state(ours, dex)
        assert set(moves) <= set(state.sides[1].active_mon.moves) | shown
        seen = seen_opponents(ours)
        assert all(mon in seen and not mon.fainted and not mon.active
                   for mon in view.available_switches)  # fmt: skip
        looked.append(len(moves))

    abyssal_mirror(21, check)
    assert len(looked) > 5


def test_the_reply_model_predicts_what_the_rules_play():
    """On the other side of the same battles, abyssal's actual choice is the prediction
    most of the time (the view does not know its exact sets, Tera type and speed), and a
    prediction is a legal world-model action for side 1."""
    dex = load_dex(9)
    model = RuleReplyModel(AbyssalPolicy(0))
    from pokegym.world.transition import TransitionModel

    world = TransitionModel(dex)
    tally = {"decisions": 0, "same": 0, "predicted": 0, "legal": 0}

    def check(ours, theirs, order):
        actual = reply_action(order, ours)
        if actual is None:
            return  # a switch to a Pokémon we have not seen: nothing to compare
        predicted = model.predict(ours, belief_for(ours).modal_determinization())
        tally["decisions"] += 1
        if predicted is None:
            return
        tally["predicted"] += 1
        tally["same"] += predicted[:2] == actual[:2]  # the same move (Tera or not) or switch
        tally["legal"] += predicted in legal_actions(world, decision_state(ours, dex), 1)

    for seed in (31, 32, 33, 34):
        abyssal_mirror(seed, check)
    assert tally["decisions"] > 30, tally
    assert tally["predicted"] >= 0.9 * tally["decisions"]
    assert tally["legal"] >= 0.9 * tally["predicted"], tally
    assert tally["same"] >= 0.6 * tally["decisions"], tally


def test_the_distilled_agent_answers_the_predicted_reply():
    seen: list[tuple[object, list]] = []

    class Probe(DistilledPolicy):
        def predict_reply(self, battle, state):
            reply = super().predict_reply(battle, state)
            self._probe = reply
            return reply

        def choose(self, battle):
            self._probe = None
            order = super().choose(battle)
            if self.last_search is not None and self._probe is not None:
                seen.append((self._probe, list(self.last_search.last_tree.replies)))
            return order

    register_agent("distilled_predict_probe", Probe)
    config = ArenaConfig(agents=["distilled_predict_probe:predict=abyssal,time_limit=3.0",
                                 "abyssal"], battles_per_pair=1, concurrency=1, simulators=1,
                         seed=8)  # fmt: skip
    assert run_arena(config).record("distilled_predict_probe")["battles"] == 1
    assert len(seen) > 5
    # predict_weight 1 (the default with predict): the root answers the prediction alone.
    assert sum(replies == [predicted] for predicted, replies in seen) >= 0.9 * len(seen)
    with pytest.raises(ValueError, match="predict must be one of"):
        DistilledPolicy(predict="oracle")
    with pytest.raises(ValueError, match="predict_weight"):
        DistilledPolicy(predict="abyssal", predict_weight=2.0)


def test_the_oracle_diagnostic_runs_and_pairs(tmp_path):
    """bench/opponent_oracle.py: real battles with the opponent's reply told, results
    per battle, the agreement of predict=abyssal, and the paired comparison."""
    import json
    import subprocess
    import sys

    first, second = tmp_path / "reply.json", tmp_path / "sets.json"
    run = [sys.executable, "-m", "bench.opponent_oracle", "--battles", "2", "--seed", "3",
           "--concurrency", "1"]  # fmt: skip
    done = subprocess.run([*run, "--oracle", "reply", "--out", str(first)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "over 2 battles" in done.stdout and "predict=abyssal named" in done.stdout
    results = json.loads(first.read_text())
    assert set(results) == {"0", "1"} and all(isinstance(v, bool) for v in results.values())
    done = subprocess.run([*run, "--oracle", "sets", "--agent", "anchor_margin=0", "--out",
                           str(second), "--paired", str(first)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "paired with" in done.stdout and "on 2 battles" in done.stdout
    for oracle in ("state", "move", "both"):  # the MCTS: the true position / abyssal's move
        done = subprocess.run([*run, "--oracle", oracle, "--agent", "iterations=30",
                               "--no-clock", "--paired", str(first)],
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert f"oracle {oracle} iterations=30" in done.stdout and "on 2 battles" in done.stdout
        told = re.search(r"the move told was legal in (\d+) of the (\d+) root", done.stdout)
        if oracle == "state":
            assert told is None
        else:  # in the true position every move and switch told is legal at the root
            assert told is not None and 0 < int(told[1]) <= int(told[2])
            assert oracle == "move" or told[1] == told[2], done.stdout
    # against poke-env's SimpleHeuristicsPlayer: its own move told, from its chair; the
    # battles kept as a compare journal, which paired.py reads, and resumed only as themselves
    journal = tmp_path / "both_sh"
    told_sh = [*run, "--oracle", "both", "--opponent", "simple_heuristics", "--agent",
               "iterations=30", "--no-clock", "--journal", str(journal)]  # fmt: skip
    done = subprocess.run(told_sh, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    told = re.search(r"the move told was legal in (\d+) of the (\d+) root", done.stdout)
    assert told is not None and 0 < int(told[1]) == int(told[2]), done.stdout
    lines = [json.loads(x) for x in (journal / "battles.jsonl").read_text().splitlines()]
    battles = [x for x in lines if "pair" in x]
    assert sorted(b["index"] for b in battles) == [0, 1]
    assert all(b["pair"] == ["distilled", "simple_heuristics"] for b in battles)
    table = subprocess.run([sys.executable, "-m", "bench.paired", "--agent", "distilled", "--names",
                            "first,second", str(journal), str(journal)],
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    assert table.returncode == 0 and "0 / 0 (n = 2)" in table.stdout, table.stderr
    again = subprocess.run(told_sh, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "over 2 battles" in again.stdout  # resumed: nothing new
    other = [*told_sh[: told_sh.index("both")], "move", *told_sh[told_sh.index("both") + 1 :]]
    refused = subprocess.run(other, capture_output=True, text=True, timeout=600)
    assert refused.returncode != 0 and "give another --journal folder" in refused.stderr


def test_the_true_position_holds_the_opponents_whole_team(benchmark_script):
    """--oracle state: the MCTS searches the position both players know together: our side
    as we see it, the opponent's six Pokémon with the sets of its own request."""
    oracle = benchmark_script("opponent_oracle")
    dex = load_dex(9)
    looked = []

    def check(ours, theirs, order):
        state = oracle.true_state(ours, theirs, dex)
        mons = state.sides[1].mons
        assert state.notes == {"unseen": 0}
        assert [m.species for m in mons] == [to_id(m.species) for m in theirs.team.values()]
        for mon, real in zip(mons, theirs.team.values(), strict=True):
            assert set(mon.moves) == {to_id(m) for m in real.moves}
            assert mon.item == to_id(real.item or "")
        active = mons[state.sides[1].active]
        assert active.species == to_id(ours.opponent_active_pokemon.species)
        assert state.sides[0].mons[state.sides[0].active].species == to_id(
            ours.active_pokemon.species
        )
        looked.append(len(ours.opponent_team))

    abyssal_mirror(41, check)
    assert looked and min(looked) < 6  # the search knew Pokémon we had not seen yet
