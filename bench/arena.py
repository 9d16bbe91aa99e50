"""``pokegym bench arena``: the arena against poke-env, and the arena on Ray against itself.

1. The same two bots (max power and random, as poke-env players through
   ``Policy.as_player``) play N battles at the same concurrency, once in the arena
   (embedded simulator, full statistics) and once with poke-env's own
   ``Player.battle_against`` on a local Showdown server. Rounds are interleaved and
   medians reported; a line gives both rates and their ratio (``--no-pokeenv`` skips it).
2. One tournament (``--ray-agents``, default ``distilled,abyssal``; ``--ray-battles`` per
   pair) played by the local arena and then on a Ray started on this machine with its
   CPUs (what ``pokegym compare --ray auto`` does: Ray's start and stop are in its time).
   The per-battle outcomes of the two are compared (they are identical for agents whose
   decisions depend only on their seed; a search with a wall-clock limit is not). Start is
   Ray's start and the workers' setup (simulator, agents); the workers' busy share is the
   battles' summed time over workers x the time from the first battle's start to the
   last one's end (the rest is Ray's scheduling and the idle tail). The last line:
   ``arena_s_local=… arena_s_ray=… ratio=…``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import time

from poke_env.ps_client import AccountConfiguration, ServerConfiguration

from pokegym.agents import make_agent, split_agent_specs
from pokegym.arena import Arena, ArenaConfig, run_arena
from pokegym.scale.arena import RayOptions, run_on_ray
from pokegym.scale.cluster import ray_cluster
from pokegym.showdown.server import LocalServer

FORMAT = "gen9randombattle"


def arena_rate(battles: int, concurrency: int, seed: int) -> float:
    config = ArenaConfig(
        agents=["max_power", "random"], battle_format=FORMAT, battles_per_pair=battles,
        concurrency=concurrency, seed=seed,
    )  # fmt: skip
    start = time.perf_counter()
    run_arena(config)
    return battles / (time.perf_counter() - start)


def local_vs_ray(agents: list[str], battles: int, seed: int) -> dict[str, float]:
    """Wall times of one tournament played locally and on a local Ray (see the docstring)."""
    config = ArenaConfig(agents=agents, battle_format=FORMAT, battles_per_pair=battles, seed=seed)
    start = time.perf_counter()
    local = run_arena(config)
    local_s = time.perf_counter() - start
    start = time.perf_counter()
    first: list[float] = []

    def event(kind: str, task: object, worker: object) -> None:
        if kind == "started" and not first:
            first.append(time.perf_counter())  # the workers are set up: battles begin

    with ray_cluster("auto") as cluster:
        result, run = run_on_ray(Arena(config), RayOptions(), event=event)
        played = time.perf_counter()
    ready = first[0] if first else played
    ray_s = time.perf_counter() - start

    def outcome(record: object) -> tuple[object, ...]:
        row = dataclasses.asdict(record)  # type: ignore[call-overload]
        return tuple(row[k] for k in ("pair", "index", "p1", "p2", "winner", "turns", "timeout"))

    busy = sum(b.seconds for b in result.battles)
    return {
        "local_s": local_s,
        "ray_s": ray_s,
        "ray_start_s": ready - start,  # Ray and the workers (simulators, agents)
        "ray_play_s": played - ready,
        "workers": run.workers,
        "cpus": cluster.cpus,
        "busy_share": busy / (run.workers * (played - ready)),
        "differing": sum(
            outcome(a) != outcome(b) for a, b in zip(local.battles, result.battles, strict=True)
        ),
    }


def pokeenv_rate(battles: int, concurrency: int, url: str, index: int) -> float:
    config = ServerConfiguration(url, "https://play.pokemonshowdown.com/action.php?")
    players = [
        policy.as_player(
            battle_format=FORMAT,
            server_configuration=config,
            max_concurrent_battles=concurrency,
            account_configuration=AccountConfiguration.generate(f"bench{name}{index}", rand=True),
            log_level=50,
        )
        for name, policy in (
            ("M", make_agent("max_power", seed=1)),
            ("R", make_agent("random", seed=2)),
        )
    ]
    start = time.perf_counter()
    asyncio.run(players[0].battle_against(players[1], n_battles=battles))
    rate = battles / (time.perf_counter() - start)
    for player in players:
        asyncio.run(player.ps_client.stop_listening())
    return rate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pokegym bench arena", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--battles", type=int, help="battles per round")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--no-pokeenv", action="store_true", help="skip the poke-env comparison")
    parser.add_argument("--ray-agents", default="distilled,abyssal",
                        help="the tournament played locally and on Ray")  # fmt: skip
    parser.add_argument("--ray-battles", type=int, help="its battles per pair (100; quick: 10)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    battles = args.battles or (30 if args.quick else 100)
    rounds = args.rounds or (2 if args.quick else 4)
    if not args.no_pokeenv:
        server = LocalServer().start()
        ours, theirs = [], []
        try:
            for r in range(rounds):
                ours.append(arena_rate(battles, args.concurrency, seed=r))
                theirs.append(pokeenv_rate(battles, args.concurrency, server.websocket_url, r))
                print(f"round {r + 1}: arena {ours[-1]:.2f} battles/s, poke-env {theirs[-1]:.2f}")
        finally:
            server.stop()
        a, b = statistics.median(ours), statistics.median(theirs)
        print(
            f"battles_per_s_arena={a:.2f} battles_per_s_pokeenv={b:.2f} "
            f"ratio_arena_vs_pokeenv={a / b:.2f} battles={battles} concurrency={args.concurrency}",
            flush=True,
        )

    agents = split_agent_specs(args.ray_agents)
    ray_battles = args.ray_battles or (10 if args.quick else 100)
    m = local_vs_ray(agents, ray_battles, args.seed)
    print(
        f"ray: {m['workers']} workers on {m['cpus']:g} CPUs; start {m['ray_start_s']:.1f} s "
        "(Ray and workers), "
        f"play {m['ray_play_s']:.1f} s, workers busy {m['busy_share']:.1%} of it; battles whose "
        f"outcome differs from the local run's: {m['differing']:.0f} (an agent with a time "
        "limit, such as distilled's 0.5 s budget, decides by the machine's speed)"
    )
    print(
        f"arena_s_local={m['local_s']:.1f} arena_s_ray={m['ray_s']:.1f} "
        f"ratio={m['ray_s'] / m['local_s']:.2f} differing={m['differing']:.0f} "
        f"agents={','.join(agents)} battles={ray_battles}"
    )
    return 0
