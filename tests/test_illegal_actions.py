"""Illegal actions raise before anything is sent; the battle stays in sync."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import masked_random

from pokegym.actions import N_ACTIONS, WAIT
from pokegym.errors import IllegalActionError

# Every test here plays real battles or starts Node (`pytest -m "not slow"` skips them).
pytestmark = pytest.mark.slow


def snapshot(env):
    battle = env.battle
    return (
        battle.turn,
        battle.protocol_history.digest(),
        env.encoder.encode(battle),
        env.action_masks().copy(),
    )


def assert_unchanged(env, before):
    turn, digest, observation, mask = before
    battle = env.battle
    assert battle.turn == turn
    assert battle.protocol_history.digest() == digest
    np.testing.assert_array_equal(env.encoder.encode(battle), observation)
    np.testing.assert_array_equal(env.action_masks(), mask)


@pytest.mark.timeout(120)
def test_illegal_action_raises_and_changes_nothing(make_env):
    env = make_env("gen9randombattle", log_battles="spectator")
    reference = make_env("gen9randombattle", log_battles="spectator")
    obs, _ = env.reset(seed=31)
    ref_obs, _ = reference.reset(seed=31)
    mask = obs["action_mask"]
    illegal = [int(a) for a in np.flatnonzero(mask == 0)]
    assert WAIT in illegal and len(illegal) >= 2
    before = snapshot(env)
    for action in [*illegal, N_ACTIONS, -1, np.int64(illegal[0])]:
        with pytest.raises(IllegalActionError) as excinfo:
            env.step(action)
        assert isinstance(excinfo.value, ValueError)
        message = str(excinfo.value)
        assert "Legal actions now" in message
        for legal in env.codec.legal_actions(env.battle):
            assert env.codec.describe(legal, env.battle) in message
        assert_unchanged(env, before)

    # The battle is still in sync: it continues exactly like one that never saw
    # the illegal actions.
    choose = masked_random(4)
    terminated = False
    while not terminated:
        action = choose(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        ref_obs, ref_reward, ref_terminated, _, ref_info = reference.step(action)
        assert not truncated
        np.testing.assert_array_equal(obs["observation"], ref_obs["observation"])
        assert reward == ref_reward and terminated == ref_terminated
    assert info["battle"] == ref_info["battle"]
    assert info["log"] == ref_info["log"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "action",
    [1.5, "1", None, [0, 1], object(), float("inf"), float("-inf"), float("nan"),
     np.float64("inf"), True, False, np.True_, np.array(True), np.array([1])],
    ids=repr,
)  # fmt: skip
def test_non_integer_actions(make_env, action):
    env = make_env("gen9randombattle")
    env.reset(seed=5)
    before = snapshot(env)
    with pytest.raises(IllegalActionError, match="integers"):
        env.step(action)
    assert_unchanged(env, before)


@pytest.mark.timeout(60)
def test_integer_like_actions_are_accepted(make_env):
    env = make_env("gen9randombattle")
    obs, _ = env.reset(seed=5)
    legal = int(np.flatnonzero(obs["action_mask"])[0])
    # Any integer type, and a float that is a whole number (array libraries hand actions
    # over as floats); bools are refused above.
    for action in (np.int64(legal), np.array(legal), float(legal), np.float32(legal), legal):
        env.reset(seed=5)
        _, _, _, _, info = env.step(action)
        assert info["turn"] >= 1


@pytest.mark.timeout(60)
def test_illegal_team_preview_action(make_env):
    env = make_env("gen9ou", team_preview=True)
    _, info = env.reset(seed=1)
    assert info["battle"].teampreview
    before = snapshot(env)
    for action in range(8):  # moves are not legal at Team Preview
        with pytest.raises(IllegalActionError, match="lead with"):
            env.step(action)
    assert_unchanged(env, before)
    _, _, _, _, info = env.step(8)
    assert not info["battle"].teampreview


@pytest.mark.timeout(60)
def test_illegal_opponent_order_names_the_opponent(make_env):
    def stubborn(battle):
        # Switching to the Pokémon already on the field is never legal.
        from poke_env.player.battle_order import SingleBattleOrder

        return SingleBattleOrder(battle.active_pokemon)

    env = make_env("gen9randombattle", opponent=stubborn)
    obs, _ = env.reset(seed=2)
    with pytest.raises(IllegalActionError, match="opponent") as excinfo:
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert "Legal actions now" in str(excinfo.value)


@pytest.mark.timeout(60)
def test_unreadable_opponent_order(make_env):
    env = make_env("gen9randombattle", opponent=lambda battle: "tackle please")
    obs, _ = env.reset(seed=2)
    with pytest.raises(IllegalActionError, match="opponent"):
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
