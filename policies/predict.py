"""``pokegym predict``: offline action prediction on replays (PokéChamp's Table 1).

For each decision of each replay, seen by the player who took it
(:func:`pokegym.replays.player_decisions`), the agent ranks the player's legal orders
(:mod:`policies.ranking`) and guesses the opponent's action at the same moment; the
report gives how often the action actually taken is among the agent's first k
(top-1..top-5), with 95 % Wilson intervals, overall, by kind of action and by rating
bracket (replays that carry a rating).

An order matches the replay's action by its label: the move's id with the Tera,
Dynamax, Mega or Z flag, or the species switched in (or led with). Decisions whose
action the log does not show, forfeits, losses to the timer and actions that are no
order of the rebuilt request are not counted.

The opponent's action (``--opponent``): ``auto`` takes a search's own statistics for the
opponent where the agent keeps them and the opponent model otherwise
(:meth:`policies.ranking.AgentRanker.rank_opponent`); ``model`` always the opponent
model; ``view`` runs the agent on the opponent's own view of the same moment (the
replay gives both) and ranks the opponent's orders as if it were the opponent.

pokegym predict --agent SPEC --replays DIR [--side p1|p2|both] [--limit N] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pokegym.agents import make_agent
from pokegym.errors import PokegymError
from pokegym.interrupts import run_interruptible
from pokegym.replays import Replay, ReplayFileError, player_decisions, read_replay, replay_files
from pokegym.replays.view import Decision
from pokegym.stats import wilson_interval
from policies.ranking import AgentRanker, order_label, ranker_for

__all__ = ["Accuracy", "PredictConfig", "PredictError", "PredictReport", "main", "predict"]

log = logging.getLogger(__name__)
TOP_K = 5
OPPONENT_SOURCES = ("auto", "model", "view")
# Rating brackets: (lowest rating, name); a replay without a rating is "unrated".
BRACKETS = ((1800, "1800+"), (1600, "1600-1799"), (1400, "1400-1599"), (1200, "1200-1399"),
            (0, "<1200"))  # fmt: skip


class PredictError(PokegymError, ValueError):
    """Action prediction cannot run as asked; the message says what to change."""


@dataclass(frozen=True)
class PredictConfig:
    """What ``pokegym predict`` measures.

    Attributes:
        agent: the agent spec (``distilled:iterations=300``).
        replays: a replay file or a folder of them (docs/replays.md).
        side: whose decisions: ``p1``, ``p2`` or ``both``.
        limit: read at most this many replays (0: all).
        opponent: where the guess of the opponent's action comes from (module docstring).
        seed: the agent's seed, set again at the start of each replay and side.
    """

    agent: str
    replays: str
    side: str = "both"
    limit: int = 0
    opponent: str = "auto"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.side not in ("p1", "p2", "both"):
            raise PredictError(f"--side is p1, p2 or both, not {self.side!r}.")
        if self.limit < 0:
            raise PredictError("--limit is a number of replays (0: all of them).")
        if self.opponent not in OPPONENT_SOURCES:
            raise PredictError(f"--opponent is one of {', '.join(OPPONENT_SOURCES)}, "
                               f"not {self.opponent!r}.")  # fmt: skip

    @property
    def roles(self) -> tuple[str, ...]:
        return ("p1", "p2") if self.side == "both" else (self.side,)


@dataclass
class Accuracy:
    """Where the action taken stood in the agent's ranking, over some decisions."""

    positions: list[int] = field(default_factory=list)  # 0: first; -1: not ranked at all
    choices: list[int] = field(default_factory=list)  # how many actions were ranked

    def add(self, position: int, choices: int) -> None:
        self.positions.append(position)
        self.choices.append(choices)

    @property
    def mean_choices(self) -> float:
        """The mean number of actions ranked (top-k is 1 where k reaches it)."""
        return sum(self.choices) / len(self.choices) if self.choices else 0.0

    @property
    def n(self) -> int:
        return len(self.positions)

    def hits(self, k: int) -> int:
        return sum(1 for p in self.positions if 0 <= p < k)

    def top(self, k: int) -> float:
        """The share of decisions whose action is among the first ``k``."""
        return self.hits(k) / self.n if self.n else 0.0

    def chance(self, k: int) -> float:
        """The top-k share of a ranking drawn at random (the mean of min(k, choices) / choices)."""
        shares = [min(k, c) / c for c in self.choices if c > 0]
        return sum(shares) / len(self.choices) if self.choices else 0.0

    def interval(self, k: int) -> tuple[float, float]:
        return wilson_interval(self.hits(k), self.n)

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "mean_choices": round(self.mean_choices, 2),
                **{f"chance_top{k}": round(self.chance(k), 4) for k in range(1, TOP_K + 1)},
                **{f"top{k}": round(self.top(k), 4) for k in range(1, TOP_K + 1)},
                **{f"top{k}_interval": [round(x, 4) for x in self.interval(k)]
                   for k in range(1, TOP_K + 1)}}  # fmt: skip


