"""A dead or stalled simulator raises promptly, and the next reset() recovers.

"Promptly" is checked by the error's type and message, never by a stopwatch: a dead
process is noticed at once (SimulatorError), while waiting for it would end in
BattleTimeoutError after the simulator's limit (kept far above the test's own timeout
where it matters); a stall ends with BattleTimeoutError naming the limit it waited.
"""

from __future__ import annotations

import os
import signal

import gymnasium as gym
import numpy as np
import pytest
from helpers import play_episode

from pokegym.env import ShowdownEnv
from pokegym.errors import BattleTimeoutError, SimulatorError
from pokegym.showdown.simulator import shared_simulator
from pokegym.vector import ShowdownVectorEnv

# Every test here plays real battles or starts Node (`pytest -m "not slow"` skips them).
pytestmark = pytest.mark.slow


def first_legal(obs) -> int:
    return int(np.flatnonzero(obs["action_mask"])[0])


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@pytest.mark.timeout(60)
def test_crash_command_mid_battle(private_simulator):
    sim = private_simulator(timeout=10)
    env = ShowdownEnv("gen9randombattle", simulator=sim)
    obs, _ = env.reset(seed=1)
    obs, *_ = env.step(first_legal(obs))
    old_pid = sim.pid
    with pytest.raises(SimulatorError, match="exited"):
        sim.call([["crash"]])
    assert not sim.is_running()

    with pytest.raises(SimulatorError, match="reset"):
        env.step(first_legal(obs))

    # The next reset starts a new process; battles work again and replay as before.
    episode = play_episode(env, seed=1)
    assert sim.is_running() and sim.pid != old_pid
    assert episode.terminated and episode.rewards[-1] in (-1.0, 1.0)
    env.close()


@pytest.mark.timeout(60)
def test_killed_process_mid_battle(private_simulator):
    sim = private_simulator(timeout=10)
    env = ShowdownEnv("gen9randombattle", simulator=sim)
    obs, _ = env.reset(seed=2)
    old_pid = sim.pid
    os.kill(old_pid, signal.SIGKILL)
    with pytest.raises(SimulatorError):
        env.step(first_legal(obs))
    obs, info = env.reset(seed=2)
    assert sim.pid != old_pid and info["turn"] == 1
    _, _, _, _, info = env.step(first_legal(obs))
    assert info["turn"] >= 1
    env.close()


@pytest.mark.timeout(60)
def test_recovered_battle_replays_the_seeded_battle(private_simulator):
    """A crash does not disturb determinism: the seeded battle after recovery is the same."""
    sim = private_simulator(timeout=10)
    env = ShowdownEnv("gen9randombattle", simulator=sim, log_battles="spectator")
    before = play_episode(env, seed=40, action_seed=1)
    os.kill(sim.pid, signal.SIGKILL)
    after = play_episode(env, seed=40, action_seed=1)
    assert before.final_info["log"] == after.final_info["log"]
    assert before.rewards == after.rewards
    env.close()


@pytest.mark.timeout(60)
def test_stalled_simulator_times_out(private_simulator):
    # A cold Node process needs more than a second for its first battle (it loads
    # Showdown's data); start the battle with a generous limit, then make it tiny.
    sim = private_simulator(timeout=60)
    env = ShowdownEnv("gen9randombattle", simulator=sim)
    obs, _ = env.reset(seed=3)
    sim.timeout = 1
    stalled_pid = sim.pid
    os.kill(stalled_pid, signal.SIGSTOP)
    try:
        with pytest.raises(BattleTimeoutError, match=r"within 1 s .*stalled"):
            env.step(first_legal(obs))
        # The stalled process was stopped for good.
        assert not sim.is_running()
        assert not pid_alive(stalled_pid)
    finally:
        if sim.pid == stalled_pid:  # still ours and frozen: let it go
            os.kill(stalled_pid, signal.SIGCONT)
    # The next reset starts a fresh (cold) process: give it a normal limit again.
    sim.timeout = 60
    obs, info = env.reset(seed=3)
    assert sim.pid != stalled_pid and info["turn"] == 1
    _, _, _, _, info = env.step(first_legal(obs))
    assert info["turn"] >= 1
    env.close()


@pytest.mark.timeout(60)
def test_stalled_command_times_out_at_the_simulator(private_simulator):
    sim = private_simulator(timeout=30)
    os.kill(sim.pid, signal.SIGSTOP)
    with pytest.raises(BattleTimeoutError, match=r"within 0\.5 s"):
        sim.call([["ping"]], timeout=0.5)
    assert not sim.is_running()
    sim.ensure_running()
    assert sim.call([["ping"]]) == ["pong"]


