"""``pokegym bench arena``: arena throughput against poke-env's ``battle_against``.

The same two bots (max power and random, as poke-env players through
``Policy.as_player``) play N battles at the same concurrency, once in the arena
(embedded simulator, full statistics) and once with poke-env's own
``Player.battle_against`` on a local Showdown server. Rounds are interleaved and
medians reported; the final line gives both rates and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from poke_env.ps_client import AccountConfiguration, ServerConfiguration

from pokegym.arena import ArenaConfig, run_arena

FORMAT = "gen9randombattle"


def arena_rate(battles: int, concurrency: int, seed: int) -> float:
    config = ArenaConfig(
        agents=["max_power", "random"], battle_format=FORMAT, battles_per_pair=battles,
        concurrency=concurrency, seed=seed,
    )  # fmt: skip
    start = time.perf_counter()
    run_arena(config)
    return battles / (time.perf_counter() - start)


def pokeenv_rate(battles: int, concurrency: int, url: str, index: int) -> float:
    from pokegym.agents import make_agent

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
    args = parser.parse_args(argv)
    battles = args.battles or (30 if args.quick else 100)
    rounds = args.rounds or (2 if args.quick else 4)
    from pokegym.showdown.server import LocalServer

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
        f"ratio_arena_vs_pokeenv={a / b:.2f} battles={battles} concurrency={args.concurrency}"
    )
    return 0
