"""Training throughput of MaskablePPO next to the bare vector env, measured in one run.

pokegym bench ppo_throughput [--quick] [--n-envs 24] [--profile]

Two contenders on gen9randombattle against the ``random`` opponent, same number of
battles side by side, same simulator processes per core:

* ``env``   -- the bare :class:`~pokegym.vector.ShowdownVectorEnv` stepped with
  uniformly random legal actions (the ceiling for any learner on this machine);
* ``train`` -- ``MaskablePPO.learn`` with the training configuration of
  :mod:`train.ppo` (features extractor, masks, rollouts and updates), counted in
  environment steps per second of wall time, updates included.

Rounds are interleaved (env, train, env, ...) because the machine is shared and
noisy; medians are reported. For the training rounds the share of wall time spent
in the PPO updates (as opposed to collecting rollouts) is reported too.
``--profile`` adds a cProfile summary of one training round (where the time goes).
The env rounds also report the CPU time per step of this Python process and of the
simulator (Node) processes: on a shared machine the wall-clock rates move with the
other jobs, the CPU per step much less, and it says which side bounds the rate.
The last line is::

    train_steps_per_s=... env_steps_per_s=... ratio=... update_share=... target=1000
        env_python_us_per_step=... env_simulator_us_per_step=...
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
from typing import Any

import numpy as np

from pokegym.vector import ShowdownVectorEnv

TARGET = 1000.0
FORMAT = "gen9randombattle"


def _process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) a process has used, from /proc; None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _env_round(
    env: Any, obs: dict[str, np.ndarray], seconds: float, rng: Any
) -> tuple[float, Any, float, float | None]:
    """Step the bare env for ``seconds``: steps/s, the last observation, and the CPU
    time per step of this Python process and of the simulator processes together.

    On a shared machine the wall-clock rate moves with the other jobs; the CPU time
    per step moves much less and says which side (Python or Node) bounds the rate.
    """
    pids = [sim.pid for sim in env.simulators if sim.pid is not None]
    node_before = [_process_cpu(pid) for pid in pids]
    python_before = time.process_time()
    steps = 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        actions = [int(rng.choice(np.flatnonzero(mask))) for mask in obs["action_mask"]]
        obs, *_ = env.step(actions)
        steps += env.num_envs
    wall = time.perf_counter() - began
    python_us = 1e6 * (time.process_time() - python_before) / steps
    node_after = [_process_cpu(pid) for pid in pids]
    node_us = None
    spent = [
        after - before
        for before, after in zip(node_before, node_after, strict=True)
        if before is not None and after is not None
    ]
    if pids and len(spent) == len(pids):
        node_us = 1e6 * sum(spent) / steps
    return steps / wall, obs, python_us, node_us


def _rollout_timer() -> Any:
    """A callback that adds up the seconds ``learn`` spends collecting rollouts."""
    from stable_baselines3.common.callbacks import BaseCallback

    class RolloutTimer(BaseCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.collect = 0.0
            self.began = 0.0

        def _on_rollout_start(self) -> None:
            self.began = time.perf_counter()

        def _on_rollout_end(self) -> None:
            self.collect += time.perf_counter() - self.began

        def _on_step(self) -> bool:
            return True

    return RolloutTimer()


def _report(
    env_rates: list[float],
    train_rates: list[float],
    update_shares: list[float],
    python_cpu: list[float],
    node_cpu: list[float],
) -> None:
    """The medians over the rounds, and the last line the docstring shows."""
    env_rate = statistics.median(env_rates)
    train_rate = statistics.median(train_rates)
    update_share = statistics.median(update_shares)
    print(
        f"median: env {env_rate:.1f} steps/s, train {train_rate:.1f} steps/s "
        f"({train_rate / env_rate:.2f}x of the bare env; target {TARGET:.0f} steps/s "
        f"{'met' if train_rate >= TARGET else 'not met'})"
    )
    python_us = statistics.median(python_cpu)
    node_us = statistics.median(node_cpu) if node_cpu else float("nan")
    print(
        f"median env CPU per step: Python {python_us:.0f} us, simulators {node_us:.0f} us "
        f"(the simulators' share of the env's CPU: {node_us / (python_us + node_us):.0%})"
    )
    print(
        f"train_steps_per_s={train_rate:.1f} env_steps_per_s={env_rate:.1f} "
        f"ratio={train_rate / env_rate:.3f} update_share={update_share:.3f} target={TARGET:.0f} "
        f"env_python_us_per_step={python_us:.0f} env_simulator_us_per_step={node_us:.0f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 short rounds (about a minute)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds")
    parser.add_argument("--seconds", type=float, default=None, help="seconds per env round")
    parser.add_argument("--n-envs", type=int, default=24, help="battles side by side")
    parser.add_argument("--profile", action="store_true", help="cProfile one training round")
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 5)
    seconds = args.seconds or (6.0 if args.quick else 15.0)

    import torch

    from train.ppo import PPOConfig, make_model, make_vec_env  # the rl extra (stable-baselines3)

    if args.n_envs < 1:
        parser.error("--n-envs is the number of battles side by side (1 or more)")
    # The training configuration's batch, or one rollout where fewer battles make less.
    batch = min(PPOConfig.batch_size, PPOConfig.n_steps * args.n_envs)
    config = PPOConfig(
        steps=10**9, n_envs=args.n_envs, out="/tmp/pokegym-bench-train", curriculum="random@0",
        self_play=0.0, eval_every=0, checkpoint_every=0, final_eval=False, tensorboard=False,
        verbose=0, batch_size=batch,
    )  # fmt: skip
    torch.set_num_threads(config.torch_threads)
    print(
        f"{FORMAT}: {args.n_envs} battles, opponent random, {rounds} interleaved rounds; "
        f"MaskablePPO n_steps={config.n_steps} batch={config.batch_size} "
        f"epochs={config.n_epochs}"
    )

    bare = ShowdownVectorEnv(args.n_envs, FORMAT, opponent="random", reward=config.reward)
    obs, _ = bare.reset(seed=1)
    rng = np.random.default_rng(0)
    venv, _, _ = make_vec_env(config)
    model = make_model(config, venv)
    rollout = config.n_steps * config.n_envs

    # Warm-up: caches, Node's JIT, torch's first passes.
    _, obs, _, _ = _env_round(bare, obs, 2.0, rng)
    model.learn(rollout, reset_num_timesteps=False)

    env_rates: list[float] = []
    python_cpu: list[float] = []
    node_cpu: list[float] = []
    train_rates: list[float] = []
    update_shares: list[float] = []
    rollouts = max(1, round(seconds * 300 / rollout))
    try:
        for r in range(rounds):
            rate, obs, python_us, node_us = _env_round(bare, obs, seconds, rng)
            env_rates.append(rate)
            python_cpu.append(python_us)
            if node_us is not None:
                node_cpu.append(node_us)
            timer = _rollout_timer()
            before = model.num_timesteps
            began = time.perf_counter()
            model.learn(rollout * rollouts, reset_num_timesteps=False, callback=timer)
            wall = time.perf_counter() - began
            train_rates.append((model.num_timesteps - before) / wall)
            update_shares.append(1.0 - timer.collect / wall)
            node_text = f", simulators {node_us:.0f}" if node_us is not None else ""
            print(
                f"round {r + 1}: env {env_rates[-1]:7.1f} steps/s   train {train_rates[-1]:7.1f} "
                f"steps/s ({rollouts} rollouts, updates {update_shares[-1]:.0%} of the time); "
                f"env CPU per step: Python {python_us:.0f} us{node_text} us",
                flush=True,
            )
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            model.learn(rollout * rollouts, reset_num_timesteps=False)
            profiler.disable()
            stats = pstats.Stats(profiler)
            stats.sort_stats("tottime").print_stats(15)
    finally:
        bare.close()
        venv.close()

    _report(env_rates, train_rates, update_shares, python_cpu, node_cpu)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
