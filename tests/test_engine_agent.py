"""The ``engine`` agent: its options, how it picks among the engine's root options, the
battle -> engine state conversion checked field by field against real battles, the
agent's legal orders on live battles, and the error when poke-engine is missing."""

from __future__ import annotations

import numpy as np
import pytest
from poke_env.battle import Effect, SideCondition, Status

from pokegym.agents import make_agent, register_agent
from pokegym.arena import ArenaConfig, run_arena
from pokegym.errors import AgentOptionError, EngineMissingError
from pokegym.world.data import load_dex, to_id
from pokegym.world.history import weather_turns_left
from pokegym.world.priors import belief_for
from pokegym.world.state import STATUS_IDS
from policies.core import engine_state as es
from policies.core.engine_root import option_name, pooled, root_is_clear
from policies.engine import EngineOptions, EnginePolicy


# ------------------------------------------------------------------ no engine needed
@pytest.mark.parametrize("options,word", [
    ({"budget": 0}, "budget"), ({"iterations": -1}, "iterations"), ({"samples": 0}, "samples"),
    ({"choice": "best"}, "choice"), ({"mixed_share": 0}, "mixed_share"),
    ({"threads": 0}, "threads"), ({"rerank": "best"}, "rerank"),
    ({"rerank": "value", "rerank_share": 0}, "rerank_share"),
    ({"rerank": "value", "rerank_time": 0.5}, "rerank_time"),
    ({"rerank": "value", "choice": "mixed"}, "choice=max"),
    ({"trust": "finish+nope"}, "trust"), ({"trust": 1}, "trust"),
])  # fmt: skip
def test_bad_options_are_refused_with_the_option_named(options, word):
    with pytest.raises(ValueError, match=word):
        EngineOptions(**options)


def test_integer_values_of_float_options_are_taken():
    assert EngineOptions(budget=1).budget == 1.0 and isinstance(
        EngineOptions(budget=1).budget, float
    )


def _picker(choice, seed=0, share=0.75):
    agent = EnginePolicy.__new__(EnginePolicy)
    agent.options = EngineOptions(choice=choice, mixed_share=share)
    agent.rng = np.random.default_rng(seed)
    return agent


def test_max_plays_the_most_visited_option():
    assert _picker("max").pick({"tackle": 0.2, "switch pikachu": 0.5, "growl": 0.3}) == (
        "switch pikachu"
    )


def test_mixed_draws_only_among_options_near_the_best_in_proportion():
    picker = _picker("mixed", seed=1)
    shares = {"a": 0.40, "b": 0.32, "c": 0.28}  # c is under 0.75 of the best
    draws = [picker.pick(shares) for _ in range(4000)]
    assert set(draws) == {"a", "b"}
    assert draws.count("a") / len(draws) == pytest.approx(0.40 / 0.72, abs=0.03)


def test_option_names_are_lowercase_strings():
    assert option_name("SWITCH Pikachu") == "switch pikachu"
    assert option_name(("thunderbolt-tera", "x")) == "thunderbolt-tera"


def test_a_missing_engine_is_one_clear_error_naming_the_command(monkeypatch):
    import pokegym.engine as engine_package

    def missing():
        raise EngineMissingError("poke-engine is not installed: run `pokegym engine build`")

    monkeypatch.setattr(engine_package, "require_engine", missing)
    with pytest.raises((EngineMissingError, AgentOptionError), match="pokegym engine build"):
        make_agent("engine")


