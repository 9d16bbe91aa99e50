"""The ``pokegym`` command line.

pokegym battle --format gen9ou --p1 random --p2 max_power --battles 50
pokegym compare --agents max_power,random --battles 100 --out results/  # resumable
pokegym compare --agents distilled,abyssal --battles 100 --ray auto  # or --ray HOST:6379
pokegym compare --summarize results/battles.jsonl [more.jsonl ...] --agent distilled | --ratings
pokegym play --opponent abyssal [--format gen9ou --team FILE] [--web [--port 8765]]
pokegym replay FILE | playtest report [--out DIR]
pokegym moves generate --pokemon Garchomp --n 4 | eval --n 30 --batch-size 4 | list
pokegym bench list | NAME [options]   # benchmarks (docs/benchmarks.md)
pokegym llm check [--model qwen-0.5b] | server build|start
pokegym showdown install | start [--port N] | status
pokegym priors build [--formats gen9ou,gen9randombattle] [--force]
pokegym engine build | status | check     # poke-engine, the Rust battle engine
pokegym ladder | accept | challenge --agent SPEC --server URL --username NAME  # docs/online.md
pokegym replays export | show | check      # Showdown replays as data (docs/replays.md)
pokegym puzzles build | run | list         # 1v1 and Tera puzzles (docs/puzzles.md)
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import importlib.util
import json
import logging
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pokegym.errors import PokegymError
from pokegym.interrupts import interrupt_signal


# local imports: each subcommand imports its modules when it runs, so that the command starts fast
def _battle(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from pokegym.agents import make_agent, parse_agent_spec
    from pokegym.env import BattleSetup
    from pokegym.match import run_match

    setup = BattleSetup(
        args.format,
        team=args.p1_team,
        opponent_team=args.p2_team,
        mirror=args.mirror,
        dynamax=not args.no_dynamax,
        max_turns=args.max_turns,
        backend=args.backend,
        server_url=args.server_url,
        log_battles="spectator" if args.replays else None,
    )
    agents = (make_agent(args.p1), make_agent(args.p2))
    names = (parse_agent_spec(args.p1)[0], parse_agent_spec(args.p2)[0])
    if names[0] == names[1]:
        names = (f"{names[0]} (A)", f"{names[1]} (B)")
    print(
        f"{setup.fmt.name}: {names[0]} vs {names[1]}, {args.battles} battles on the "
        f"{setup.backend.name} backend (sides alternate), seed {args.seed}",
        flush=True,
    )
    bar = tqdm(total=args.battles, unit="battle", disable=args.quiet, file=sys.stderr)
    wins = [0, 0]

    def on_battle(record: object) -> None:
        winner = getattr(record, "winner", None)
        if winner is not None:
            wins[winner] += 1
        bar.set_postfix_str(f"{names[0]} {wins[0]} - {wins[1]} {names[1]}")
        bar.update(1)

    try:
        result = run_match(
            setup,
            agents,
            names,
            args.battles,
            seed=args.seed,
            keep_logs=bool(args.replays),
            on_battle=on_battle,
        )
    finally:
        bar.close()
        setup.backend.close()
    print(result.summary())
    if args.replays:
        folder = Path(args.replays)
        folder.mkdir(parents=True, exist_ok=True)
        for index, record in enumerate(result.battles):
            if record.log:
                log = record.named_log(names)
                (folder / f"battle-{index:04d}-{record.seed:x}.log").write_text(log or "")
        print(f"Protocol logs of {len(result.battles)} battles written to {folder}/")
    if args.json:
        payload = {
            "format": setup.fmt.id,
            "agents": list(names),
            "battles": [
                {
                    "seed": b.seed,
                    "seats": list(b.seats),
                    "winner": b.winner,
                    "turns": b.turns,
                    "truncated": b.truncated,
                    "seconds": b.seconds,
                }
                for b in result.battles
            ],
            "win_rate": {name: result.win_rate(k) for k, name in enumerate(names)},
        }
        Path(args.json).write_text(json.dumps(payload, indent=2))
        print(f"Results written to {args.json}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from pokegym.compare_cli import command

    return command(args)


# Commands that live in the layers above pokegym (training, data collection) are found
# through this entry-point group, so that pokegym never imports them.
COMMAND_GROUP = "pokegym.commands"
BUILTIN_COMMANDS = frozenset(
    {
        "battle",
        "compare",
        "play",
        "replay",
        "playtest",
        "moves",
        "llm",
        "showdown",
        "priors",
        "accel",
        "engine",
    }
)


def _plugin_commands() -> dict[str, importlib.metadata.EntryPoint]:
    commands: dict[str, importlib.metadata.EntryPoint] = {}
    for ep in importlib.metadata.entry_points(group=COMMAND_GROUP):
        commands.setdefault(ep.name, ep)
    return commands


def _plugin_help(entry: importlib.metadata.EntryPoint) -> str:
    """The first line of the command module's docstring, read without importing it (its
    ``pokegym NAME:`` prefix dropped); the module's name when it cannot be read."""
    module = entry.value.split(":")[0].strip()
    try:
        spec = importlib.util.find_spec(module)
        origin = spec.origin if spec is not None else None
        doc = ast.get_docstring(ast.parse(Path(origin).read_text())) if origin else None
    except (ImportError, OSError, SyntaxError, ValueError):
        doc = None
    first = (doc or "").strip().splitlines()[0] if (doc or "").strip() else ""
    first = first.split(": ", 1)[1] if first.startswith("``pokegym") and ": " in first else first
    return first.rstrip(".") or f"{entry.name} (from {module})"