@dataclass
class PredictReport:
    """The accuracies, by whose action (``player``, ``opponent``) and group."""

    config: PredictConfig
    method: str = ""
    replays: int = 0
    unreadable: list[str] = field(default_factory=list)
    skipped: int = 0  # decisions not counted (action not shown or not an order)
    opponent_sources: dict[str, int] = field(default_factory=dict)
    table: dict[tuple[str, str], Accuracy] = field(default_factory=dict)

    def add(self, whose: str, groups: Sequence[str], position: int, choices: int) -> None:
        for group in ("all", *groups):
            self.table.setdefault((whose, group), Accuracy()).add(position, choices)

    def rows(self) -> list[tuple[str, str, Accuracy]]:
        order = {"all": 0, "moves": 1, "switches": 2, "leads": 3}
        keys = sorted(self.table, key=lambda k: (k[0] != "player", order.get(k[1], 9), k[1]))
        return [(whose, group, self.table[(whose, group)]) for whose, group in keys]

    def summary(self) -> str:
        head = (f"{self.config.agent} on {self.replays} replays ({self.config.replays}), "
                f"side {self.config.side}; ranking: {self.method}; opponent: "
                + (", ".join(f"{s} {n}" for s, n in sorted(self.opponent_sources.items()))
                   or "none"))  # fmt: skip
        lines = [head, f"{'action':<9} {'group':<10} {'n':>6} {'choices':>7}  "
                 + "  ".join(f"{'top-' + str(k):<20}" for k in range(1, TOP_K + 1))]  # fmt: skip
        for whose, group, acc in self.rows():
            cells = "  ".join(f"{_cell(acc, k):<20}" for k in range(1, TOP_K + 1))
            lines.append(f"{whose:<9} {group:<10} {acc.n:>6} {acc.mean_choices:>7.1f}  {cells}")
            if group == "all":  # what a ranking drawn at random would score
                chance = "  ".join(f"{acc.chance(k):5.1%}{'':<15}" for k in range(1, TOP_K + 1))
                lines.append(f"{'':<9} {'(chance)':<10} {'':>6} {'':>7}  {chance}")
        lines.append(f"{self.skipped} decisions not counted (action not shown in the log, a "
                     f"forfeit or timeout, or no order of the request); "
                     f"{len(self.unreadable)} replays unreadable")  # fmt: skip
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "config": asdict(self.config), "method": self.method, "replays": self.replays,
            "unreadable": self.unreadable, "skipped": self.skipped,
            "opponent_sources": self.opponent_sources,
            "table": [{"action": w, "group": g, **a.as_dict()} for w, g, a in self.rows()],
        }  # fmt: skip


def _cell(acc: Accuracy, k: int) -> str:
    low, high = acc.interval(k)
    return f"{acc.top(k):5.1%} [{low:5.1%},{high:6.1%}]"


# ---------------------------------------------------------------------- measuring
def predict(config: PredictConfig) -> PredictReport:
    """Rank every decision of the replays (see the module docstring).

    Raises:
        ReplayFileError: the replay folder is missing or holds no replay file.
        UnknownAgentError, AgentOptionError: the agent spec names no agent / bad options.
    """
    paths = replay_files(config.replays)
    if config.limit:
        paths = paths[: config.limit]
    # One agent per side: agents keep what they learn of a battle by its battle object or
    # tag, and both sides' battles of one replay share the tag.
    rankers = {role: ranker_for(make_agent(config.agent)) for role in ("p1", "p2")}
    report = PredictReport(config, method=rankers["p1"].method)
    for path in paths:
        try:
            replay = read_replay(path)
            _predict_replay(replay, config, rankers, report)
        except ReplayFileError as exc:
            report.unreadable.append(str(exc))
            log.warning("predict: %s", exc)
            continue
        report.replays += 1
    if not report.replays:
        raise PredictError(
            f"No replay in {config.replays} could be read ({len(report.unreadable)} tried): "
            + "; ".join(report.unreadable[:3])
        )
    return report