# ------------------------------------------------------------------ the real engine
class Checking:
    """Plays random legal orders; at each decision builds the engine state from the
    battle and records every field that disagrees with it."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.problems: list[str] = []
        self.states = 0
        self.options_mapped = 0

    def seed(self, seed):
        self.rng = np.random.default_rng(seed)

    def choose(self, battle):
        orders = es.engine_orders(battle)
        if battle.opponent_active_pokemon is not None and orders:
            self.check(battle)
        names = sorted(orders)
        if not names:
            from poke_env.player.battle_order import DefaultBattleOrder

            return DefaultBattleOrder()
        return orders[names[int(self.rng.integers(len(names)))]]

    def check(self, battle, belief=None):
        dex = load_dex(battle.gen)
        belief = belief or belief_for(battle)
        guess = belief.modal_determinization()
        unseen = es.unseen_opponents(battle, guess, belief.prior, self.rng)
        state = es.engine_state(battle, dex, guess, unseen)
        self.states += 1
        bad = self.problems.append
        turn = f"{battle.battle_tag} turn {battle.turn}"
        for name in es.unknown_names(state):  # an item or ability it lacks does nothing there
            if name.split()[0] in ("species", "move"):
                bad(f"{turn}: the engine does not know {name}")
        ours = state.side_one
        active = next(m for m in battle.team.values() if m.active)
        first = ours.pokemon[0]
        if to_id(first.id) != to_id(active.species):
            bad(f"{turn}: our slot 0 is {first.id}, the active is {active.species}")
        if first.hp != (0 if active.fainted else active.current_hp):
            bad(f"{turn}: our active's HP {first.hp} != {active.current_hp}")
        if first.maxhp != active.max_hp:
            bad(f"{turn}: our active's max HP {first.maxhp} != {active.max_hp}")
        for field, stat in (("attack", "atk"), ("defense", "def"), ("special_attack", "spa"),
                            ("special_defense", "spd"), ("speed", "spe")):  # fmt: skip
            if getattr(first, field) != active.stats[stat]:
                bad(f"{turn}: our active's {field} {getattr(first, field)} != {active.stats[stat]}")
        moves = [to_id(m.id) for m in first.moves if m.id != "none"]
        if moves != [to_id(m) for m in list(active.moves)[:4]]:
            bad(f"{turn}: our active's moves {moves} != {list(active.moves)}")
        for move in first.moves:
            if move.id in active.moves and move.pp != active.moves[move.id].current_pp:
                bad(f"{turn}: PP of {move.id} {move.pp} != {active.moves[move.id].current_pp}")
        if to_id(first.item or "none") != to_id(active.item or "none"):
            bad(f"{turn}: our item {first.item} != {active.item}")
        if to_id(first.ability) != to_id(active.ability or "none"):
            bad(f"{turn}: our ability {first.ability} != {active.ability}")
        want = es.ENGINE_STATUS.get(STATUS_IDS.get(active.status, ""), "none")
        if to_id(first.status) != to_id(want):
            bad(f"{turn}: our status {first.status} != {active.status}")
        if first.terastallized != active.is_terastallized:
            bad(f"{turn}: our Tera flag {first.terastallized} != {active.is_terastallized}")
        for field, stat in (("attack_boost", "atk"), ("speed_boost", "spe"),
                            ("special_attack_boost", "spa"), ("defense_boost", "def")):  # fmt: skip
            if getattr(ours, field) != active.boosts[stat]:
                bad(f"{turn}: our {field} {getattr(ours, field)} != {active.boosts[stat]}")
        alive_ours = sum(1 for m in ours.pokemon if m.hp > 0)
        if alive_ours != sum(1 for m in battle.team.values() if not m.fainted):
            bad(f"{turn}: {alive_ours} of our Pokémon alive in the state")
        theirs = state.side_two
        foe = battle.opponent_active_pokemon
        second = theirs.pokemon[0]
        if to_id(second.id) != to_id(foe.species):
            bad(f"{turn}: their slot 0 is {second.id}, the active is {foe.species}")
        if abs(second.hp / second.maxhp - foe.current_hp_fraction) > 0.02 and not foe.fainted:
            bad(f"{turn}: their HP {second.hp}/{second.maxhp} != {foe.current_hp_fraction}")
        revealed = {to_id(m) for m in foe.moves}
        have = {to_id(m.id) for m in second.moves}
        if not revealed <= have and len(revealed) <= 4:
            bad(f"{turn}: their revealed moves {revealed} not all in {have}")
        if sum(1 for m in theirs.pokemon if m.maxhp > 1) != max(6, len(battle.opponent_team)):
            bad(f"{turn}: {sum(1 for m in theirs.pokemon if m.maxhp > 1)} opponent Pokémon")
        for side, conditions in ((ours, battle.side_conditions),
                                 (theirs, battle.opponent_side_conditions)):  # fmt: skip
            sc = side.side_conditions
            if sc.stealth_rock != int(SideCondition.STEALTH_ROCK in conditions):
                bad(f"{turn}: Stealth Rock {sc.stealth_rock} != {conditions}")
            if sc.spikes != int(conditions.get(SideCondition.SPIKES, 0)):
                bad(f"{turn}: Spikes {sc.spikes} != {conditions}")
        if foe.status is Status.TOX and theirs.side_conditions.toxic_count != foe.status_counter:
            bad(f"{turn}: toxic count {theirs.side_conditions.toxic_count} != {foe.status_counter}")
        weather = next(iter(battle.weather), None)
        if es.WEATHER_NAMES.get(weather, "none") != str(state.weather).lower():
            bad(f"{turn}: weather {state.weather} != {battle.weather}")
        if weather is not None and state.weather_turns_remaining != weather_turns_left(battle):
            bad(f"{turn}: weather turns {state.weather_turns_remaining} != "
                f"{weather_turns_left(battle)}")  # fmt: skip
        for side, mon, engine_mon in ((ours, active, first), (theirs, foe, second)):
            if side.side_conditions.protect != mon.protect_counter:
                bad(f"{turn}: protect streak {side.side_conditions.protect} != "
                    f"{mon.protect_counter}")  # fmt: skip
            whole = engine_mon.maxhp // 4 if Effect.SUBSTITUTE in mon.effects else 0
            if side.substitute_health != whole:
                bad(f"{turn}: Substitute {side.substitute_health} HP, not {whole}")
        try:
            options = pe_module().monte_carlo_tree_search(state, iterations=30)
        except BaseException as error:  # the engine panics as a BaseException
            bad(f"{turn}: the engine failed ({error}) on {state.to_string()}")
            return
        legal = es.engine_orders(battle)
        names = [option_name(o.move_choice) for o in options.side_one]
        if not any(n in legal for n in names):
            bad(f"{turn}: no engine option {names} is a legal order {sorted(legal)}")
        self.options_mapped += sum(n in legal for n in names)


def pe_module():
    return es.import_engine()


def _register_made(name, spec):
    """Register ``name`` as an agent built from ``spec``; the list of the agents made."""
    made = []

    def factory(**options):
        made.append(make_agent(spec))
        return made[-1]

    register_agent(name, factory)
    return made


def _play(agent_spec, opponent, battles, seed, fmt="gen9randombattle"):
    return run_arena(ArenaConfig(agents=[agent_spec, opponent], battles_per_pair=battles,
                                 seed=seed, concurrency=1, clock_bank=None,
                                 battle_format=fmt))  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["gen9randombattle", "gen9ou"])
def test_the_engine_state_matches_the_battle_it_came_from(fmt):
    made = []

    def factory(**options):
        made.append(Checking(seed=len(made)))
        return made[-1]

    register_agent("checking", factory)
    _play("checking", "max_power", battles=2, seed=5, fmt=fmt)
    states = sum(m.states for m in made)
    problems = [p for m in made for p in m.problems]
    assert states >= 20, states
    assert not problems, "\n".join(problems[:20])
    assert sum(m.options_mapped for m in made) >= states


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["gen9randombattle", "gen9ou"])
def test_the_engine_agent_beats_random_with_legal_orders(fmt):
    made = _register_made("engine_recorded", "engine:iterations=300,samples=2")
    result = _play("engine_recorded", "random", battles=2, seed=11, fmt=fmt)
    record = result.record("engine_recorded")
    assert record["battles"] == 2 and record["wins"] == 2, result.table()
    searched = [n for agent in made for n in agent.iteration_counts]
    assert searched and min(searched) >= 2 * 300
    assert all(agent.failures == 0 for agent in made)


@pytest.mark.slow
def test_a_trusted_rule_plays_its_order_without_a_search():
    made = _register_made("engine_trusting", "engine:iterations=300,samples=2,trust=finish")
    result = _play("engine_trusting", "random", battles=2, seed=11)
    assert result.record("engine_trusting")["battles"] == 2, result.table()
    agent = made[-1]
    assert agent.options.trusted_rules() == {"finish"}
    assert agent.trusted > 0 and agent.failures == 0
    # a trusted decision searched nothing; every other one searched its iterations
    assert agent.iteration_counts.count(0) == agent.trusted
    assert min(n for n in agent.iteration_counts if n) >= 2 * 300


def test_the_engine_state_matches_a_recorded_battle_at_every_request():
    """Offline (no Node): player 1's view rebuilt from a recorded random battle, the
    engine state built and checked at every request, and the engine's options legal."""
    from test_priors_recorded import RANDOM_BATTLE, load, prior_of

    from pokegym.world.priors import BeliefState

    belief = BeliefState(prior_of(load(RANDOM_BATTLE)), our_role="p1", gen=9)
    checker = Checking(seed=1)
    for battle, requests in _recorded_views():
        asked = requests and not requests[-1].get("wait")  # a "wait" request asks nothing
        if asked and battle.opponent_active_pokemon is not None and not battle.finished:
            belief.update(battle)
            if es.engine_orders(battle):
                checker.check(battle, belief)
    assert checker.states >= 20, checker.states
    assert not checker.problems, "\n".join(checker.problems[:20])
    assert checker.options_mapped >= checker.states