def _plugin(args: argparse.Namespace) -> int:
    return _run_plugin(args.command, args.rest)


def _run_plugin(name: str, rest: list[str]) -> int:
    entry = _plugin_commands()[name]
    try:
        command_main = entry.load()
    except ImportError as exc:
        raise PokegymError(
            f"`pokegym {name}` needs a module that failed to import ({exc}); "
            "is pokegym installed with its extras (pip install -e '.[dev,rl]')?"
        ) from exc
    return int(command_main(rest))


def _play(args: argparse.Namespace) -> int:
    if args.web:
        from pokegym.web.cli import play_web

        return play_web(args)
    from pokegym.play import play_command

    return play_command(args)


def _replay(args: argparse.Namespace) -> int:
    from pokegym.web.cli import replay_command

    return replay_command(args)


def _playtest(args: argparse.Namespace) -> int:
    from pokegym.playtest import main as playtest_main

    return int(playtest_main(args.rest))


def _moves(args: argparse.Namespace) -> int:
    from pokegym.moves.cli import run

    return run(args)


def _llm(args: argparse.Namespace) -> int:
    from pokegym.llm.cli import main as llm_main

    return int(llm_main(args.rest))


def _build_priors(formats: str | None, teams: int | None, force: bool) -> dict[str, Any]:
    from pokegym.world.priors import build_priors

    names = [f.strip() for f in formats.split(",") if f.strip()] if formats else None
    return build_priors(names, n_teams=teams, force=force)


def _print_priors(built: dict[str, Any]) -> None:
    for format_id, path in built.items():
        where = path if path is not None else "nothing to build (Showdown's species data)"
        print(f"priors of {format_id}: {where}")


def _priors(args: argparse.Namespace) -> int:
    if args.teams is not None and args.teams < 1:
        print(f"pokegym priors: --teams must be at least 1, got {args.teams}", file=sys.stderr)
        return 2
    _print_priors(_build_priors(args.formats, args.teams, args.force))
    return 0


def _accel(args: argparse.Namespace) -> int:
    from pokegym.world._accel import main as accel_main

    return accel_main(args.rest)


def _engine(args: argparse.Namespace) -> int:
    from pokegym.engine.cli import main as engine_main

    return engine_main(args.rest)


