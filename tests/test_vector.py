"""ShowdownVectorEnv: batched battles, both autoreset modes, seeding."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from pokegym.actions import N_ACTIONS, WAIT
from pokegym.observation import OBSERVATION_SIZE, ObservationEncoder
from pokegym.vector import ShowdownVectorEnv

N_ENVS = 4


def random_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    return np.array([int(rng.choice(np.flatnonzero(mask))) for mask in masks])


@pytest.fixture
def make_vector():
    envs = []

    def factory(*args, **kwargs) -> ShowdownVectorEnv:
        kwargs.setdefault("num_simulators", 2)
        env = ShowdownVectorEnv(*args, **kwargs)
        envs.append(env)
        return env

    yield factory
    for env in envs:
        env.close()


def check_batch(env: ShowdownVectorEnv, obs: dict[str, np.ndarray]) -> None:
    assert env.observation_space.contains(obs)
    assert obs["observation"].shape == (env.num_envs, OBSERVATION_SIZE)
    assert obs["action_mask"].shape == (env.num_envs, N_ACTIONS)
    for i in range(env.num_envs):
        single = {key: value[i] for key, value in obs.items()}
        assert env.single_observation_space.contains(single)
    masks = env.action_masks()
    assert masks.shape == (env.num_envs, N_ACTIONS) and masks.dtype == bool
    np.testing.assert_array_equal(masks, obs["action_mask"].astype(bool))


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_next_step_autoreset(make_vector):
    env = make_vector(N_ENVS, "gen9randombattle", autoreset_mode="next_step")
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=10)
    check_batch(env, obs)
    assert (info["turn"] == 1).all()
    finished = np.zeros(N_ENVS, dtype=int)
    previous_done = np.zeros(N_ENVS, dtype=bool)
    for _ in range(3_000):
        masks = obs["action_mask"]
        # A finished battle's mask is "wait"; its action is ignored at the reset step.
        assert (masks[previous_done, WAIT] == 1).all()
        assert (masks[~previous_done].any(axis=1)).all()
        obs, rewards, terminated, truncated, info = env.step(random_actions(rng, masks))
        check_batch(env, obs)
        # The step after the end resets that battle: no reward, not done, a new battle.
        assert (rewards[previous_done] == 0).all()
        assert not terminated[previous_done].any() and not truncated[previous_done].any()
        assert (info["turn"][previous_done] == 1).all()
        done = terminated | truncated
        for i in np.flatnonzero(done):
            battle = info["battle"][i]
            assert battle.finished
            assert rewards[i] == (1.0 if battle.won else -1.0)
            assert info["_won"][i] and info["won"][i] == battle.won
        assert (rewards[~done & ~previous_done] == 0).all()
        finished += done
        previous_done = done
        if finished.min() >= 1:
            break
    else:
        pytest.fail("some battle never finished")
    assert "final_obs" not in info


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_same_step_autoreset(make_vector):
    env = make_vector(N_ENVS, "gen9randombattle", autoreset_mode="same_step")
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=20)
    finished = np.zeros(N_ENVS, dtype=int)
    for _ in range(3_000):
        obs, rewards, terminated, truncated, info = env.step(
            random_actions(rng, obs["action_mask"])
        )
        check_batch(env, obs)
        done = terminated | truncated
        if done.any():
            np.testing.assert_array_equal(info["_final_obs"], done)
            for i in np.flatnonzero(done):
                final_obs = info["final_obs"][i]
                assert env.single_observation_space.contains(final_obs)
                final_info = info["final_info"][i]
                assert final_info["battle"].finished
                # The final observation is the finished battle's: nothing left to do.
                assert list(np.flatnonzero(final_obs["action_mask"])) == [WAIT]
                np.testing.assert_array_equal(
                    final_obs["observation"], ObservationEncoder(gen=9).encode(final_info["battle"])
                )
                assert rewards[i] == (1.0 if final_info["won"] else -1.0)
                # The returned observation already belongs to the next battle.
                assert obs["action_mask"][i].any() and not obs["action_mask"][i][WAIT]
                assert not np.array_equal(final_obs["observation"], obs["observation"][i])
        else:
            assert "final_obs" not in info
        finished += done
        if finished.min() >= 1:
            break
    else:
        pytest.fail("some battle never finished")


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_same_step_infos_describe_the_returned_observation(make_vector):
    """After a same-step autoreset, ``infos`` (turn, battle) belong to the new battle,
    like the observation; the finished battle's info is in ``final_info``."""
    env = make_vector(2, "gen9randombattle", autoreset_mode="same_step")
    rng = np.random.default_rng(2)
    obs, _ = env.reset(seed=30)
    for _ in range(3_000):
        obs, _, terminated, truncated, info = env.step(random_actions(rng, obs["action_mask"]))
        done = terminated | truncated
        if done.any():
            for i in np.flatnonzero(done):
                assert info["final_info"][i]["battle"].finished
                assert not info["battle"][i].finished
                assert info["turn"][i] == 1
            return
    pytest.fail("no battle finished")


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_vector_seeding_is_reproducible(make_vector):
    def run(seed: int) -> list[np.ndarray]:
        env = make_vector(N_ENVS, "gen9randombattle", num_simulators=2)
        rng = np.random.default_rng(5)
        obs, _ = env.reset(seed=seed)
        trace = [obs["observation"].copy()]
        for _ in range(25):
            obs, rewards, *_ = env.step(random_actions(rng, obs["action_mask"]))
            trace.append(obs["observation"].copy())
            trace.append(rewards.copy())
        return trace

    a, b, c = run(3), run(3), run(4)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c[0])
    # Each battle of one vector env is a different battle.
    assert len({row.tobytes() for row in a[0]}) == N_ENVS


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_vector_gen9ou_with_team_preview(make_vector):
    env = make_vector(2, "gen9ou", team_preview=True, opponent="max_power")
    obs, info = env.reset(seed=1)
    assert all(battle.teampreview for battle in info["battle"])
    for mask in obs["action_mask"]:
        assert list(np.flatnonzero(mask)) == list(range(8, 14))
    teams = [[mon.species for mon in battle.team.values()] for battle in info["battle"]]
    obs, _, _, _, info = env.step(np.array([8, 13]))
    check_batch(env, obs)
    assert info["battle"][0].active_pokemon.species == teams[0][0]
    assert info["battle"][1].active_pokemon.species == teams[1][5]


def test_vector_argument_checks():
    with pytest.raises(ValueError, match="num_envs"):
        ShowdownVectorEnv(0)
    with pytest.raises(ValueError, match="autoreset_mode"):
        ShowdownVectorEnv(1, autoreset_mode=AutoresetMode.DISABLED)
    with pytest.raises(ValueError):
        ShowdownVectorEnv(1, autoreset_mode="sometimes")


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_vector_illegal_action_names_the_battle(make_vector):
    from pokegym.errors import IllegalActionError

    env = make_vector(2, "gen9randombattle", num_simulators=1)
    obs, _ = env.reset(seed=2)
    actions = np.array([int(np.flatnonzero(m)[0]) for m in obs["action_mask"]])
    actions[1] = WAIT
    with pytest.raises(IllegalActionError, match="Battle 1"):
        env.step(actions)
    with pytest.raises(ValueError, match="expected 2 actions"):
        env.step(np.array([0]))
