"""``pokegym engine ...``: build poke-engine, say whether it is installed, try it.

pokegym engine build [--crates auto|registry|debian] [--force]
pokegym engine status
pokegym engine check [--iterations 2000]
"""

from __future__ import annotations

import argparse
import time

from pokegym.engine import BUILD_HINT, require_engine
from pokegym.engine import build as engine_build
from pokegym.engine.source import SDIST_NAME, engine_home


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pokegym engine", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser(
        "build", help="compile the pinned poke-engine for Gen 9 once (cached) and install it"
    )
    build.add_argument(
        "--crates", choices=engine_build.PATHS, default="auto",
        help="where the Rust crates come from: the crate registry, Debian's packages "
        "(with the shipped patch), or auto: the registry when cargo reaches it",
    )  # fmt: skip
    build.add_argument("--force", action="store_true", help="compile again even if cached")
    sub.add_parser("status", help="whether poke-engine is installed, and from which build")
    check = sub.add_parser("check", help="import poke-engine and time a small search")
    check.add_argument("--iterations", type=int, default=2000, help="MCTS iterations")
    return parser


def _build(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    result = engine_build.build(args.crates, force=args.force, log=print)
    module = require_engine()
    if not (result.built_now or result.installed_now):
        print(f"poke-engine: up to date ({result.wheel})")
        return 0
    record = engine_build.build_record(result.wheel)
    state = "installed now" if result.installed_now else "already installed"
    print(f"wheel       {result.wheel} ({state})")
    if record:
        print(
            f"built from  {record.get('crates')} crates, features "
            f"{','.join(map(str, record.get('features', [])))}, in {record.get('seconds')} s"
        )
    print(f"module      {module.__name__} from {module.__file__}")
    print(f"ready in    {time.perf_counter() - start:.1f} s")
    return 0


def _status() -> int:
    current = engine_build.status()
    if current.installed:
        print(f"poke-engine {current.version} installed: {current.location}")
    elif current.version:
        print(
            f"poke-engine {current.version} is installed but does not load ({current.error}): "
            f"{BUILD_HINT}"
        )
    else:
        print(f"poke-engine is not installed: {BUILD_HINT}")
    if current.origin:
        print(f"from        {current.origin}")
    record = current.record if current.from_cached_wheel else {}
    if record:
        print(
            f"build       {record.get('crates')} crates, features "
            f"{','.join(map(str, record.get('features', [])))}, Python {record.get('python')}, "
            f"{record.get('rustc') or 'rustc ?'}, {record.get('seconds')} s"
        )
    elif current.installed:
        print("build       not a wheel built by `pokegym engine build` (features unknown)")
    wheel = current.cached_wheel
    cache = f"{wheel}" if wheel else f"none for key {engine_build.build_key()}"
    print(f"cached      {cache}")
    print(f"home        {engine_home()} (sdist {SDIST_NAME})")
    return 0 if current.installed else 1


def _check(args: argparse.Namespace) -> int:
    if args.iterations < 1:
        raise SystemExit("--iterations must be at least 1")
    pe = require_engine()
    moves = ["earthquake", "dragonclaw", "swordsdance", "stoneedge"]
    garchomp = pe.Pokemon(
        id="garchomp", level=100, types=("dragon", "ground"), hp=357, maxhp=357,
        ability="roughskin", item="leftovers", attack=296, defense=226, special_attack=176,
        special_defense=206, speed=333, moves=[pe.Move(id=m) for m in moves],
        tera_type="steel",
    )  # fmt: skip
    state = pe.State(side_one=pe.Side(pokemon=[garchomp]), side_two=pe.Side(pokemon=[garchomp]))
    start = time.perf_counter()
    result = pe.monte_carlo_tree_search(state, iterations=args.iterations)
    seconds = time.perf_counter() - start
    best = max(result.side_one, key=lambda option: option.visits)
    print(
        f"mcts        {result.total_visits} iterations in {seconds:.2f} s "
        f"({result.total_visits / seconds:,.0f}/s); most visited: {best.move_choice}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "build":
        return _build(args)
    if args.command == "status":
        return _status()
    return _check(args)
