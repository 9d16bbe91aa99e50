"""``pokegym play --web`` and ``pokegym replay FILE``: command-line glue for the web server."""

from __future__ import annotations

import argparse
from pathlib import Path

from pokegym.errors import PokegymError
from pokegym.web.session import WebConfig

DEFAULT_WEB_OPPONENTS = "abyssal,max_power,random"


# local imports: the web app (starlette) loads only when the browser is asked for
def play_web(args: argparse.Namespace) -> int:
    """Serve battles in the browser until Ctrl-C."""
    from pokegym.agents import split_agent_specs
    from pokegym.web.app import serve

    if args.seed is not None:
        raise PokegymError("--seed is for the terminal; every web battle draws a new seed.")
    opponents = tuple(split_agent_specs(args.opponent or DEFAULT_WEB_OPPONENTS))
    if not opponents:
        raise PokegymError("--opponent names no agent; e.g. --opponent abyssal,random.")
    config = WebConfig(
        battle_format=args.format,
        opponents=opponents,
        team=args.team,
        replays=args.replays,
        abandon_after=args.abandon_after,
        ask_rating=not args.no_rating,
    )
    return serve(config, host=args.host, port=args.port)


def replay_command(args: argparse.Namespace) -> int:
    """Show a saved battle, turn by turn, in the browser."""
    from pokegym.web.app import serve
    from pokegym.web.replay import read_replay

    path = Path(args.file)
    read_replay(path)  # a file that is not a replay fails here, before the server starts
    config = WebConfig(opponents=(), replays=str(path.parent), replay_files=(str(path.resolve()),))
    return serve(config, host=args.host, port=args.port, replay=True)
