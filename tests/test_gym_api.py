"""The Gymnasium API: env checker on every registered id, the README snippet."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from helpers import outcome_reward, play_episode

import pokegym
from pokegym.actions import N_ACTIONS
from pokegym.errors import PokegymError


def test_registered_ids():
    assert set(pokegym.ENV_IDS) == {
        "Showdown-Gen9OU",
        "Showdown-Gen9RandomBattle",
        "Showdown-Gen8RandomBattle",
        "Showdown-Gen91v1",
    }
    for env_id, (battle_format, _) in pokegym.ENV_IDS.items():
        spec = gym.spec(env_id)
        assert spec.entry_point == "pokegym.env:ShowdownEnv"
        assert spec.kwargs["battle_format"] == battle_format


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("env_id", sorted(pokegym.ENV_IDS))
def test_check_env(env_id):
    env = gym.make(env_id)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
    finally:
        env.close()


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_readme_snippet_without_warnings():
    """The README's quickstart, line for line."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gym.make("Showdown-Gen9RandomBattle", opponent="max_power")
        try:
            obs, info = env.reset(seed=7)
            assert env.observation_space.contains(obs)
            obs, reward, terminated, truncated, info = env.step(
                env.action_space.sample(mask=obs["action_mask"])
            )
            assert env.observation_space.contains(obs)
            assert reward == 0.0
            assert not terminated and not truncated
            assert info["turn"] >= 1
            assert info["battle"].active_pokemon is not None
        finally:
            env.close()


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_full_battle_through_gym_make_without_warnings():
    """The passive checker and order enforcer of gym.make stay silent over a battle."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gym.make("Showdown-Gen9RandomBattle")
        try:
            episode = play_episode(env, seed=11)
        finally:
            env.close()
    assert episode.terminated and not episode.truncated
    assert episode.rewards[-1] == outcome_reward(episode.final_info) != 0.0


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_unmasked_sample_is_legal(make_env):
    """``action_space.sample()`` without a mask keeps a battle going (legal actions only)."""
    env = make_env("gen9randombattle")
    env.action_space.seed(3)
    obs, _ = env.reset(seed=3)
    for _ in range(2_000):
        action = env.action_space.sample()
        assert obs["action_mask"][action] == 1
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    else:
        pytest.fail("the battle did not end")
    # The battle is over: no legal mask, so sample() falls back to the plain space.
    assert 0 <= env.action_space.sample() < N_ACTIONS


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_step_before_reset_and_after_end(make_env):
    env = make_env("gen9randombattle")
    with pytest.raises(PokegymError, match="reset"):
        env.step(0)
    episode = play_episode(env, seed=2)
    assert episode.terminated
    with pytest.raises(PokegymError, match="reset"):
        env.step(int(np.flatnonzero(episode.observations[-2]["action_mask"])[0]))


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_max_turns_truncates(make_env):
    env = make_env("gen9randombattle", max_turns=3)
    episode = play_episode(env, seed=5)
    assert episode.truncated and not episode.terminated
    assert episode.final_info["turn"] == 3
    assert all(r == 0.0 for r in episode.rewards)


@pytest.mark.slow
def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="max_turns"):
        pokegym.ShowdownEnv("gen9randombattle", max_turns=0)
    with pytest.raises(ValueError, match="log_battles"):
        pokegym.ShowdownEnv("gen9randombattle", log_battles="everything")
    with pytest.raises(ValueError, match="render_mode"):
        pokegym.ShowdownEnv("gen9randombattle", render_mode="rgb_array")
    with pytest.raises(ValueError, match="backend"):
        pokegym.ShowdownEnv("gen9randombattle", backend="cloud")
    with pytest.raises(ValueError, match="reward"):
        pokegym.ShowdownEnv("gen9randombattle", reward="elo")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_single_env_trains_with_sb3_maskable_ppo():
    """SB3's DummyVecEnv deep-copies infos every step: the live battle comes back as is."""
    import copy

    from sb3_contrib import MaskablePPO

    env = gym.make("Showdown-Gen9RandomBattle")
    try:
        _, info = env.reset(seed=0)
        assert copy.deepcopy(info)["battle"] is info["battle"]
        model = MaskablePPO("MultiInputPolicy", env, n_steps=32, batch_size=32, seed=0)
        model.learn(64)
        assert model.num_timesteps >= 64
    finally:
        env.close()
