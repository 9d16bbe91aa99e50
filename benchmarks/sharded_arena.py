"""One pair of agents over many processes, with a wall-clock budget; then one summary.

An arena run decides every battle in one Python thread, so an agent whose decisions are
slow (a language model, even on a GPU) leaves most cores idle, and a run stopped early
writes nothing. This script plays one pair in short arena runs of two battles (one per
side), seeds ``--seed``, ``--seed + 1``, ... and appends each run's battles and
per-decision statistics to a JSON-lines file as soon as the run ends. Start one process
per shard with its own seed range and file; ``--until`` stops starting runs at a given
time, so a budget is spent without losing finished battles. ``--summarize`` merges the
files into W-L-T, the Wilson interval, latency percentiles and usage per decision.

    # 8 shards of pokechamp against abyssal, for at most 8 minutes, on a GPU machine
    END=$(( $(date +%s) + 480 ))
    for i in 0 1 2 3 4 5 6 7; do
      python benchmarks/sharded_arena.py \\
          --agents "pokechamp:model=qwen-0.5b,model_threads=1",abyssal \\
          --seed $((100000 + i * 1000)) --until $END --out runs/shards/abyssal_$i.jsonl &
    done; wait
    python benchmarks/sharded_arena.py --summarize runs/shards/abyssal_*.jsonl --agent pokechamp \\
        --against abyssal
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import time
from collections import Counter
from pathlib import Path

import numpy as np

from pokegym.arena import ArenaConfig, run_arena
from pokegym.cli import split_agent_specs
from pokegym.stats import wilson_interval


def play(agents: str, seed: int, until: float, runs: int, battle_format: str, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    for k in range(runs):
        if time.time() > until:
            break
        config = ArenaConfig(
            agents=split_agent_specs(agents), battle_format=battle_format,
            battles_per_pair=2, seed=seed + k, concurrency=2, simulators=1,
        )  # fmt: skip
        result = run_arena(config)
        line = {
            "seed": seed + k,
            "format": battle_format,
            "seconds": result.seconds,
            "battles": [dataclasses.asdict(b) for b in result.battles],
            "stats": {n: dataclasses.asdict(s) for n, s in result.agent_stats.items()},
        }
        with open(out, "a") as handle:
            handle.write(json.dumps(line) + "\n")
        winners = [b.winner for b in result.battles]
        print(f"{out} seed {seed + k}: winners {winners}, {result.seconds:.0f} s", flush=True)


def summarize(files: list[Path], agent: str, against: str | None = None) -> dict[str, object]:
    """W-L-T of ``agent`` against ``against`` (default: everyone it met in ``files``), with
    its decision statistics."""
    wins = losses = ties = timeouts = decisions = 0
    latencies: list[float] = []
    usage: Counter[str] = Counter()
    turns: list[int] = []
    opponents: Counter[str] = Counter()
    for path in files:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as handle:
            lines = handle.read().splitlines()
        for text in lines:
            line = json.loads(text)
            if against is not None and against not in line["stats"]:
                continue
            for battle in line["battles"]:
                if agent not in (battle["p1"], battle["p2"]):
                    continue
                opponents[battle["p2"] if battle["p1"] == agent else battle["p1"]] += 1
                turns.append(battle["turns"])
                timeouts += battle["timeout"] == agent
                if battle["winner"] == agent:
                    wins += 1
                elif battle["winner"] is None:
                    ties += 1
                else:
                    losses += 1
            stats = line["stats"].get(agent)
            if stats:
                latencies += stats["latencies"]
                decisions += stats["decisions"]
                usage.update(stats["usage"])
    n = wins + losses + ties
    if not n:
        raise SystemExit(f"No battle of {agent!r} in {len(files)} file(s).")
    low, high = wilson_interval(wins + 0.5 * ties, n)
    ms = np.array(latencies) * 1000 if latencies else np.zeros(1)
    return {
        "agent": agent,
        "opponents": dict(opponents),
        "battles": n,
        "record": [wins, losses, ties],
        "win_rate": (wins + 0.5 * ties) / n,
        "win_rate_95": [low, high],
        "timeouts": timeouts,
        "mean_turns": float(np.mean(turns)),
        "p50_ms": float(np.percentile(ms, 50)),
        "p95_ms": float(np.percentile(ms, 95)),
        "usage_per_decision": {k: v / max(decisions, 1) for k, v in sorted(usage.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", help="the pair, e.g. pokechamp,abyssal")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first run")
    parser.add_argument("--until", type=float, default=float("inf"),
                        help="epoch seconds after which no run starts")  # fmt: skip
    parser.add_argument("--runs", type=int, default=10**9, help="most runs (2 battles each)")
    parser.add_argument("--format", default="gen9randombattle")
    parser.add_argument("--out", type=Path, help="JSON-lines file the runs are appended to")
    parser.add_argument("--summarize", type=Path, nargs="+",
                        help="merge these files (plain or .gz)")  # fmt: skip
    parser.add_argument("--agent", help="whose record --summarize reports")
    parser.add_argument("--against", help="only battles against this agent")
    args = parser.parse_args()
    if args.summarize:
        if not args.agent:
            parser.error("--summarize needs --agent")
        print(json.dumps(summarize(args.summarize, args.agent, args.against), indent=1))
        return
    if not args.agents or not args.out:
        parser.error("give --agents and --out (or --summarize FILES --agent NAME)")
    if len(split_agent_specs(args.agents)) != 2:
        parser.error("--agents names exactly two agents")
    play(args.agents, args.seed, args.until, args.runs, args.format, args.out)


if __name__ == "__main__":
    main()
