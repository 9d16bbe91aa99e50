"""Sure knock-outs as poke-engine plays the turn out (``engine:finish=sure``): on real
engine states, and in real battles."""

from __future__ import annotations

from collections import Counter

import pytest
from test_engine_agent import _play, _register_made

from pokegym.engine import require_engine
from policies.core.engine_finish import SearchedGuess, is_move, sure_knockouts
from policies.engine import EngineOptions, EnginePolicy

OURS = ("earthquake", "dragonclaw", "earthquake-tera", "dragonclaw-tera", "switch rotomwash")


@pytest.fixture(scope="module")
def pe():
    return require_engine()


def _guess(pe, *, garchomp_hp=357, pikachu_hp=211, pikachu_item="lightball",
           pikachu_moves=("thunderbolt", "quickattack"), attack_boost=0):  # fmt: skip
    """Our Garchomp (faster) against a Pikachu, a Rotom-Wash behind each."""
    garchomp = pe.Pokemon(
        id="garchomp", level=100, types=("dragon", "ground"), hp=garchomp_hp, maxhp=357,
        ability="roughskin", item="leftovers", attack=296, defense=226, special_attack=176,
        special_defense=206, speed=333, tera_type="steel",
        moves=[pe.Move(id="earthquake"), pe.Move(id="dragonclaw")],
    )  # fmt: skip
    pikachu = pe.Pokemon(
        id="pikachu", level=100, types=("electric", "typeless"), hp=pikachu_hp, maxhp=211,
        ability="static", item=pikachu_item, attack=146, defense=116, special_attack=136,
        special_defense=136, speed=306, tera_type="electric",
        moves=[pe.Move(id=m) for m in pikachu_moves],
    )  # fmt: skip

    def rotom():
        return pe.Pokemon(
            id="rotomwash", level=100, types=("electric", "water"), hp=304, maxhp=304,
            ability="levitate", item="leftovers", attack=166, defense=250,
            special_attack=246, special_defense=250, speed=249, tera_type="water",
            moves=[pe.Move(id="hydropump"), pe.Move(id="voltswitch")],
        )  # fmt: skip

    state = pe.State(side_one=pe.Side(pokemon=[garchomp, rotom()], attack_boost=attack_boost),
                     side_two=pe.Side(pokemon=[pikachu, rotom()]))  # fmt: skip
    theirs = (*pikachu_moves, *(m + "-tera" for m in pikachu_moves), "switch rotomwash")
    return SearchedGuess(state, OURS, theirs)


def _damage(pe, guess, move):
    """The engine's damage rolls of our ``move`` against the Pikachu."""
    rolls, _ = pe.calculate_damage(guess.state, move, "thunderbolt", True)
    return min(rolls), max(rolls)


def test_a_move_that_knocks_out_in_every_roll_is_sure(pe):
    guess = _guess(pe)
    assert _damage(pe, guess, "dragonclaw")[0] >= 211  # both moves knock it out
    assert sure_knockouts(pe, [guess], OURS) == ["earthquake", "dragonclaw"]