def _recorded_decision():
    """A request of the recorded random battle after turn 3 with both actives out, and
    the belief's modal guess for it."""
    for battle, _requests in _recorded_views():
        if battle.turn >= 3 and battle.available_moves and battle.opponent_active_pokemon:
            belief = belief_for(battle)
            return battle, belief.modal_determinization()
    raise AssertionError("no request with moves after turn 3")


def test_the_opponents_protect_streak_substitute_yawn_and_choice_lock_reach_the_engine():
    battle, guess = _recorded_decision()
    dex = load_dex(battle.gen)
    foe = battle.opponent_active_pokemon
    free = es.engine_state(battle, dex, guess)
    assert free.side_two.side_conditions.protect == 0
    assert free.side_two.substitute_health == 0
    assert not any(m.disabled for m in free.side_two.pokemon[0].moves if m.id != "none")
    foe.moved("protect")
    foe.moved("protect")  # two successful protections in a row
    foe.start_effect("Substitute")
    foe.start_effect("Yawn")
    state = es.engine_state(battle, dex, guess)
    engine_foe = state.side_two.pokemon[0]
    assert state.side_two.side_conditions.protect == 2
    # a whole Substitute: a quarter of the engine's max HP (stat points, not poke-env's 100)
    assert engine_foe.maxhp > 100 and state.side_two.substitute_health == engine_foe.maxhp // 4
    assert "yawn" in {str(v).lower() for v in state.side_two.volatile_statuses}
    counts = state.side_two.volatile_status_durations  # turn counts, not time
    assert counts.yawn == 1  # it falls asleep this turn
    # a Choice item: after a move, the others are barred as the engine's own lock bars them
    moves = [m.id for m in engine_foe.moves if m.id != "none"]
    foe.item = "choicescarf"
    foe.moved(moves[1])
    locked = es.engine_state(battle, dex, guess).side_two.pokemon[0]
    assert [m.id for m in locked.moves if not m.disabled and m.id != "none"] == [moves[1]]
    foe.item = "leftovers"
    unlocked = es.engine_state(battle, dex, guess).side_two.pokemon[0]
    assert not any(m.disabled for m in unlocked.moves if m.id != "none")
    # a Wish used last turn heals half its user's max HP at this turn's end
    assert tuple(state.side_two.wish) == (0, 0)
    ident = next(key for key, mon in battle.opponent_team.items() if mon is foe)
    name = ident.split(": ", 1)[1]
    for line in (
        f"|move|{ident[:2]}a: {name}|Wish|{ident[:2]}a: {name}",
        f"|turn|{battle.turn + 1}",
    ):
        battle.parse_message(line.split("|"))
    wished = es.engine_state(battle, dex, guess)
    assert tuple(wished.side_two.wish) == (1, wished.side_two.pokemon[0].maxhp // 2)
    assert tuple(wished.side_one.wish) == (0, 0)
    # locked into Outrage: trapped, its other moves barred, the turns counted
    ours = next(key for key, mon in battle.team.items() if mon.active).replace(": ", "a: ", 1)
    for line in (f"|move|{ident[:2]}a: {name}|Outrage|{ours}", f"|turn|{battle.turn + 1}"):
        battle.parse_message(line.split("|"))
    locked = es.engine_state(battle, dex, guess)
    outraging = locked.side_two.pokemon[0]
    assert "lockedmove" in {str(v).lower() for v in locked.side_two.volatile_statuses}
    locked_turns = locked.side_two.volatile_status_durations.lockedmove
    assert locked_turns == 1
    assert [m.id for m in outraging.moves if not m.disabled and m.id != "none"] == ["outrage"]
    again = f"|move|{ident[:2]}a: {name}|Outrage|{ours}|[from] lockedmove"
    for line in (again, f"|turn|{battle.turn + 1}"):
        battle.parse_message(line.split("|"))
    last_turn = es.engine_state(battle, dex, guess)
    locked_turns = last_turn.side_two.volatile_status_durations.lockedmove
    assert locked_turns == 2
    result = pe_module().monte_carlo_tree_search(last_turn, iterations=200)
    assert {option_name(o.move_choice) for o in result.side_two} <= {"outrage", "outrage-tera"}


def test_a_move_barred_only_twice_in_a_row_stays_open_to_the_engine():
    from poke_env.battle import Pokemon

    tinkaton = Pokemon(gen=9, species="tinkaton")
    tinkaton.moved("gigatonhammer")
    assert es._once_in_a_row(tinkaton, "gigatonhammer")
    tinkaton.moved("playrough")
    assert not es._once_in_a_row(tinkaton, "gigatonhammer")
    assert not es._once_in_a_row(tinkaton, "playrough")  # any other move: the request says


def _recorded_views():
    """Player 1's battle object after each block of the recorded random battle, with the
    block's requests, offline (no Node)."""
    from test_priors_recorded import RANDOM_BATTLE, load

    from pokegym.backends.base import PlayerView

    recording = load(RANDOM_BATTLE)
    view = PlayerView(recording["tag"], recording["names"][0], recording["names"][1], "p1",
                      recording["gen"])  # fmt: skip
    for text, requests in recording["blocks"]:
        view.feed(text)
        view.feed_requests(requests)
        yield view.battle, requests


def _recorded_state():
    """A world-model state from the recorded random battle, offline (no Node)."""
    from pokegym.world.transition import TransitionModel
    from policies.core.battle import decision_state

    for battle, _ in _recorded_views():
        if battle.turn >= 3 and battle.available_moves and battle.opponent_active_pokemon:
            model = TransitionModel(load_dex(battle.gen))
            return model, decision_state(battle, model.dex)
    raise AssertionError("no request with moves after turn 3")


def test_the_opponent_options_of_the_engine_map_onto_the_world_model():
    from policies.core.battle import PASS, legal_actions
    from policies.core.root_rerank import opponent_action, opponent_policy

    model, state = _recorded_state()
    theirs = state.sides[1]
    active = theirs.active_mon
    move = next(iter(active.moves))
    assert opponent_action(move, state) == ("move", to_id(move), False)
    assert opponent_action(move + "-tera", state) == ("move", to_id(move), True)
    for i, mon in enumerate(theirs.mons):
        assert opponent_action("switch " + to_id(mon.species), state) == ("switch", i, False)
    assert opponent_action("switch missingno", state) is None
    assert opponent_action("no move", state) == PASS
    # A turn where only we switch (after a faint): the opponent passes.
    assert opponent_policy(model, state, {"no move": 1.0}) == {PASS: 1.0}
    legal = legal_actions(model, state, 1)
    # Shares of the legal options, normalised; names the state lacks are dropped.
    policy = opponent_policy(model, state, {move: 0.6, "switch missingno": 0.3})
    assert policy == {("move", to_id(move), False): 1.0}
    # Nothing maps: uniform over the legal actions.
    uniform = opponent_policy(model, state, {"switch missingno": 1.0})
    assert set(uniform) == set(legal)
    assert sum(uniform.values()) == pytest.approx(1.0)


class Scripted:
    """An evaluator that answers values from a list, in the order the states come."""

    def __init__(self, values):
        self.values = list(values)
        self.seen = 0

    def evaluate(self, states):
        self.seen += len(states)
        return [self.values.pop(0) for _ in states]


def test_rerank_plays_the_best_expected_value_against_the_opponent_weights():
    from policies.core.battle import legal_actions
    from policies.core.root_rerank import rerank

    model, state = _recorded_state()
    ours = legal_actions(model, state, 0)[:2]
    theirs = legal_actions(model, state, 1)[:2]
    assert len(ours) == 2 and len(theirs) == 2
    # Values in the order (a0, b0), (a0, b1), (a1, b0), (a1, b1).
    for weights, best in (((0.9, 0.1), ours[0]), ((0.1, 0.9), ours[1])):
        evaluator = Scripted([1.0, 0.0, 0.0, 1.0])
        opponent = dict(zip(theirs, weights, strict=True))
        chosen, values = rerank(model, state, ours, opponent, evaluator)
        assert chosen == best and evaluator.seen == 4
        assert values[ours[0]] == pytest.approx(weights[0])
        assert values[ours[1]] == pytest.approx(weights[1])
    # A tie goes to the first candidate (the search's own choice comes first).
    chosen, _ = rerank(model, state, ours, dict.fromkeys(theirs, 0.5), Scripted([0.5] * 4))
    assert chosen == ours[0]
    # Out of time: the first candidate alone is valued, and played.
    evaluator = Scripted([0.0, 0.0, 1.0, 1.0])
    chosen, values = rerank(model, state, ours, dict.fromkeys(theirs, 0.5), evaluator,
                            time_left=lambda: 0.0)  # fmt: skip
    assert chosen == ours[0] and list(values) == [ours[0]] and evaluator.seen == 2


@pytest.mark.slow
@pytest.mark.parametrize("how", ["value", "heuristic"])
def test_the_reranking_engine_agent_beats_random_with_legal_orders(how):
    made = []

    def factory(**options):
        made.append(make_agent(f"engine:iterations=300,samples=2,rerank={how},rerank_share=0.5"))
        return made[-1]

    register_agent(f"engine_{how}", factory)
    result = _play(f"engine_{how}", "random", battles=2, seed=12)
    record = result.record(f"engine_{how}")
    assert record["battles"] == 2 and record["wins"] == 2, result.table()
    assert all(agent.failures == 0 for agent in made)
    assert sum(len(agent.iteration_counts) for agent in made) >= 10
    # The lookahead ran (two options or more near the best), not only the search.
    assert sum(agent.lookaheads for agent in made) >= 1
    assert all(agent.reranked <= agent.lookaheads for agent in made)


def test_the_deadline_rule_keeps_the_margin_and_never_goes_below_zero():
    from policies.core.deadline import DEADLINE_MARGIN, seconds_left

    # Times are injected (no clock is read): 0.1 s spent, then 1 s spent of 0.5.
    early, late = seconds_left(0.5, 10.0, now=10.1), seconds_left(0.5, 10.0, now=11.0)
    assert early == pytest.approx(0.4 - DEADLINE_MARGIN)
    assert late == 0.0


# ------------------------------------------------------------------ extend: a second search
def test_extend_options_are_checked_with_the_option_named():
    for options, word in (({"budget": 0.5, "extend": 0.4}, "extend"),
                          ({"extend": 1.0, "iterations": 100}, "iterations"),
                          ({"extend": 1.0, "reply": "prior"}, "reply"),
                          ({"extend": 1.0, "clear": 1.0}, "clear"),
                          ({"extend": 1.0, "first": 0.0}, "first")):  # fmt: skip
        with pytest.raises(ValueError, match=word):
            EngineOptions(**options)
    assert EngineOptions(budget=0.3, extend=0.9).extend == 0.9


def test_a_root_is_clear_when_the_runner_up_is_far_enough_behind():
    assert root_is_clear({"a": 0.6, "b": 0.3, "c": 0.1}, 0.5)
    assert not root_is_clear({"a": 0.5, "b": 0.3, "c": 0.2}, 0.5)
    assert root_is_clear({"a": 1.0}, 0.5) and root_is_clear({}, 0.5)


def test_pooled_shares_weigh_each_search_by_its_iterations():
    both = pooled({"a": 1.0}, 100, {"a": 0.5, "b": 0.5}, 300)
    assert both == pytest.approx({"a": 0.625, "b": 0.375})
    assert pooled({"a": 1.0}, 0, {"b": 1.0}, 0) == pytest.approx({"a": 0.5, "b": 0.5})


class ScriptedEngine:
    """poke-engine's search, scripted: each call answers the next root (our option names
    to visits), records the time it was given and moves the fake clock on by it."""

    def __init__(self, roots, clock):
        self.roots = list(roots)
        self.clock = clock
        self.given_ms: list[int] = []

    def monte_carlo_tree_search(self, state, duration_ms=None, iterations=None, threads=1):
        from types import SimpleNamespace as Result

        self.given_ms.append(duration_ms)
        self.clock.now += duration_ms / 1000
        visits = self.roots.pop(0)
        ours = [Result(move_choice=n, visits=v, total_score=0.5 * v) for n, v in visits.items()]
        theirs = [Result(move_choice="no move", visits=sum(visits.values()), total_score=0.0)]
        return Result(total_visits=sum(visits.values()), side_one=ours, side_two=theirs)


class FakeClock:
    """Seconds that pass only when the scripted engine searches."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _decision():
    """A request of the recorded battle (offline) with three legal orders or more."""
    for battle, _ in _recorded_views():
        names = sorted(es.engine_orders(battle))
        if battle.turn >= 3 and len(names) >= 3 and battle.opponent_active_pokemon:
            return battle, names
    raise AssertionError("no request with three legal orders after turn 3")


def test_extend_searches_again_where_the_root_is_unclear_with_the_battles_saved_time():
    battle, names = _decision()
    a, b, c = names[:3]
    clear, unclear = {a: 70, b: 20, c: 10}, {a: 45, b: 40, c: 15}
    second = {a: 100, b: 300, c: 0}  # more iterations: the second search weighs more
    clock = FakeClock()
    agent = EnginePolicy(seed=0, budget=0.5, extend=1.0, first=0.4, samples=2)
    agent.clock = clock
    agent.engine = ScriptedEngine([clear] * 2 + [unclear] * 2 + [second] * 2, clock)
    orders = es.engine_orders(battle)
    # A clear root: the first search alone (0.4 of the 0.5 s allowance, less the 0.05 s
    # margin, shared by two guesses); the 0.35 s left go to the battle's bank.
    assert agent.choose(battle).message == orders[a].message
    assert agent.engine.given_ms == pytest.approx([75, 75], abs=1)
    assert agent._banks[battle.battle_tag] == pytest.approx(0.35, abs=0.002)
    # Unclear: fresh guesses until the allowance and the bank run out (0.5 + 0.35 s), the
    # pooled visits' best played (b: 0.4 x 1/5 + 0.75 x 4/5), and the bank nearly spent.
    assert agent.choose(battle).message == orders[b].message
    assert agent.engine.given_ms[2:] == pytest.approx([75, 75, 325, 325], abs=1)
    assert agent._banks[battle.battle_tag] == pytest.approx(0.05, abs=0.004)
    assert agent.extended == 1 and agent.failures == 0
    assert agent.iteration_counts == [200, 1000]
    assert agent.latencies == pytest.approx([0.15, 0.80], abs=0.004)
    # A new battle has nothing saved: an unclear root gets the allowance alone.
    agent._banks.clear()
    agent.engine.roots = [unclear] * 2 + [second] * 2
    agent.choose(battle)
    assert agent.engine.given_ms[6:] == pytest.approx([75, 75, 150, 150], abs=1)
    # The most one decision takes is extend, whatever the bank holds.
    agent._banks[battle.battle_tag] = 5.0
    agent.engine.roots = [unclear] * 2 + [second] * 2
    agent.choose(battle)
    assert agent.engine.given_ms[10:] == pytest.approx([75, 75, 400, 400], abs=1)


@pytest.mark.slow
def test_the_extending_engine_agent_beats_random_with_legal_orders():
    """The real engine with ``extend``: legal orders every time, and some decisions (a
    clear root needs the runner-up at a tenth of the best here) searched twice."""
    made = _register_made("engine_extending", "engine:budget=0.1,extend=0.2,clear=0.1,samples=2")
    result = _play("engine_extending", "random", battles=2, seed=13)
    record = result.record("engine_extending")
    assert record["battles"] == 2 and record["wins"] == 2, result.table()
    assert all(agent.failures == 0 for agent in made)
    decisions = sum(len(agent.iteration_counts) for agent in made)
    extended = sum(agent.extended for agent in made)
    assert decisions >= 10 and 1 <= extended <= decisions
