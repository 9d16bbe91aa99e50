"""``engine:reply=prior``: the opponent's predicted replies, the engine state that allows
the opponent one of them, and the answer among our near-best options."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pokegym.world.data import load_dex, to_id
from pokegym.world.priors import belief_for
from policies.core import engine_state as es
from policies.core.battle import legal_actions
from policies.core.engine_reply import answer, predicted_replies, reply_name
from policies.engine import EngineOptions, EnginePolicy


@pytest.mark.parametrize("options,word", [
    ({"reply": "maybe"}, "reply"), ({"reply": "prior", "reply_share": 0}, "reply_share"),
    ({"reply": "prior", "reply_time": 1.0}, "reply_time"),
    ({"reply": "prior", "reply_mass": 1.5}, "reply_mass"),
    ({"reply": "prior", "rerank": "heuristic"}, "one of them"),
])  # fmt: skip
def test_bad_reply_options_are_refused_with_the_option_named(options, word):
    with pytest.raises(ValueError, match=word):
        EngineOptions(**options)


def test_replies_are_searched_only_where_the_opponent_acts():
    agent = EnginePolicy.__new__(EnginePolicy)
    agent.options = EngineOptions(reply="prior")
    turn, after_a_faint = SimpleNamespace(force_switch=False), SimpleNamespace(force_switch=True)
    assert agent.answers_replies(turn) and not agent.answers_replies(after_a_faint)
    agent.options = EngineOptions()
    assert not agent.answers_replies(turn)


def test_the_answer_is_the_near_best_option_that_scores_best_against_the_replies():
    shares = {"a": 0.40, "b": 0.30, "c": 0.10}  # c is under half the best: never played
    against = [
        (0.7, {"a": (30.0, 100), "b": (60.0, 100), "c": (99.0, 100)}),  # a 0.3, b 0.6
        (0.3, {"a": (90.0, 100), "b": (40.0, 100)}),  # a 0.9, b 0.4
    ]
    # a: 0.7 * 0.3 + 0.3 * 0.9 = 0.48; b: 0.7 * 0.6 + 0.3 * 0.4 = 0.54
    assert answer(shares, against, 0.5, chosen="a") == "b"
    # Against the second reply alone, a is the answer.
    assert answer(shares, against[1:], 0.5, chosen="b") == "a"
    # A tie keeps the search's choice; one valued candidate is no choice at all.
    tie = [(1.0, {"a": (50.0, 100), "b": (5.0, 10)})]
    assert answer(shares, tie, 0.5, chosen="b") == "b"
    assert answer(shares, [(1.0, {"a": (1.0, 100)})], 0.5, chosen="b") == "b"


class FixedPrior:
    """A prior that gives each legal action the weight of its kind, in order."""

    def __init__(self, weights):
        self.weights = weights

    def prior(self, state, side, actions):
        raw = [self.weights(a) for a in actions]
        return [w / sum(raw) for w in raw]


def _recorded_state():
    """A world-model state of the recorded random battle, the opponent given a second
    Pokémon on its bench (it never had one alive there) so that it can switch."""
    import copy

    from test_engine_agent import _recorded_state as recorded

    model, state = recorded()
    state = copy.deepcopy(state)
    bench = state.sides[1].active_mon.copy()
    bench.species = "pikachu"
    state.sides[1].mons.append(bench)
    return model, state


def test_predicted_replies_merge_tera_and_switches_and_stop_at_the_mass():
    model, state = _recorded_state()
    actions = legal_actions(model, state, 1)
    moves = sorted({a[1] for a in actions if a[0] == "move"})
    assert len(moves) >= 2 and any(a[0] == "switch" for a in actions)
    first, second = moves[0], moves[1]

    def weights(action):
        kind, what, _tera = action
        if kind == "move" and what == first:
            return 5.0  # its Tera form, if legal, adds to it
        if kind == "move" and what == second:
            return 3.0
        return 0.1 if kind == "switch" else 0.01

    replies = predicted_replies(model, FixedPrior(weights), state, mass=0.6, most=3)
    names = [name for name, _ in replies]
    assert names[0] == to_id(first) and sum(p for _, p in replies) == pytest.approx(1.0)
    # The first reply alone covers 0.6 when its Tera form counts with it.
    tera_legal = any(a == ("move", first, True) for a in actions)
    assert names == ([to_id(first)] if tera_legal else [to_id(first), to_id(second)])
    # All the switches are one reply, named by its likeliest species.
    switchy = predicted_replies(model, FixedPrior(lambda a: 5.0 if a[0] == "switch" else 1.0),
                                state, mass=0.5)  # fmt: skip
    assert switchy[0][0].startswith("switch ")
    assert sum(name.startswith("switch ") for name, _ in switchy) == 1
    assert reply_name(("switch", 0, False), state) == "switch " + to_id(
        state.sides[1].mons[0].species
    )


def test_the_prior_can_name_switches_to_the_pokemon_team_preview_showed():
    """In a team format the opponent can switch to a Pokémon not out yet: on the state
    that holds Team Preview's Pokémon (``previewed``, what bench opponent_prediction's
    ``prior`` column asks) the prior names such a switch; on the state of those seen
    (what ``reply=prior`` asks) it cannot."""
    import logging

    from poke_env.battle import Battle

    from pokegym.world.transition import TransitionModel
    from policies.core.battle import decision_state

    battle = Battle("battle-gen9ou-1", "me", logging.getLogger("test"), gen=9)
    battle.player_role = "p1"
    protocol = """|player|p1|me|