def test_a_knock_out_in_some_rolls_only_is_not_sure(pe):
    low, high = _damage(pe, _guess(pe), "dragonclaw")
    assert low < high
    guess = _guess(pe, pikachu_hp=(low + high) // 2 + 1)
    assert sure_knockouts(pe, [guess], OURS) == ["earthquake"]
    assert sure_knockouts(pe, [_guess(pe), guess], ["dragonclaw"]) == []  # every guess


def test_a_move_the_opponent_answers_first_is_not_sure(pe):
    # At 1 HP our Garchomp falls to Quick Attack before it moves.
    assert sure_knockouts(pe, [_guess(pe, garchomp_hp=1)], OURS) == []
    # ... and with a move that does not go first, nothing stops the knock-out.
    guess = _guess(pe, garchomp_hp=1, pikachu_moves=("thunderbolt", "tackle"))
    assert sure_knockouts(pe, [guess], OURS) == ["earthquake", "dragonclaw"]


def test_focus_sash_makes_no_knock_out_sure(pe):
    assert sure_knockouts(pe, [_guess(pe, pikachu_item="focussash")], OURS) == []


def test_switches_tera_and_an_opponent_that_only_switches(pe):
    assert not is_move("switch rotomwash") and not is_move("earthquake-tera")
    guess = _guess(pe)
    assert sure_knockouts(pe, [guess], ["switch rotomwash", "earthquake-tera"]) == []
    only_switch = SearchedGuess(guess.state, guess.ours, ("switch rotomwash",))
    assert sure_knockouts(pe, [only_switch], OURS) == []
    assert sure_knockouts(pe, [guess], ["earthquake", "hydropump"]) == ["earthquake"]


def test_an_opponent_that_does_not_act_cannot_answer(pe):
    """``no move`` (the opponent recharges): our 1-HP Garchomp knocks the Pikachu out
    surely, where a Quick Attack would have come first."""
    guess = _guess(pe, garchomp_hp=1)
    recharging = SearchedGuess(guess.state, guess.ours, ("no move",))
    assert sure_knockouts(pe, [recharging], OURS) == ["earthquake", "dragonclaw"]


def _agent(pe, guesses):
    agent = EnginePolicy.__new__(EnginePolicy)
    agent.options, agent.engine, agent._usage = EngineOptions(finish="sure"), pe, Counter()
    agent.failures = 0
    agent._searched, agent._opponent_shares = guesses, {"switch rotomwash": 0.25, "tackle": 0.75}
    return agent


def test_the_agent_plays_the_most_visited_sure_knock_out_over_the_search(pe, caplog):
    agent = _agent(pe, [_guess(pe)])
    shares = {"switch rotomwash": 0.6, "dragonclaw": 0.3, "earthquake": 0.1}
    with caplog.at_level("INFO", logger="policies.core.engine_finish"):
        assert agent._finish(shares, "switch rotomwash") == "dragonclaw"
    assert ("a sure knock-out, dragonclaw, over the search's switch rotomwash (the "
            "opponent's root: 25 % switches)") in caplog.text  # fmt: skip
    assert agent._finish(shares, "earthquake") == "earthquake"  # the search's, if sure
    assert agent.pop_usage() == {"sure_knockouts": 2.0, "finished": 1.0}
    agent._searched = [_guess(pe, pikachu_item="focussash")]
    assert agent._finish(shares, "switch rotomwash") == "switch rotomwash"
    assert agent.pop_usage() == {"sure_knockouts": 0, "finished": 0}


def test_a_failed_check_leaves_the_searchs_choice(pe, caplog):
    guess = _guess(pe)
    agent = _agent(pe, [SearchedGuess(guess.state, guess.ours, ("notamove",))])
    assert agent._finish({"switch rotomwash": 0.6, "earthquake": 0.4},
                         "switch rotomwash") == "switch rotomwash"  # fmt: skip
    assert agent.failures == 1 and "sure knock-outs not checked (ValueError" in caplog.text


def test_an_engine_panic_in_the_check_leaves_the_searchs_choice(pe, caplog):
    """A boost the engine cannot hold (+9) makes it panic, as a BaseException."""
    agent = _agent(pe, [_guess(pe, attack_boost=9)])
    assert agent._finish({"switch rotomwash": 0.6, "earthquake": 0.4},
                         "switch rotomwash") == "switch rotomwash"  # fmt: skip
    assert agent.failures == 1 and "sure knock-outs not checked" in caplog.text
    assert agent.pop_usage() == {"sure_knockouts": 0, "finished": 0}


def test_no_guess_makes_no_knock_out_sure(pe):
    assert sure_knockouts(pe, [], OURS) == []


def test_finish_is_named_when_wrong():
    with pytest.raises(ValueError, match="finish is one of search, sure"):
        EngineOptions(finish="always")


@pytest.mark.parametrize("other", [{"reply": "prior"}, {"rerank": "heuristic"}])
def test_finish_is_not_combined_with_what_chooses_again(other):
    with pytest.raises(ValueError, match="reply and rerank would choose again"):
        EngineOptions(finish="sure", **other)


@pytest.mark.slow
@pytest.mark.parametrize("battle_format", ["gen9randombattle", "gen9ou"])
def test_the_engine_with_sure_knock_outs_plays_legal_orders(battle_format):
    made = _register_made("engine_finishing", "engine:iterations=300,samples=2,finish=sure")
    result = _play("engine_finishing", "simple_heuristics", 2, 23, battle_format)
    assert result.record("engine_finishing")["battles"] == 2, result.table()
    assert all(agent.failures == 0 for agent in made)
    usage = result.agent_stats["engine_finishing"].usage
    assert usage.get("sure_knockouts", 0) >= 1, usage
