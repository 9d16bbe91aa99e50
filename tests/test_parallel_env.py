"""The two-player PettingZoo ParallelEnv (self-play)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from pokegym.actions import WAIT
from pokegym.errors import IllegalActionError
from pokegym.parallel_env import AGENTS, ShowdownParallelEnv

# Every test here plays real battles or starts Node (`pytest -m "not slow"` skips them).
pytestmark = pytest.mark.slow


def play_parallel(env: ShowdownParallelEnv, seed: int, action_seed: int):
    """One self-play battle with seeded random legal actions; returns its trace."""
    rng = np.random.default_rng(action_seed)
    obs, infos = env.reset(seed=seed)
    trace = {"obs": [obs], "rewards": [], "waits": 0, "infos": infos}
    for _ in range(2_000):
        actions = {}
        for agent in env.agents:
            mask = obs[agent]["action_mask"]
            assert mask.any(), f"{agent} has no legal action"
            if mask[WAIT]:
                # A waiting player may only wait.
                assert mask.sum() == 1
                trace["waits"] += 1
            else:
                assert not infos[agent]["battle"].finished
            actions[agent] = int(rng.choice(np.flatnonzero(mask)))
        obs, rewards, terminations, truncations, infos = env.step(actions)
        trace["obs"].append(obs)
        trace["rewards"].append(rewards)
        if not env.agents:
            trace["terminations"] = terminations
            trace["truncations"] = truncations
            trace["infos"] = infos
            return trace
    raise AssertionError("the battle did not end")


@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("battle_format", "options"),
    [
        ("gen9randombattle", {}),
        ("gen9ou", {}),
        ("gen9ou", {"team_preview": True}),
    ],
    ids=["gen9randombattle", "gen9ou", "gen9ou-team-preview"],
)
def test_parallel_api(battle_format, options):
    env = ShowdownParallelEnv(battle_format, **options)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            parallel_api_test(env, num_cycles=2_000)
        # num_cycles is far above a battle's length: the test played battles to the end.
        assert env.agents == []
    finally:
        env.close()


@pytest.mark.timeout(120)
def test_self_play_battle_is_zero_sum_and_waits_are_forced():
    env = ShowdownParallelEnv("gen9randombattle")
    try:
        waits = 0
        for seed in (4, 5):
            trace = play_parallel(env, seed=seed, action_seed=seed)
            final = trace["rewards"][-1]
            assert sorted(final.values()) == [-1.0, 1.0]
            assert all(trace["terminations"].values())
            assert not any(trace["truncations"].values())
            for rewards in trace["rewards"][:-1]:
                assert rewards == dict.fromkeys(AGENTS, 0.0)
            won = [trace["infos"][agent]["won"] for agent in AGENTS]
            assert sorted(won) == [False, True]
            assert final[AGENTS[won.index(True)]] == 1.0
            waits += trace["waits"]
        # Random play faints Pokémon; the survivor's side then waits for a replacement.
        assert waits > 0
    finally:
        env.close()


@pytest.mark.timeout(120)
def test_team_preview_is_a_decision_of_both_players():
    env = ShowdownParallelEnv("gen9ou", team_preview=True)
    try:
        obs, infos = env.reset(seed=8)
        for agent in AGENTS:
            mask = obs[agent]["action_mask"]
            assert infos[agent]["battle"].teampreview
            assert list(np.flatnonzero(mask)) == list(range(8, 14))
        # player_0 leads with its 3rd Pokémon, player_1 with its 5th.
        leads = {AGENTS[0]: 10, AGENTS[1]: 12}
        team_species = {
            agent: [mon.species for mon in infos[agent]["battle"].team.values()] for agent in AGENTS
        }
        obs, _, _, _, infos = env.step(leads)
        for agent, action in leads.items():
            battle = infos[agent]["battle"]
            assert not battle.teampreview
            assert battle.active_pokemon.species == team_species[agent][action - 8]
    finally:
        env.close()


@pytest.mark.timeout(120)
def test_parallel_env_is_deterministic():
    first = ShowdownParallelEnv("gen9randombattle")
    second = ShowdownParallelEnv("gen9randombattle")
    try:
        a = play_parallel(first, seed=21, action_seed=1)
        b = play_parallel(second, seed=21, action_seed=1)
        assert len(a["obs"]) == len(b["obs"])
        for obs_a, obs_b in zip(a["obs"], b["obs"], strict=True):
            for agent in AGENTS:
                np.testing.assert_array_equal(
                    obs_a[agent]["observation"], obs_b[agent]["observation"]
                )
                np.testing.assert_array_equal(
                    obs_a[agent]["action_mask"], obs_b[agent]["action_mask"]
                )
        assert a["rewards"] == b["rewards"]
        for agent in AGENTS:
            assert a["infos"][agent]["battle"] == b["infos"][agent]["battle"]
    finally:
        first.close()
        second.close()


@pytest.mark.timeout(60)
def test_parallel_illegal_action_sends_nothing():
    env = ShowdownParallelEnv("gen9randombattle")
    try:
        obs, infos = env.reset(seed=3)
        battle = infos[AGENTS[0]]["battle"]
        history = battle.protocol_history.digest()
        illegal = int(np.flatnonzero(obs[AGENTS[0]]["action_mask"] == 0)[0])
        legal = {agent: int(np.flatnonzero(obs[agent]["action_mask"])[0]) for agent in AGENTS}
        with pytest.raises(IllegalActionError, match="Legal actions now"):
            env.step({AGENTS[0]: illegal, AGENTS[1]: legal[AGENTS[1]]})
        with pytest.raises(IllegalActionError, match="must act"):
            env.step({AGENTS[1]: legal[AGENTS[1]]})
        assert battle.protocol_history.digest() == history
        assert battle.turn == 1
        _, _, _, _, infos = env.step(legal)
        assert infos[AGENTS[0]]["battle"].turn >= 1
        assert battle.protocol_history.digest() != history
    finally:
        env.close()


@pytest.mark.timeout(60)
def test_parallel_battle_log_in_final_infos():
    """``log_battles`` (a BattleSetup option, documented as ``info["log"]``) reaches the infos."""
    env = ShowdownParallelEnv("gen9randombattle", log_battles="spectator")
    try:
        trace = play_parallel(env, seed=6, action_seed=6)
        for agent in AGENTS:
            log = trace["infos"][agent].get("log")
            assert log is not None, "log_battles='spectator' but no info['log'] at the end"
            assert "|win|" in log
    finally:
        env.close()
