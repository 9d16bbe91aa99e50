"""Rewards: win/loss at the end only; the shaped reward telescopes."""

from __future__ import annotations

import pytest
from helpers import play_episode

from pokegym.rewards import ShapedReward, WinLossReward, make_reward, outcome


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("battle_format", ["gen9randombattle", "gen9ou"])
def test_win_loss_reward(make_env, battle_format):
    env = make_env(battle_format)
    outcomes = set()
    for seed in range(4):
        episode = play_episode(env, seed=seed)
        assert episode.terminated
        assert all(r == 0.0 for r in episode.rewards[:-1])
        won = episode.final_info["won"]
        expected = 1.0 if won else (-1.0 if won is False else 0.0)
        assert episode.rewards[-1] == expected
        outcomes.add(episode.rewards[-1])
    assert outcomes <= {-1.0, 0.0, 1.0}


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_max_power_opponent_beats_random_agent_mostly(make_env):
    """The sign of the reward follows the battle: a random agent loses to max power."""
    env = make_env("gen9randombattle", opponent="max_power")
    final = [play_episode(env, seed=seed).rewards[-1] for seed in range(6)]
    assert final.count(-1.0) > final.count(1.0)


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("battle_format", "team_size"),
    [("gen9randombattle", 6), ("gen9ou", 6), ("gen91v1factory", 1)],
)
def test_shaped_reward_telescopes(make_env, battle_format, team_size):
    env = make_env(battle_format, reward="shaped")
    reference = ShapedReward(team_size=team_size)
    for seed in (3, 4):
        potentials = []

        def on_state(obs, info, potentials=potentials):
            potentials.append(reference.potential(info["battle"]))

        episode = play_episode(env, seed=seed, on_state=on_state)
        battle = episode.final_info["battle"]
        potentials.append(reference.potential(battle))
        assert len(potentials) == len(episode.rewards) + 1
        # Each step pays the change of potential (plus the outcome at the end) ...
        for t, reward in enumerate(episode.rewards):
            bonus = outcome(battle) if t == len(episode.rewards) - 1 else 0.0
            assert reward == pytest.approx(potentials[t + 1] - potentials[t] + bonus, abs=1e-9)
        # ... so the sum telescopes: Φ(end) − Φ(start) + outcome.
        assert sum(episode.rewards) == pytest.approx(
            potentials[-1] - potentials[0] + outcome(battle), abs=1e-9
        )
        assert outcome(battle) in (-1.0, 1.0)
    if battle_format == "gen9randombattle":
        # At the first decision everyone is at full HP: Φ(start) = 0.
        _, info = env.reset(seed=3)
        assert reference.potential(info["battle"]) == pytest.approx(0.0)


def test_make_reward():
    assert isinstance(make_reward("win_loss"), WinLossReward)
    shaped = make_reward("shaped", team_size=3)
    assert isinstance(shaped, ShapedReward) and shaped.team_size == 3
    with pytest.raises(ValueError, match="Unknown reward"):
        make_reward("elo")
    with pytest.raises(TypeError, match="reset"):
        make_reward(lambda battle: 0.0)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_custom_reward_function(make_env):
    class TurnCounter:
        def __init__(self):
            self.resets = 0

        def reset(self, battle):
            self.resets += 1

        def __call__(self, battle):
            return float(battle.turn)

    reward = TurnCounter()
    env = make_env("gen9randombattle", reward=reward)
    episode = play_episode(env, seed=1)
    assert reward.resets == 1
    assert episode.rewards[-1] == float(episode.final_info["turn"])