@pytest.mark.timeout(120)
def test_vector_env_recovers_from_crashed_simulators():
    env = ShowdownVectorEnv(4, "gen9randombattle", num_simulators=2)
    try:
        obs, _ = env.reset(seed=5)
        actions = np.array([first_legal({"action_mask": m}) for m in obs["action_mask"]])
        obs, *_ = env.step(actions)
        for sim in env.simulators:
            with pytest.raises(SimulatorError):
                sim.call([["crash"]])
        with pytest.raises(SimulatorError):
            env.step(np.array([first_legal({"action_mask": m}) for m in obs["action_mask"]]))
        obs, info = env.reset(seed=5)
        assert all(sim.is_running() for sim in env.simulators)
        assert (info["turn"] == 1).all()
        for _ in range(5):
            actions = np.array([first_legal({"action_mask": m}) for m in obs["action_mask"]])
            obs, _, _, _, info = env.step(actions)
        assert (info["turn"] > 1).all()
    finally:
        env.close()


@pytest.mark.timeout(120)
def test_vector_env_recovers_from_a_killed_simulator():
    env = ShowdownVectorEnv(2, "gen9randombattle", num_simulators=1)
    try:
        obs, _ = env.reset(seed=6)
        os.kill(env.simulators[0].pid, signal.SIGKILL)
        with pytest.raises(SimulatorError):
            env.step(np.array([first_legal({"action_mask": m}) for m in obs["action_mask"]]))
        obs, info = env.reset(seed=6)
        assert (info["turn"] == 1).all()
        obs, *_ = env.step(np.array([first_legal({"action_mask": m}) for m in obs["action_mask"]]))
        assert env.observation_space.contains(obs)
    finally:
        env.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("own_simulator", [False, True], ids=["shared", "own"])
def test_the_env_timeout_applies_on_the_sim_backend(private_simulator, own_simulator):
    """``timeout=`` bounds every answer of the battle's simulator, the process-wide one
    included (it used to keep its own 60 s): a frozen simulator ends the step with
    BattleTimeoutError quoting the env's limit, and every later step() repeats that error
    instead of reporting a battle out of sync."""
    # Warm the simulator with a normal limit: a cold process loads Showdown's data first.
    sim = private_simulator(timeout=60) if own_simulator else shared_simulator()
    warm = ShowdownEnv("gen9randombattle", simulator=sim)
    warm.reset(seed=4)
    warm.close()
    if own_simulator:
        env = ShowdownEnv("gen9randombattle", timeout=3, simulator=sim)
    else:
        env = gym.make("Showdown-Gen9RandomBattle", timeout=3)
    obs, _ = env.reset(seed=4)
    frozen = sim.pid
    os.kill(frozen, signal.SIGSTOP)
    try:
        with pytest.raises(BattleTimeoutError, match="within 3 s") as first:
            env.step(first_legal(obs))
        assert not pid_alive(frozen)
        for _ in range(2):
            with pytest.raises(BattleTimeoutError, match=r"within 3 s.*reset") as again:
                env.step(first_legal(obs))
            assert str(first.value) in str(again.value)
    finally:
        if sim.pid == frozen:
            os.kill(frozen, signal.SIGCONT)
    obs, info = env.reset(seed=4)
    assert sim.pid != frozen and info["turn"] == 1
    env.close()


@pytest.mark.timeout(60)
def test_a_lost_battle_repeats_its_error_in_the_two_player_env(private_simulator):
    from pokegym.parallel_env import ShowdownParallelEnv

    sim = private_simulator(timeout=60)
    warm = ShowdownEnv("gen9randombattle", simulator=sim)  # a cold process loads its data
    warm.reset(seed=6)
    warm.close()
    env = ShowdownParallelEnv("gen9randombattle", simulator=sim, timeout=3)
    observations, _ = env.reset(seed=6)
    actions = {agent: first_legal(observations[agent]) for agent in env.agents}
    frozen = sim.pid
    os.kill(frozen, signal.SIGSTOP)
    try:
        with pytest.raises(BattleTimeoutError, match="within 3 s"):
            env.step(actions)
        with pytest.raises(BattleTimeoutError, match=r"within 3 s.*reset"):
            env.step(actions)
    finally:
        if sim.pid == frozen:
            os.kill(frozen, signal.SIGCONT)
    env.close()
