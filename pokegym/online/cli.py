"""``pokegym ladder | accept | challenge``: an agent plays on a Showdown server.

    pokegym accept    --agent abyssal --server localhost:8000 --username pgA --games 10
    pokegym challenge --agent random  --server localhost:8000 --username pgB --games 10 \\
        --opponent pgA
    pokegym ladder    --agent distilled --server wss://sim3.psim.us/showdown/websocket \\
        --username MyBot --password-file ~/.showdown-password --format gen9ou --team team.txt

The password is read from ``--password-file`` or from ``POKEGYM_PASSWORD`` (docs/online.md).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from pokegym.errors import InvalidTeamError, PokegymError
from pokegym.interrupts import interrupt_signal, sigterm_as_interrupt

MODES = {
    "ladder": "play rated games on a Showdown server's ladder",
    "accept": "wait for challenges on a Showdown server and play them",
    "challenge": "challenge a player on a Showdown server",
}


def add_parsers(sub: Any) -> None:
    """Register ``ladder``, ``accept`` and ``challenge`` on the ``pokegym`` parser."""
    for mode, summary in MODES.items():
        p = sub.add_parser(mode, help=summary + " (docs/online.md)", description=(
            f"{summary[0].upper()}{summary[1:]} with a pokegym agent. Each finished battle's "
            "result line (OUT/results.jsonl) and protocol log (OUT/logs/) are written as it "
            "ends; Ctrl-C or SIGTERM forfeits the battle in progress and stops. The password "
            "comes from --password-file or the POKEGYM_PASSWORD environment variable, never "
            "from the command line."))  # fmt: skip
        p.add_argument("--agent", required=True, help="agent spec, e.g. abyssal, random:seed=1")
        p.add_argument("--server", required=True,
                       help="server address: localhost:8000, or a ws(s):// URL")  # fmt: skip
        p.add_argument("--username", required=True, help="the account's name (18 characters)")
        p.add_argument(
            "--password-file",
            metavar="FILE",
            help="file whose first line is the password (else POKEGYM_PASSWORD)",
        )
        p.add_argument("--format", default="gen9randombattle", help="Showdown format id")
        p.add_argument("--team", metavar="FILE", help="team file (formats with teams)")
        p.add_argument("--games", type=int, default=1, help="battles to play")
        if mode == "challenge":
            p.add_argument("--opponent", required=True, metavar="NAME", help="who to challenge")
            p.add_argument(
                "--wait",
                type=float,
                default=120.0,
                metavar="SECONDS",
                help="how long to wait for the opponent to come online",
            )
        elif mode == "accept":
            p.add_argument("--opponent", metavar="NAME", help="accept only this player")
        p.add_argument(
            "--out", metavar="DIR", help="results and logs folder (default: online/USERNAME)"
        )
        p.add_argument(
            "--login-server",
            default=None,
            metavar="URL",
            help="login server's action.php (default: Pokémon Showdown's)",
        )
        p.add_argument("--no-timer", action="store_true", help="do not turn the timer on")
        p.set_defaults(func=command, online_mode=mode)


# local imports: poke-env, the teams and the online session load when the subcommand runs
def read_team(path: str | None) -> str | None:
    """The team file's team in Showdown's packed format (what a server takes).

    Raises:
        InvalidTeamError: the file cannot be read, or holds no team.
    """
    if path is None:
        return None
    from poke_env.teambuilder import Teambuilder

    from pokegym.teams import Team

    text = Team.from_file(path).text
    try:
        if "\n" not in text.strip() and "|" in text:
            members = Teambuilder.parse_packed_team(text.strip())
        else:
            members = Teambuilder.parse_showdown_team(text)
    except Exception as exc:  # poke-env raises assorted errors on text it cannot read
        raise InvalidTeamError(
            f"The team file {path} is not a Showdown team ({type(exc).__name__}: {exc}); "
            "export the team from Showdown's teambuilder."
        ) from None
    if not members:
        raise InvalidTeamError(f"The team file {path} holds no Pokémon.")
    return Teambuilder.join_team(members)


def config_from(args: argparse.Namespace) -> Any:
    """The :class:`~pokegym.online.session.OnlineConfig` the arguments describe."""
    from pokegym.online.account import LOGIN_SERVER, read_password
    from pokegym.online.session import OnlineConfig, check_format, check_server

    if args.games < 1:
        raise PokegymError(f"--games must be at least 1, got {args.games}.")
    username = args.username.strip()
    if not username or len(username) > 18:
        raise PokegymError(f"--username must have 1 to 18 characters, got {username!r}.")
    check_server(args.server)
    return OnlineConfig(
        mode=args.online_mode,
        agent=args.agent,
        server=args.server,
        username=username,
        password=read_password(args.password_file),
        battle_format=check_format(args.format),
        team=read_team(args.team),
        games=args.games,
        opponent=getattr(args, "opponent", None),
        out=args.out or str(Path("online") / username.lower()),
        login_server=args.login_server or LOGIN_SERVER,
        timer=not args.no_timer,
        opponent_wait=getattr(args, "wait", 120.0),
    )


def command(args: argparse.Namespace) -> int:
    with sigterm_as_interrupt():
        try:
            return _play(args)
        except KeyboardInterrupt as exc:  # before the run started: nothing to keep
            print("pokegym: interrupted", file=sys.stderr)
            return 128 + interrupt_signal(exc)


def _play(args: argparse.Namespace) -> int:
    from pokegym.agents import make_agent
    from pokegym.online.session import run_online

    config = config_from(args)
    agent = make_agent(config.agent)
    where = f"{config.server} as {config.username}"
    print(f"{config.battle_format}: {config.agent} plays {config.games} game(s) on {where} "
          f"({config.mode}{' ' + config.opponent if config.opponent else ''})",
          flush=True)  # fmt: skip

    finished: list[Any] = []

    def on_login(name: str) -> None:
        print(f"logged in as {name}", flush=True)

    def on_result(result: Any) -> None:
        finished.append(result)
        print(f"{result.battle}: {result.result} against {result.opponent} in {result.turns} "
              f"turns" + (f" ({result.ended_by})" if result.ended_by != "battle" else ""),
              flush=True)  # fmt: skip

    verbose = logging.getLogger().isEnabledFor(logging.INFO)
    try:
        run = run_online(config, agent, on_login=on_login, on_result=on_result,
                         log_level=logging.INFO if verbose else logging.CRITICAL + 1)  # fmt: skip
    except PokegymError:
        if finished:
            _report(config, finished)
        raise
    _report(config, run.results)
    if run.interrupted:
        signum = interrupt_signal(KeyboardInterrupt())
        print(f"pokegym: interrupted ({signal.Signals(signum).name}); any battle in progress "
              "was forfeited.", file=sys.stderr)  # fmt: skip
        return 128 + signum
    return 0


def _report(config: Any, results: list[Any]) -> None:
    from pokegym.online.session import summary_table

    print(summary_table(results))
    print(f"Results: {Path(config.out) / 'results.jsonl'} (one line per battle, added as each "
          f"ends); protocol logs: {Path(config.out) / 'logs'}/", flush=True)  # fmt: skip
