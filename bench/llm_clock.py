"""LLM agents on Showdown's turn clock, on the machine as it is and beside CPU hogs.

Plays ``--battles`` battles of each agent in ``--agents`` against ``--opponent`` in the
arena with the clock on (150 s bank, +15 s per turn), first as the machine is, then with
``--hogs`` busy-looping processes beside it, and prints for each run: wins, clock
losses, seconds per decision (median, p95, max), model calls, fallbacks (a call that
failed or was stopped at its deadline) and calls skipped because they would not end in
time, with the CPU's capability and the dtype chosen for the
model. The ratio of the two runs' p95 is measured in this one invocation.

    pokegym bench llm_clock --agents pokellmon --battles 3 --hogs 2
    pokegym bench llm_clock --agents "pokellmon;pokechamp:evaluator=distilled" --hogs 4

The hogs are stopped when the benchmark ends, also on Ctrl-C and SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pokegym.arena import ArenaConfig, run_arena
from pokegym.llm.dtypes import choose_dtype, cpu_capability
from pokegym.stats import percentile


@contextmanager
def cpu_hogs(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` processes that keep one core each busy until the block ends."""
    hogs: list[subprocess.Popen[bytes]] = []
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally below
    try:
        for _ in range(count):
            hogs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()
        signal.signal(signal.SIGTERM, previous)


def run(agent: str, opponent: str, battles: int, seed: int, fmt: str) -> dict[str, Any]:
    config = ArenaConfig(agents=[agent, opponent], battle_format=fmt, battles_per_pair=battles,
                         seed=seed, concurrency=1)  # fmt: skip
    result = run_arena(config)
    name = result.agents[0]
    stats = result.agent_stats[name]
    record = result.record(name)
    latencies = sorted(stats.latencies) or [0.0]
    usage = stats.usage
    return {
        "agent": name,
        "wins": record["wins"],
        "losses": record["losses"],
        "clock_losses": record["timeouts"],
        "decisions": stats.decisions,
        "median": percentile(latencies, 50),
        "p95": percentile(latencies, 95),
        "max": latencies[-1],
        "calls": usage.get("calls", 0.0),
        "fallbacks": usage.get("fallbacks", 0.0),
        "deadline": usage.get("deadline_misses", 0.0),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="pokellmon",
                        help="agent specs, separated by ';' when a spec has options")  # fmt: skip
    parser.add_argument("--opponent", default="max_power")
    parser.add_argument("--format", default="gen9randombattle")
    parser.add_argument("--battles", type=int, default=3)
    parser.add_argument("--hogs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.battles < 1 or args.hogs < 0:
        parser.error("--battles is 1 or more and --hogs 0 or more")

    choice = choose_dtype("auto", "cpu")
    print(f"CPU capability {cpu_capability()}; {os.cpu_count()} CPUs; model dtype "
          f"{choice.dtype} ({choice.reason})")  # fmt: skip
    print(
        "| agent | hogs | W–L | clock losses | decisions | median s | p95 s | max s | calls "
        "| fallbacks | skipped for time |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for agent in [a for a in args.agents.split(";") if a]:
        rows = []
        for hogs in (0, args.hogs):
            with cpu_hogs(hogs):
                row = run(agent, args.opponent, args.battles, args.seed, args.format)
            rows.append(row)
            print(f"| {agent} | {hogs} | {row['wins']}–{row['losses']} | {row['clock_losses']} "
                  f"| {row['decisions']} | {row['median']:.2f} | {row['p95']:.2f} "
                  f"| {row['max']:.2f} | {row['calls']:.0f} | {row['fallbacks']:.0f} "
                  f"| {row['deadline']:.0f} |", flush=True)  # fmt: skip
        quiet, loaded = rows
        if quiet["p95"] > 0:
            print(f"  p95 with {args.hogs} hogs / without: {loaded['p95'] / quiet['p95']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
