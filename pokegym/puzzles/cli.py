"""``pokegym puzzles``: puzzle suites (docs/puzzles.md).

pokegym puzzles build --suite 1v1 --seed 0 --n 1000 [--out FILE]
pokegym puzzles run --suite 1v1 --agents random,max_power,abyssal [--limit N] [--out FILE]
pokegym puzzles list
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from pokegym.interrupts import run_interruptible


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pokegym puzzles", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    build = sub.add_parser("build", help="generate a suite's scenarios (reproducible by seed)")
    build.add_argument("--suite", default="1v1")
    build.add_argument("--seed", type=int, default=0)
    build.add_argument("--n", type=int, default=1000, help="scenarios to keep")
    build.add_argument("--tries", type=int, help="seeds the reference agent plays per draw")
    build.add_argument("--reference", default="abyssal", help="agent a scenario must be won by")
    build.add_argument("--opponent", help="agent playing player 2 (default: the suite's)")
    build.add_argument("--out", help="suite file (default: the shipped data file)")
    run = sub.add_parser("run", help="solve rates of agents on a suite, with 95%% intervals")
    run.add_argument("--suite", default="1v1", help="a suite name or a suite file")
    run.add_argument("--agents", required=True, help="agent specs, comma-separated")
    run.add_argument("--limit", type=int, help="only the first N scenarios")
    run.add_argument("--start", type=int, default=0, help="first scenario")
    run.add_argument("--out", help="write the table and per-scenario results as JSON here")
    sub.add_parser("list", help="the suites and their sizes")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one action; Ctrl-C and SIGTERM stop it with the simulator closed."""
    args = _parser().parse_args(list(argv) if argv is not None else None)
    return run_interruptible("pokegym puzzles", lambda: _run(args))


# local imports: each subcommand imports its modules when it runs, so that the command starts fast
def _run(args: argparse.Namespace) -> int:
    if args.action == "build":
        return _build(args)
    if args.action == "run":
        return _solve(args)
    from pokegym.puzzles.scenarios import SUITES, load_suite

    for name, text in SUITES.items():
        suite = load_suite(name)
        print(f"{name}: {len(suite)} scenarios, {suite.format}, opponent {suite.opponent} - {text}")
    return 0


def _build(args: argparse.Namespace) -> int:
    from pokegym.puzzles.build import BuildConfig, build_suite
    from pokegym.puzzles.scenarios import save_suite, suite_path

    config = BuildConfig(
        suite=args.suite, seed=args.seed, n=args.n, tries=args.tries,
        reference=args.reference, opponent=args.opponent,
    )  # fmt: skip
    start = time.perf_counter()

    def progress(kept: int, drawn: int) -> None:
        if drawn % 50 == 0:
            print(f"  {kept} kept of {drawn} drawn", file=sys.stderr, flush=True)

    suite = build_suite(config, progress=progress)
    path = save_suite(suite, args.out or suite_path(args.suite))
    print(
        f"{len(suite)} scenarios kept of {suite.candidates} drawn "
        f"({time.perf_counter() - start:.0f} s), written to {path}"
    )
    return 0


def _solve(args: argparse.Namespace) -> int:
    from pokegym.agents import split_agent_specs
    from pokegym.puzzles.play import Outcome, format_table, run_suite
    from pokegym.puzzles.scenarios import ScenarioIndexError, load_suite

    suite = load_suite(args.suite)
    if args.limit is not None and args.limit < 1:
        raise ScenarioIndexError(f"--limit is at least 1, got {args.limit}.")
    stop = len(suite) if args.limit is None else min(len(suite), args.start + args.limit)
    suite.scenario(args.start)  # a start outside the suite is a named error
    specs = split_agent_specs(args.agents)
    start = time.perf_counter()

    def progress(spec: str, outcome: Outcome) -> None:
        done = outcome.index - args.start + 1
        if done % 100 == 0:
            print(f"  {spec}: {done} of {stop - args.start}", file=sys.stderr, flush=True)

    scores = run_suite(suite, specs, indices=range(args.start, stop), on_outcome=progress)
    print(format_table(suite, scores))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "suite": suite.name,
            "format": suite.format,
            "opponent": suite.opponent,
            "first": args.start,
            "seconds": round(time.perf_counter() - start, 1),
            "agents": [s.to_json() for s in scores],
        }
        out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"results written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