|player|p2|them|
|teamsize|p1|1|
|teamsize|p2|3|
|poke|p1|Dragonite, M|
|poke|p2|Great Tusk|
|poke|p2|Gholdengo|
|poke|p2|Kingambit, M|
|teampreview
|start
|switch|p1a: Dragonite|Dragonite, M|100/100
|switch|p2a: Great Tusk|Great Tusk|100/100
|turn|1"""
    for line in protocol.splitlines():
        battle.parse_message(line.split("|"))
    model = TransitionModel(load_dex(9))
    seen = decision_state(battle, model.dex)
    assert not any(a[0] == "switch" for a in legal_actions(model, seen, 1))
    state = decision_state(battle, model.dex, previewed=True)
    assert [m.species for m in state.sides[1].mons] == ["greattusk", "gholdengo", "kingambit"]
    assert state.notes["unseen"] == 0
    switches = [a for a in legal_actions(model, state, 1) if a[0] == "switch"]
    assert len(switches) == 2
    prior = FixedPrior(lambda a: 5.0 if a == switches[1] else 1.0)
    replies = predicted_replies(model, prior, state, mass=0.2)
    assert replies[0][0] == "switch kingambit"


def test_the_engine_state_allows_the_opponent_the_reply_alone():
    from test_engine_agent import _recorded_views

    for battle, _ in _recorded_views():
        if battle.turn >= 3 and battle.available_moves and battle.opponent_active_pokemon:
            break
    dex = load_dex(battle.gen)
    belief = belief_for(battle)
    guess = belief.modal_determinization()
    free = es.engine_state(battle, dex, guess)
    active = free.side_two.pokemon[0]
    moves = [m.id for m in active.moves if m.id != "none"]
    assert len(moves) >= 2 and not free.side_two.force_trapped
    one = es.engine_state(battle, dex, guess, reply=moves[1] + "-tera")
    assert [m.disabled for m in one.side_two.pokemon[0].moves][: len(moves)] == [
        m != moves[1] for m in moves
    ]
    assert one.side_two.force_trapped and not one.side_one.force_trapped
    switch = es.engine_state(battle, dex, guess, reply="switch anything")
    assert all(m.disabled for m in switch.side_two.pokemon[0].moves[: len(moves)])
    assert not switch.side_two.force_trapped
    lacking = es.engine_state(battle, dex, guess, reply="splash")
    assert not any(m.disabled for m in lacking.side_two.pokemon[0].moves)
    # Only the opponent's active Pokémon is held: our side and its bench are as before.
    free_sides = free.to_string().split("/")
    for state in (one, switch):
        sides = state.to_string().split("/")
        assert sides[0] == free_sides[0]
        assert sides[1].split("=")[1:6] == free_sides[1].split("=")[1:6]
    # The engine searches the held state, and the opponent's root offers the move alone.
    result = es.import_engine().monte_carlo_tree_search(one, iterations=200)
    theirs = {str(o.move_choice).lower() for o in result.side_two}
    assert theirs <= {moves[1], moves[1] + "-tera"}


@pytest.mark.slow
def test_the_reply_searching_engine_plays_legal_orders_and_answers_replies():
    from test_engine_agent import _play, _register_made  # the engine tests' arena helpers

    made = _register_made(
        "engine_reply", "engine:iterations=300,samples=2,reply=prior,reply_share=0.3"
    )
    result = _play("engine_reply", "simple_heuristics", 2, 13, "gen9ou")
    assert result.record("engine_reply")["battles"] == 2
    assert all(agent.failures == 0 for agent in made)
    searched = sum(agent.replies_searched for agent in made)
    assert searched >= 3
    assert sum(agent.reply_changed for agent in made) <= searched