def _showdown(args: argparse.Namespace) -> int:
    from pokegym.showdown import install

    if args.action == "install":
        folder = install.install_showdown(force=args.force)
        print(f"Pokémon Showdown {install.pinned_version()} is installed in {folder}")
        if not args.no_priors:
            _print_priors(_build_priors(None, None, False))
        return 0
    if args.action == "status":
        info = install.find_node()
        print(
            f"node: {info.node} v{'.'.join(map(str, info.version))}; npm: {info.npm or 'missing'}"
        )
        if install.is_installed():
            print(
                f"showdown: {install.pinned_version()} installed at "
                f"{install.showdown_package_dir(install=False)}"
            )
        else:
            print(
                f"showdown: not installed (expected in {install.install_dir()}); "
                "run `pokegym showdown install`"
            )
        from pokegym.showdown.server import is_showdown, port_in_use

        if is_showdown(args.port):
            print(f"server: a Showdown server answers on 127.0.0.1:{args.port}")
        elif port_in_use(args.port):
            print(f"server: port {args.port} is in use by something that is not a Showdown server")
        else:
            print(f"server: nothing listens on 127.0.0.1:{args.port} (`pokegym showdown start`)")
        return 0
    if args.action == "start":
        from pokegym.showdown.server import LocalServer

        server = LocalServer(port=args.port).start()
        print(
            f"Showdown server running on {server.websocket_url} (pid {server.pid}); "
            "Ctrl-C stops it.",
            flush=True,
        )
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        try:
            while server.is_running():
                time.sleep(0.5)
            print(f"The server exited:\n{server.log_tail()}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("Stopping the server.")
            return 0
        finally:
            server.stop()
    raise PokegymError(f"Unknown action {args.action!r}")


# Long on purpose: every subcommand's arguments, declared in one place (a list to read).
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pokegym", description="Pokémon Showdown battles as RL environments, and agents."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    sub = parser.add_subparsers(dest="command", required=True)

    battle = sub.add_parser("battle", help="play battles between two agents and summarise them")
    battle.add_argument("--format", default="gen9randombattle", help="Showdown format id")
    battle.add_argument("--p1", default="random", help="agent spec, e.g. random, max_power:seed=1")
    battle.add_argument("--p2", default="max_power", help="agent spec for the other side")
    battle.add_argument("--battles", type=int, default=50, help="number of battles")
    battle.add_argument("--seed", type=int, default=0, help="seed of the whole match")
    battle.add_argument("--p1-team", help="team file/folder for --p1 (formats with teams)")
    battle.add_argument("--p2-team", help="team file/folder for --p2")
    battle.add_argument("--mirror", action="store_true", help="both sides play the same team")
    battle.add_argument("--no-dynamax", action="store_true", help="gen 8: add the Dynamax Clause")
    battle.add_argument("--max-turns", type=int, default=500, help="truncate battles at this turn")
    battle.add_argument("--backend", choices=["sim", "server"], default="sim")
    battle.add_argument("--server-url", help="server for --backend server (default: start one)")
    battle.add_argument("--replays", metavar="DIR", help="write each battle's protocol log here")
    battle.add_argument("--json", metavar="FILE", help="write per-battle results as JSON")
    battle.add_argument("--quiet", action="store_true", help="no progress bar")
    battle.set_defaults(func=_battle)

    compare = sub.add_parser(
        "compare",
        help="a tournament between agents with statistics",
        description="A tournament between agents with statistics. Each finished battle is "
        "written to OUT/battles.jsonl as it ends; Ctrl-C (exit status 130) or SIGTERM (143) "
        "keeps them, and the same command again plays only the missing battles "
        "(docs/compare.md). --ray plays them on a Ray cluster (docs/scale.md).",
    )
    compare.add_argument("--agents", default="max_power,random",
                         help="comma-separated agent specs, e.g. max_power,random")  # fmt: skip
    compare.add_argument("--format", default="gen9randombattle", help="Showdown format id")
    compare.add_argument("--battles", type=int, default=50, help="battles per pair of agents")
    compare.add_argument("--pairs", help="only these pairs, e.g. a:b,a:c (default: round-robin)")
    compare.add_argument("--out", default="results",
                         help="folder for table, JSON, CSV, plots and battles.jsonl")  # fmt: skip
    compare.add_argument("--seed", type=int, default=0)
    compare.add_argument("--concurrency", type=int, help="battles in flight (default 8)")
    compare.add_argument("--simulators", type=int, default=2, help="simulator processes")
    compare.add_argument("--mirror", action="store_true", help="both sides play the same team")
    compare.add_argument("--teams", help="team file/folder (formats with teams)")
    compare.add_argument("--clock-bank", type=float, default=150.0, help="seconds of timer bank")
    compare.add_argument("--clock-increment", type=float, default=15.0, help="seconds per turn")
    compare.add_argument("--no-clock", action="store_true", help="no battle timer")
    compare.add_argument("--max-turns", type=int, default=500)
    compare.add_argument("--replays", action="store_true", help="save HTML replays in OUT/replays")
    compare.add_argument("--quiet", action="store_true", help="no progress bar")
    scale = compare.add_argument_group(
        "on a Ray cluster (pip install 'pokegym[ray]'; docs/scale.md)"
    )
    scale.add_argument("--ray", nargs="?", const="auto", metavar="auto|ADDRESS",
                       help="play on Ray: 'auto' starts it on this machine, HOST:PORT joins a "
                       "running cluster (each worker plays one battle at a time)")  # fmt: skip
    scale.add_argument("--workers", type=int,
                       help="Ray workers (default: as many as the cluster holds)")  # fmt: skip
    scale.add_argument("--retries", type=int,
                       help="tries after the first for a lost battle (default 2)")  # fmt: skip
    scale.add_argument("--ray-runtime-env", metavar="JSON|FILE",
                       help="Ray runtime environment for the workers, e.g. "
                       "'{\"env_vars\": {\"POKEGYM_HOME\": \"/opt/pokegym\"}}'")  # fmt: skip
    summary = compare.add_argument_group("summaries of battles files")
    summary.add_argument("--summarize", nargs="+", metavar="FILE",
                         help="print the record in these battles.jsonl files (plain or .gz) "
                         "as JSON instead of playing")  # fmt: skip
    summary.add_argument("--agent", help="whose record --summarize prints (default: everyone's)")
    summary.add_argument("--against", help="only battles against this agent")
    summary.add_argument("--ratings", action="store_true",
                         help="Elo ratings with 95%% intervals of every agent over all the "
                         "files' battles together, and the gap between the first two")  # fmt: skip
    summary.add_argument("--reference", help="--ratings: the agent at Elo 1000 "
                         "(default the lowest rated)")  # fmt: skip
    compare.set_defaults(func=_compare)

    play = sub.add_parser("play", help="play a battle yourself against an agent (terminal or web)")
    play.add_argument("--opponent", help="agent spec, e.g. random:seed=3 (default abyssal); "
                      "--web: specs to pick from (default abyssal,max_power,random)")  # fmt: skip
    play.add_argument("--format", default="gen9randombattle", help="Showdown format id")
    play.add_argument("--team", help="your team file (formats with teams, e.g. gen9ou)")
    play.add_argument("--seed", type=int, help="seed of the battle (default: a new one)")
    play.add_argument("--replays", default="replays", metavar="DIR", help="replay + JSON folder")
    play.add_argument("--name", default="Player", help="your name in the battle")
    play.add_argument("--no-rating", action="store_true", help="do not ask to rate the opponent")
    play.add_argument("--web", action="store_true", help="play in the browser (a local web server)")
    play.add_argument("--host", default="127.0.0.1", help="--web: address to listen on")
    play.add_argument("--port", type=int, default=8765, help="--web: port to listen on")
    play.add_argument("--abandon-after", type=float, default=60.0, metavar="SECONDS",
                      help="--web: forfeit a battle whose page was closed this long")  # fmt: skip
    play.set_defaults(func=_play)

    replay = sub.add_parser("replay", help="watch a saved battle (.log, .json, .html) offline")
    replay.add_argument("file", help="a replay of pokegym play or compare --replays")
    replay.add_argument("--host", default="127.0.0.1", help="address to listen on")
    replay.add_argument("--port", type=int, default=8765, help="port to listen on")
    replay.set_defaults(func=_replay)

    puzzles = sub.add_parser("puzzles", help="puzzle suites: puzzles build|run|list")
    puzzles.add_argument("rest", nargs=argparse.REMAINDER, help="build, run or list (--help)")
    puzzles.set_defaults(
        func=lambda args: importlib.import_module("pokegym.puzzles.cli").main(args.rest)
    )

    playtest = sub.add_parser("playtest", help="playtest report [--records DIR] [--out DIR]")
    playtest.add_argument("rest", nargs=argparse.REMAINDER, help="report and its options")
    playtest.set_defaults(func=_playtest)

    from pokegym.moves.cli import add_parser as add_moves_parser

    add_moves_parser(sub)
    sub.choices["moves"].set_defaults(func=_moves)

    llm = sub.add_parser("llm", help="language models: llm check|list, llm server build|start")
    llm.add_argument("rest", nargs=argparse.REMAINDER, help="llm subcommand and its options")
    llm.set_defaults(func=_llm)

    accel = sub.add_parser("accel", help="the compiled world model: accel build|status|clean")
    accel.add_argument("rest", nargs=argparse.REMAINDER, help="build, status or clean")
    accel.set_defaults(func=_accel)

    engine = sub.add_parser(
        "engine", help="poke-engine, the Rust battle engine: engine build|status|check"
    )
    engine.add_argument("rest", nargs=argparse.REMAINDER, help="build, status or check")
    engine.set_defaults(func=_engine)

    showdown = sub.add_parser("showdown", help="manage the Pokémon Showdown install and server")
    showdown.add_argument("action", choices=["install", "start", "status"])
    showdown.add_argument("--port", type=int, default=8000, help="server port (start, status)")
    showdown.add_argument("--force", action="store_true", help="reinstall (install)")
    showdown.add_argument(
        "--no-priors", action="store_true", help="install only: skip `pokegym priors build`"
    )
    showdown.set_defaults(func=_showdown)

    priors = sub.add_parser(
        "priors",
        help="build the game data and the priors over opponents' sets that agents read",
        description="Build Showdown's game data and each format's priors over the opponent's "
        "sets (generated random-battle teams, the team pool read by Showdown), cached in "
        "$POKEGYM_HOME/priors. Agents only read them; environments, the arena and "
        "`pokegym showdown install` build what is missing before any battle.",
    )
    priors.add_argument("action", choices=["build"])
    priors.add_argument(
        "--formats", default=None,
        help="comma-separated format ids (default: gen9ou, gen9randombattle, gen8randombattle, "
        "gen91v1factory)",
    )  # fmt: skip
    priors.add_argument(
        "--teams", type=int, default=None, help="teams generated for a random format (20000)"
    )
    priors.add_argument("--force", action="store_true", help="build again what is cached")
    priors.set_defaults(func=_priors)
    # An agent on a Showdown server: ladder, accept, challenge (docs/online.md).
    from pokegym.online.cli import add_parsers as add_online_parsers

    add_online_parsers(sub)
    for name, entry in sorted(_plugin_commands().items()):
        if name in sub.choices:
            continue
        plugin = sub.add_parser(name, help=_plugin_help(entry), add_help=False)
        plugin.add_argument("rest", nargs=argparse.REMAINDER, help=f"options of `{name}`")
        plugin.set_defaults(func=_plugin)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    tokens = list(sys.argv[1:] if argv is None else argv)
    verbose = False
    while tokens and tokens[0] in ("-v", "--verbose"):
        verbose = True
        tokens.pop(0)
    parser = build_parser()
    if tokens and tokens[0] not in BUILTIN_COMMANDS and tokens[0] in _plugin_commands():
        # A plugin parses its own options (argparse would take its --flags for ours).
        logging.basicConfig(level=logging.INFO if verbose else logging.ERROR)
        try:
            return _run_plugin(tokens[0], tokens[1:])
        except PokegymError as exc:
            print(f"pokegym: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("pokegym: interrupted", file=sys.stderr)
            return 130
    args = parser.parse_args((["--verbose"] if verbose else []) + tokens)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR)
    if args.command in ("battle", "compare") and args.battles < 1:
        parser.error("--battles must be at least 1")
    try:
        return int(args.func(args))
    except PokegymError as exc:
        print(f"pokegym: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print("pokegym: interrupted", file=sys.stderr)
        return 128 + interrupt_signal(exc)


if __name__ == "__main__":
    sys.exit(main())
