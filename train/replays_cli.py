"""``pokegym replays``: Showdown replays as data (docs/replays.md).

pokegym replays export DIR --side p1|p2|both --out FILE
pokegym replays show FILE [--side p1]
pokegym replays check [--battles 50] [--format gen9randombattle] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pokegym.interrupts import interrupt_signal, sigterm_as_interrupt


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pokegym replays", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    export = sub.add_parser("export", help="write replays' decisions as a collect-style dataset")
    export.add_argument("replays", metavar="DIR", help="a replay file or a folder of them")
    export.add_argument("--side", default="both", choices=["p1", "p2", "both"])
    export.add_argument("--out", required=True, help="output folder (a new one)")
    export.add_argument("--shard-battles", type=int, default=100, help="replays per shard")
    show = sub.add_parser("show", help="list a replay's decisions and the actions taken")
    show.add_argument("file")
    show.add_argument("--side", default="both", choices=["p1", "p2", "both"])
    check = sub.add_parser(
        "check", help="play battles and compare each side's live view with the replay's"
    )
    check.add_argument("--battles", type=int, default=50)
    check.add_argument("--format", default="gen9randombattle")
    check.add_argument("--seed", type=int, default=0)
    check.add_argument("--agents", default="max_power,random", help="p1,p2 agent specs")
    check.add_argument("--out", help="also write the replays here (.log, .json, .html)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one action; Ctrl-C and SIGTERM stop it with the simulator closed and the
    shards written so far kept (exit status 130 or 143)."""
    args = _parser().parse_args(list(argv) if argv is not None else None)
    with sigterm_as_interrupt():
        try:
            return _run(args)
        except KeyboardInterrupt as exc:
            print("pokegym replays: interrupted", file=sys.stderr)
            return 128 + interrupt_signal(exc)


# local imports: each subcommand imports its modules when it runs, so that the command starts fast
def _run(args: argparse.Namespace) -> int:
    if args.action == "export":
        from train.replays_export import ExportConfig, export_replays

        config = ExportConfig(args.replays, args.out, args.side, args.shard_battles)
        summary = export_replays(config)
        print(
            f"{summary.rows} decisions of {summary.replays} replays written to {args.out} "
            f"({summary.skipped} decisions skipped: action not shown in the log or not "
            f"encodable; {len(summary.unreadable)} replays unreadable)"
        )
        for problem in summary.unreadable[:10]:
            print(f"  skipped: {problem}", file=sys.stderr)
        return 0
    if args.action == "show":
        from pokegym.replays.files import read_replay
        from pokegym.replays.view import player_decisions

        replay = read_replay(args.file)
        print(f"{replay.id} ({replay.format_id}): {replay.players[0]} vs. {replay.players[1]}")
        for role in ("p1", "p2") if args.side == "both" else (args.side,):
            for decision in player_decisions(replay, role):
                point = decision.point
                mine = point.action.label if point.action else "?"
                theirs = point.opponent_action.label if point.opponent_action else "-"
                print(f"{role} turn {point.turn:>3} {point.kind:<13} {mine:<28} opponent {theirs}")
        return 0
    from pokegym.replays.agreement import AgreementConfig, check_agreement

    agents = [a.strip() for a in args.agents.split(",")]
    if len(agents) != 2 or args.battles < 1:
        print("pokegym replays check: give two --agents (p1,p2), --battles >= 1", file=sys.stderr)
        return 2
    config = AgreementConfig(
        battle_format=args.format,
        battles=args.battles,
        seed=args.seed,
        agents=(agents[0], agents[1]),
        out=args.out,
    )
    report = check_agreement(config)
    print(report.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
