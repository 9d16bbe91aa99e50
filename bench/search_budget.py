"""How much search fits in a decision: the `mcts`/`distilled` agent at its time budget.

Plays ``--battles`` battles of the agent against an opponent on the embedded simulator
and prints, from the agent's own records, the wall time per decision (median, p95, max)
and the MCTS iterations it ran per decision (median, p5), with the machine's load at the
start and end, since a shared machine gives a search fewer iterations per second; then
the deciding thread's CPU seconds per decision and the iterations per CPU second (with a
fixed ``iterations=`` budget, a figure that compares two versions of the code on the
same battles).

    pokegym bench search_budget --agent distilled --battles 10
    pokegym bench search_budget --agent "distilled:budget=1" --opponent simple_heuristics
"""

from __future__ import annotations

import argparse
import os

from pokegym.agents import make_agent
from pokegym.env import BattleSetup
from pokegym.match import run_match
from pokegym.stats import percentile


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="distilled")
    parser.add_argument("--opponent", default="abyssal")
    parser.add_argument("--format", default="gen9randombattle")
    parser.add_argument("--battles", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    agent = make_agent(args.agent)
    if not hasattr(agent, "iteration_counts"):
        parser.error(f"{args.agent!r} is not an MCTS agent (no iteration counts)")
    opponent = make_agent(args.opponent)
    setup = BattleSetup(battle_format=args.format)
    load_before = os.getloadavg()[0]
    try:
        result = run_match(setup, (agent, opponent), ("agent", "opponent"), args.battles,
                           seed=args.seed)  # fmt: skip
    finally:
        setup.backend.close()
    load_after = os.getloadavg()[0]
    latencies = sorted(agent.latencies)
    iterations = sorted(agent.iteration_counts)
    wins = result.wins(0)
    losses = args.battles - wins - result.ties
    load = f"load average {load_before:.1f} -> {load_after:.1f} on {os.cpu_count()} CPUs"
    print(f"{args.agent} vs {args.opponent}, {args.format}, {args.battles} battles, "
          f"seed {args.seed}: {wins}-{losses} ({load})")  # fmt: skip
    print(f"decisions: {len(latencies)}; seconds per decision: median "
          f"{percentile(latencies, 50):.3f}, p95 {percentile(latencies, 95):.3f}, "
          f"max {latencies[-1]:.3f}")  # fmt: skip
    print(f"iterations per decision: median {percentile(iterations, 50):.0f}, "
          f"p5 {percentile(iterations, 5):.0f}, max {iterations[-1]}")  # fmt: skip
    cpu = sum(agent.cpu_seconds)
    print(f"CPU seconds per decision: median {percentile(sorted(agent.cpu_seconds), 50):.3f}; "
          f"iterations per CPU second: {sum(iterations) / cpu:.0f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
