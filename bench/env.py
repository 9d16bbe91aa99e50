"""``pokegym bench env``: environment throughput against poke-env, measured in one run.

Contenders, all playing gen9randombattle with a uniformly random legal agent
against poke-env-style random opponents and the same observation encoder:

* ``sim``     -- :class:`~pokegym.env.ShowdownEnv` on the embedded simulator;
* ``vec``     -- :class:`~pokegym.vector.ShowdownVectorEnv` (battles pipelined
  over one simulator process per core);
* ``server``  -- :class:`~pokegym.env.ShowdownEnv` on a local Showdown server;
* ``pokeenv`` -- poke-env's own ``SinglesEnv`` + ``SingleAgentWrapper`` on the same
  local server (the baseline).

The machine is shared and noisy, so contenders run in interleaved rounds
(sim, vec, server, pokeenv, sim, ...) and medians are reported. Also measured:
64 battles at once on the vector env (errors counted), memory over many battles
in a row (growth of Python + Node resident memory between the first 10 % and
the end), and peak memory.
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from poke_env.environment import SingleAgentWrapper, SinglesEnv
from poke_env.player import RandomPlayer
from poke_env.ps_client import AccountConfiguration, ServerConfiguration
from tqdm import tqdm

from pokegym.env import ShowdownEnv
from pokegym.observation import ObservationEncoder, observation_space
from pokegym.rewards import outcome
from pokegym.showdown.server import LocalServer
from pokegym.vector import ShowdownVectorEnv

FORMAT = "gen9randombattle"


@dataclass
class BenchConfig:
    """Sizes of one benchmark run."""

    rounds: int = 5
    """Interleaved measurement rounds per contender (medians over these)."""
    seconds: float = 10.0
    """Wall time measured per contender per round."""
    warmup_steps: int = 300
    """Steps played before measuring (JIT warm-up of Node, caches)."""
    vec_envs: int = 16
    """Battles in the vector env."""
    concurrent: int = 64
    """Battles run at once in the concurrency check."""
    memory_battles: int = 2000
    """Battles in a row for the memory-growth check."""

    @classmethod
    def quick(cls) -> BenchConfig:
        return cls(rounds=3, seconds=4.0, warmup_steps=150, memory_battles=300)


@dataclass
class Contender:
    name: str
    make: Callable[[], Any]
    step_loop: Callable[[Any, float], tuple[int, int]]
    results: list[float] = field(default_factory=list)
    battles: list[float] = field(default_factory=list)
    env: Any = None


def _rss(pid: int | None = None) -> int:
    path = f"/proc/{pid or 'self'}/status"
    try:
        with open(path) as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


def _single_loop(
    env: Any, seconds: float, as_action: Callable[[int], Any] = int
) -> tuple[int, int]:
    """Random legal actions for ``seconds``; returns (steps, finished battles)."""
    rng = np.random.default_rng(0)
    obs = env._bench_obs
    steps = battles = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        legal = np.flatnonzero(obs["action_mask"])
        obs, _, terminated, truncated, _ = env.step(as_action(legal[rng.integers(len(legal))]))
        steps += 1
        if terminated or truncated:
            battles += 1
            obs, _ = env.reset()
    env._bench_obs = obs
    return steps, battles


def _vector_loop(env: Any, seconds: float) -> tuple[int, int]:
    rng = np.random.default_rng(0)
    obs = env._bench_obs
    steps = battles = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        actions = [int(rng.choice(np.flatnonzero(mask))) for mask in obs["action_mask"]]
        obs, _, terminated, truncated, _ = env.step(actions)
        steps += env.num_envs
        battles += int(np.sum(terminated | truncated))
    env._bench_obs = obs
    return steps, battles


def _make_sim() -> Any:
    env = ShowdownEnv(FORMAT, opponent="random")
    env._bench_obs, _ = env.reset(seed=1)
    return env


def _make_vec(n: int) -> Callable[[], Any]:
    def make() -> Any:
        env = ShowdownVectorEnv(n, FORMAT, opponent="random")
        env._bench_obs, _ = env.reset(seed=1)
        return env

    return make


def _make_server(url: str) -> Callable[[], Any]:
    def make() -> Any:
        env = ShowdownEnv(FORMAT, opponent="random", backend="server", server_url=url)
        env._bench_obs, _ = env.reset(seed=1)
        return env

    return make


def _make_pokeenv(url: str) -> Callable[[], Any]:
    def make() -> Any:
        encoder = ObservationEncoder(9)
        box = observation_space()["observation"]

        class Baseline(SinglesEnv):  # poke-env's env with the same observation work
            def __init__(self, **kwargs: Any):
                super().__init__(**kwargs)
                self.observation_spaces = {agent: box for agent in self.possible_agents}

            def calc_reward(self, battle: Any) -> float:
                return outcome(battle)

            def embed_battle(self, battle: Any) -> Any:
                return encoder.encode(battle)

        config = ServerConfiguration(url, "https://play.pokemonshowdown.com/action.php?")
        env = Baseline(
            battle_format=FORMAT,
            server_configuration=config,
            account_configuration1=AccountConfiguration.generate("benchA", rand=True),
            account_configuration2=AccountConfiguration.generate("benchB", rand=True),
            log_level=50,
            strict=False,
            choose_on_teampreview=False,
        )
        opponent = RandomPlayer(
            battle_format=FORMAT, start_listening=False, server_configuration=config, log_level=50
        )
        wrapper = SingleAgentWrapper(env, opponent)
        wrapper._bench_obs, _ = wrapper.reset(seed=1)
        return wrapper

    return make


def _pokeenv_loop(env: Any, seconds: float) -> tuple[int, int]:
    return _single_loop(env, seconds, as_action=np.int64)  # poke-env wants numpy ints


FIRST_OBS_SCRIPT = """
import time
start = time.perf_counter()
import gymnasium as gym
import pokegym
env = gym.make("Showdown-Gen9OU")
env.reset(seed=7)
print(time.perf_counter() - start)
env.close()
"""


def first_observation_seconds() -> float:
    """Seconds from ``import gymnasium`` to the first observation of Showdown-Gen9OU,
    in a fresh Python process (Showdown already installed)."""
    out = subprocess.run(
        [sys.executable, "-c", FIRST_OBS_SCRIPT], capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def concurrent_battles(n: int) -> tuple[int, int, float]:
    """Run ``n`` battles at once to their end; returns (finished, errors, seconds)."""
    start = time.perf_counter()
    env = ShowdownVectorEnv(n, FORMAT, opponent="random")
    errors = 0
    done = np.zeros(n, dtype=bool)
    try:
        obs, _ = env.reset(seed=64)
        rng = np.random.default_rng(64)
        while not done.all():
            actions = [int(rng.choice(np.flatnonzero(mask))) for mask in obs["action_mask"]]
            obs, _, terminated, truncated, _ = env.step(actions)
            done |= terminated | truncated
    except Exception as exc:  # the check counts failures instead of stopping the bench
        errors += 1
        print(f"  concurrent battles failed: {exc!r}", file=sys.stderr)
    finally:
        env.close()
    return int(done.sum()), errors, time.perf_counter() - start


def memory_growth(battles: int, progress: bool = True) -> dict[str, float]:
    """Play ``battles`` battles in a row and compare memory at the start and the end.

    The reference point is after 10 % of the battles (at least 100): V8 grows its
    heap to a working size over the first battles, which is not a leak. Memory is
    read after a full garbage collection on both sides: Python RSS, Node RSS and
    Node's live heap. Growth is that of Python RSS + Node RSS.
    """
    env = ShowdownVectorEnv(8, FORMAT, opponent="random", num_simulators=1)
    simulator = env.simulators[0]
    obs, _ = env.reset(seed=2000)
    rng = np.random.default_rng(2000)
    finished = 0
    mark = min(battles - 1, max(battles // 10, 100))

    def snapshot() -> dict[str, float]:
        gc.collect()
        stats = simulator.call([["stats", True]])[0]
        return {
            "python_rss": _rss(),
            "node_rss": _rss(simulator.pid),
            "node_heap": stats["heapUsed"],
        }

    start: dict[str, float] = {}
    bar = _bar(battles, "battles in a row") if progress else None
    try:
        while finished < battles:
            actions = [int(rng.choice(np.flatnonzero(mask))) for mask in obs["action_mask"]]
            obs, _, terminated, truncated, _ = env.step(actions)
            ended = int(np.sum(terminated | truncated))
            finished += ended
            if bar is not None and ended:
                bar.update(ended)
            if not start and finished >= mark:
                start = snapshot()
        end = snapshot()
    finally:
        env.close()
        if bar is not None:
            bar.close()
    total_start = start["python_rss"] + start["node_rss"]
    total_end = end["python_rss"] + end["node_rss"]
    return {
        "reference_battles": mark,
        "start_mib": total_start / 2**20,
        "end_mib": total_end / 2**20,
        "growth_pct": 100.0 * (total_end - total_start) / total_start,
        "python_growth_pct": 100.0 * (end["python_rss"] / start["python_rss"] - 1),
        "node_heap_start_mib": start["node_heap"] / 2**20,
        "node_heap_end_mib": end["node_heap"] / 2**20,
    }


def _bar(total: int, desc: str) -> Any:
    return tqdm(total=total, desc=desc, file=sys.stderr, leave=False)


def run(config: BenchConfig, *, include_server: bool = True) -> dict[str, float]:
    """Run the benchmark and print the report; returns the final figures."""
    server = LocalServer().start() if include_server else None
    contenders = [
        Contender("sim", _make_sim, _single_loop),
        Contender("vec", _make_vec(config.vec_envs), _vector_loop),
    ]
    if server is not None:
        contenders += [
            Contender("server", _make_server(server.websocket_url), _single_loop),
            Contender("pokeenv", _make_pokeenv(server.websocket_url), _pokeenv_loop),
        ]
    first_obs = first_observation_seconds()
    print(f"gym.make('Showdown-Gen9OU') + reset() in a fresh process: {first_obs:.2f} s")
    print(
        f"pokegym bench env: {FORMAT}, random agent vs random opponent, "
        f"{config.rounds} interleaved rounds x {config.seconds:.0f} s per contender",
        flush=True,
    )
    try:
        for contender in contenders:
            contender.env = contender.make()
            warm_steps = 0
            while warm_steps < config.warmup_steps:
                steps, _ = contender.step_loop(contender.env, 1.0)
                warm_steps += steps
        for round_index in range(config.rounds):
            for contender in contenders:
                start = time.perf_counter()
                steps, battles = contender.step_loop(contender.env, config.seconds)
                elapsed = time.perf_counter() - start
                contender.results.append(steps / elapsed)
                contender.battles.append(battles / elapsed)
            line = "  ".join(f"{c.name}={c.results[-1]:.0f}" for c in contenders)
            print(f"round {round_index + 1}: steps/s {line}", flush=True)
    finally:
        for contender in contenders:
            if contender.env is not None:
                contender.env.close()
        if server is not None:
            server.stop()

    medians = {c.name: statistics.median(c.results) for c in contenders}
    print("\nmedian over rounds (min-max):")
    for c in contenders:
        print(
            f"  {c.name:8s} {medians[c.name]:8.1f} steps/s "
            f"({min(c.results):.0f}-{max(c.results):.0f})"
            f"   {statistics.median(c.battles):6.2f} battles/s"
        )

    finished, errors, seconds = concurrent_battles(config.concurrent)
    print(
        f"\n{config.concurrent} concurrent battles: {finished} finished, {errors} errors, "
        f"{seconds:.1f} s"
    )
    memory = memory_growth(config.memory_battles)
    growth = memory["growth_pct"]
    print(
        f"{config.memory_battles} battles in a row: Python+Node RSS {memory['start_mib']:.0f} MiB "
        f"after {memory['reference_battles']:.0f} battles -> {memory['end_mib']:.0f} MiB at the "
        f"end ({growth:+.1f}%; Python {memory['python_growth_pct']:+.1f}%, Node live heap "
        f"{memory['node_heap_start_mib']:.0f} -> {memory['node_heap_end_mib']:.0f} MiB)"
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this Python process: {peak:.0f} MiB")

    figures = {
        "steps_per_s_sim": medians["sim"],
        "steps_per_s_vec": medians["vec"],
        "steps_per_s_server": medians.get("server", float("nan")),
        "steps_per_s_pokeenv": medians.get("pokeenv", float("nan")),
    }
    base = figures["steps_per_s_pokeenv"]
    figures["ratio_sim_vs_pokeenv"] = figures["steps_per_s_sim"] / base
    figures["ratio_vec_vs_pokeenv"] = figures["steps_per_s_vec"] / base
    figures["ratio_server_vs_pokeenv"] = figures["steps_per_s_server"] / base
    figures["concurrent_errors"] = errors
    figures["memory_growth_pct"] = growth
    figures["first_obs_s"] = first_obs
    print(
        " ".join(
            f"{key}={figures[key]:.2f}"
            if "ratio" in key or "pct" in key or key.endswith("_s")
            else f"{key}={figures[key]:.0f}"
            for key in (
                "steps_per_s_sim", "steps_per_s_vec", "steps_per_s_server", "steps_per_s_pokeenv",
                "ratio_sim_vs_pokeenv", "ratio_vec_vs_pokeenv", "ratio_server_vs_pokeenv",
                "concurrent_errors", "memory_growth_pct", "first_obs_s",
            )
        )
    )  # fmt: skip
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pokegym bench env", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (a few minutes)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds per contender")
    parser.add_argument("--seconds", type=float, help="seconds per contender per round")
    parser.add_argument("--no-server", action="store_true", help="skip the server contenders")
    args = parser.parse_args(argv)
    config = BenchConfig.quick() if args.quick else BenchConfig()
    if args.rounds:
        config.rounds = args.rounds
    if args.seconds:
        config.seconds = args.seconds
    run(config, include_server=not args.no_server)
    return 0
