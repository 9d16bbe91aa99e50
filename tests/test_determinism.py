"""Seeded battles on the embedded simulator replay exactly; other seeds differ."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import Episode, play_episode

# Every test here plays real battles or starts Node (`pytest -m "not slow"` skips them).
pytestmark = pytest.mark.slow


def assert_same_episode(a: Episode, b: Episode) -> None:
    assert a.actions == b.actions
    assert a.rewards == b.rewards
    assert len(a.observations) == len(b.observations)
    for obs_a, obs_b in zip(a.observations, b.observations, strict=True):
        np.testing.assert_array_equal(obs_a["observation"], obs_b["observation"])
        np.testing.assert_array_equal(obs_a["action_mask"], obs_b["action_mask"])
    assert a.final_info["battle"] == b.final_info["battle"]
    assert a.final_info["log"] == b.final_info["log"]
    assert a.final_info["won"] == b.final_info["won"]


@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("battle_format", "options"),
    [
        ("gen9randombattle", {}),
        ("gen8randombattle", {}),
        ("gen9ou", {"team_preview": True}),
    ],
    ids=["gen9randombattle", "gen8randombattle", "gen9ou-team-preview"],
)
def test_two_envs_same_seed_same_battle(make_env, battle_format, options):
    first = make_env(battle_format, log_battles="spectator", **options)
    second = make_env(battle_format, log_battles="spectator", **options)
    a = play_episode(first, seed=1234, action_seed=99)
    b = play_episode(second, seed=1234, action_seed=99)
    assert a.terminated and b.terminated
    assert_same_episode(a, b)
    assert "|win|" in a.final_info["log"]


@pytest.mark.timeout(180)
def test_reset_with_same_seed_replays(make_env):
    env = make_env("gen9randombattle", log_battles="spectator", opponent="max_power")
    a = play_episode(env, seed=77, action_seed=5)
    # Another battle in between must not leak into the replay.
    play_episode(env, seed=78, action_seed=6)
    b = play_episode(env, seed=77, action_seed=5)
    assert_same_episode(a, b)


@pytest.mark.timeout(180)
def test_different_seeds_give_different_battles(make_env):
    env = make_env("gen9randombattle", log_battles="spectator")
    logs, battles, teams = [], [], []
    for seed in (1, 2, 3):
        episode = play_episode(env, seed=seed, action_seed=0)
        battle = episode.final_info["battle"]
        logs.append(episode.final_info["log"])
        battles.append(battle)
        teams.append(tuple(mon.species for mon in battle.team.values()))
    assert len(set(logs)) == 3
    assert len(set(teams)) == 3
    assert battles[0] != battles[1] and battles[1] != battles[2]


@pytest.mark.timeout(120)
def test_different_seeds_draw_different_user_teams(make_env):
    """In formats with user teams the seed also picks the teams from the pool."""
    env = make_env("gen9ou")
    drawn = set()
    for seed in range(6):
        _, info = env.reset(seed=seed)
        drawn.add(tuple(mon.species for mon in info["battle"].team.values()))
    assert len(drawn) > 1
    # And the same seed draws the same team again.
    _, first = env.reset(seed=4)
    species = tuple(mon.species for mon in first["battle"].team.values())
    _, again = env.reset(seed=4)
    assert tuple(mon.species for mon in again["battle"].team.values()) == species
