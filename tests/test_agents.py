"""Agents: names, poke-env players and callables as opponents; the baselines."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import outcome_reward, play_episode
from poke_env.player import Player, RandomPlayer
from poke_env.player.battle_order import DefaultBattleOrder, SingleBattleOrder

from pokegym.agents import (
    Agent,
    CallableAgent,
    PlayerAgent,
    make_agent,
    register_agent,
    registered_agents,
)
from policies import MaxPowerPolicy, Policy, RandomPolicy


def first_legal_order(battle):
    if battle.available_moves:
        return SingleBattleOrder(battle.available_moves[0])
    if battle.available_switches:
        return SingleBattleOrder(battle.available_switches[0])
    return DefaultBattleOrder()


def test_agents_by_name():
    assert {"random", "max_power"} <= set(registered_agents())
    random_agent = make_agent("random")
    assert isinstance(random_agent, RandomPolicy) and isinstance(random_agent, Agent)
    max_power = make_agent("max_power:seed=3")
    assert isinstance(max_power, MaxPowerPolicy)
    # The seed option seeds the agent's generator.
    assert max_power.rng.integers(1 << 30) == np.random.default_rng(3).integers(1 << 30)
    assert isinstance(make_agent(RandomPlayer(start_listening=False)), PlayerAgent)
    assert isinstance(make_agent(first_legal_order), CallableAgent)
    policy = RandomPolicy()
    assert make_agent(policy) is policy


def test_register_agent():
    register_agent("first_legal_test", lambda **options: CallableAgent(first_legal_order))
    assert "first_legal_test" in registered_agents()
    assert isinstance(make_agent("first_legal_test"), CallableAgent)
    for bad in ("", "a:b", "a,b"):
        with pytest.raises(ValueError, match="plain words"):
            register_agent(bad, RandomPolicy)


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    "opponent",
    ["random", "max_power:seed=3", "poke-env-player", "callable", "policy-object"],
)
@pytest.mark.parametrize("battle_format", ["gen9randombattle", "gen9ou"])
def test_opponents_play_full_battles(make_env, opponent, battle_format):
    spec = {
        "poke-env-player": RandomPlayer(start_listening=False),
        "callable": first_legal_order,
        "policy-object": MaxPowerPolicy(seed=1),
    }.get(opponent, opponent)
    env = make_env(battle_format, opponent=spec)
    episode = play_episode(env, seed=7)
    assert episode.terminated and not episode.truncated
    # poke-env's RandomPlayer draws from the global `random`: allow its (rare) tie.
    assert episode.rewards[-1] == outcome_reward(episode.final_info)
    assert episode.final_info["battle"].finished


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("battle_format", ["gen9randombattle", "gen8randombattle"])
def test_max_power_picks_the_strongest_move(make_env, battle_format):
    env = make_env(battle_format)
    policy = MaxPowerPolicy(seed=0)
    checked = {"moves": 0, "switches": 0}

    def on_state(obs, info):
        battle = info["battle"]
        order = policy.choose(battle)
        if battle.available_moves:
            best = max(move.base_power for move in battle.available_moves)
            assert order.order in battle.available_moves
            assert order.order.base_power == best
            # Ties keep the first move in moveset order.
            first_best = next(m for m in battle.available_moves if m.base_power == best)
            assert order.order is first_best
            assert not order.terastallize and not order.dynamax
            checked["moves"] += 1
        else:
            assert order.order in battle.available_switches
            checked["switches"] += 1
        # Its order is always legal for the codec.
        assert env.codec.order_to_choice(order, battle)

    for seed in (0, 1):
        play_episode(env, seed=seed, on_state=on_state)
    assert checked["moves"] > 0 and checked["switches"] > 0


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_random_policy_orders_are_legal_and_seeded(make_env):
    env = make_env("gen9randombattle")
    a, b = RandomPolicy(seed=5), RandomPolicy(seed=5)

    def on_state(obs, info):
        battle = info["battle"]
        order_a, order_b = a.choose(battle), b.choose(battle)
        assert str(order_a) == str(order_b)
        action = env.codec.from_order(order_a, battle)
        assert obs["action_mask"][action] == 1

    play_episode(env, seed=2, on_state=on_state)


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_policy_team_preview_and_as_player(make_env):
    env = make_env("gen9ou", team_preview=True)
    _, info = env.reset(seed=3)
    battle = info["battle"]
    policy = RandomPolicy(seed=4)
    preview = policy.team_preview(battle)
    assert preview.startswith("/team ")
    digits = preview.removeprefix("/team ")
    assert sorted(digits) == list("123456")
    assert env.codec.order_to_choice(preview, battle) == f"team {digits}"

    player = policy.as_player(start_listening=False)
    assert isinstance(player, Player)
    assert player.teampreview(battle).startswith("/team ")
    info = env.step(8)[4]
    battle = info["battle"]
    order = player.choose_move(battle)
    assert env.codec.order_to_choice(order, battle)


def test_policy_is_abstract():
    with pytest.raises(TypeError):
        Policy()  # type: ignore[abstract]