def _predict_replay(
    replay: Replay, config: PredictConfig, rankers: dict[str, AgentRanker], report: PredictReport
) -> None:
    """Add one replay's decisions to ``report``."""
    roles = ("p1", "p2") if config.opponent == "view" else config.roles
    seen: dict[str, dict[tuple[int, str], int]] = {}  # role -> moment -> position
    choices: dict[str, dict[tuple[int, str], int]] = {}  # role -> moment -> actions ranked
    asked: dict[str, list[tuple[tuple[int, str], str]]] = {}  # role -> (moment, opponent's)
    for role in roles:
        ranker = rankers[role]
        _seed(ranker.agent, config.seed)
        seen[role], choices[role], asked[role] = {}, {}, []
        for decision in player_decisions(replay, role):
            taken = _taken_label(decision)
            moment = (decision.point.index, decision.point.kind)
            if not taken:
                if role in config.roles:
                    report.skipped += 1
                continue
            ranked = [order_label(o, decision.point.kind == "team_preview")
                      for o, _ in ranker.rank(decision.battle)]  # fmt: skip
            position = ranked.index(taken) if taken in ranked else -1
            seen[role][moment] = position
            choices[role][moment] = len(ranked)
            if role in config.roles:
                report.add("player", _groups(replay, taken), position, len(ranked))
            opponent = decision.opponent_action
            if role in config.roles and config.opponent != "view" and opponent is not None:
                labels, source = _opponent_guess(ranker, decision, config.opponent)
                _add_opponent(report, replay, opponent.label, labels, source)
            elif role in config.roles and opponent is not None:
                asked[role].append((moment, opponent.label))
    if config.opponent == "view":
        for role in config.roles:
            other = "p2" if role == "p1" else "p1"
            for moment, label in asked[role]:
                if moment in seen[other]:
                    report.add(
                        "opponent",
                        _groups(replay, label),
                        seen[other][moment],
                        choices[other][moment],
                    )
                    report.opponent_sources["view"] = report.opponent_sources.get("view", 0) + 1


def _opponent_guess(ranker: AgentRanker, decision: Decision, source: str) -> tuple[list[str], str]:
    if source == "model":
        labels, where = ranker.opponent_model_ranking(decision.battle), "opponent model"
    else:
        labels, where = ranker.rank_opponent(decision.battle)
    return [label for label, _ in labels], where


def _add_opponent(
    report: PredictReport, replay: Replay, taken: str, labels: list[str], source: str
) -> None:
    if taken in ("forfeit", "timeout", "recharge") or not labels or _not_comparable(taken):
        report.skipped += 1
        return
    position = labels.index(taken) if taken in labels else -1
    report.add("opponent", _groups(replay, taken), position, len(labels))
    report.opponent_sources[source] = report.opponent_sources.get(source, 0) + 1


def _not_comparable(label: str) -> bool:
    """A move the opponent's guesses cannot name: a Max Move (the log names the Max Move,
    not the move chosen) or one flagged Dynamax, Mega or Z (the world model's labels carry
    no such flag). Such decisions are skipped, not counted as misses."""
    parts = label.split(":")
    if parts[0] != "move":
        return False
    flagged = any(flag in parts[2:] for flag in ("dynamax", "mega", "z"))
    return flagged or parts[1].startswith(("max", "gmax"))


def _taken_label(decision: Decision) -> str:
    """The label of the action taken, as an order of the player's rebuilt request ("" when
    it is none: not shown, a forfeit or timeout, a move the request lacks)."""
    if decision.action is None or decision.order is None:
        return ""
    return order_label(decision.order, decision.point.kind == "team_preview")


def _groups(replay: Replay, label: str) -> tuple[str, ...]:
    kind = label.split(":", 1)[0]
    what = {"move": "moves", "switch": "switches", "team": "leads"}.get(kind, "other")
    return (what, _bracket(replay.rating))


def _bracket(rating: int | None) -> str:
    if rating is None:
        return "unrated"
    return next(name for low, name in BRACKETS if rating >= low)


def _seed(agent: Any, seed: int) -> None:
    reseed = getattr(agent, "seed", None)
    if callable(reseed):
        reseed(seed)


# ---------------------------------------------------------------------- command
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pokegym predict", description=__doc__.split("\n")[0])
    parser.add_argument("--agent", required=True, help="agent spec, e.g. distilled:iterations=300")
    parser.add_argument(
        "--replays",
        required=True,
        metavar="DIR",
        help="a replay file or a folder of them (.json, .log, .html)",
    )
    parser.add_argument("--side", default="both", choices=["p1", "p2", "both"])
    parser.add_argument("--limit", type=int, default=0, help="at most this many replays (0: all)")
    parser.add_argument(
        "--opponent",
        default="auto",
        choices=list(OPPONENT_SOURCES),
        help="the guess of the opponent's action (see the module docstring)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the agent's seed")
    parser.add_argument("--out", metavar="FILE", help="also write the table as JSON here")
    return parser  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """``pokegym predict``; Ctrl-C and SIGTERM stop it (exit status 130 or 143)."""
    args = _parser().parse_args(list(argv) if argv is not None else None)
    return run_interruptible("pokegym predict", lambda: _predict(args))


def _predict(args: argparse.Namespace) -> int:
    config = PredictConfig(args.agent, args.replays, args.side, args.limit, args.opponent,
                           args.seed)  # fmt: skip
    report = predict(config)
    print(report.summary())
    for problem in report.unreadable[:10]:
        print(f"  skipped: {problem}", file=sys.stderr)
    if args.out:
        Path(args.out).write_text(json.dumps(report.as_dict(), indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
