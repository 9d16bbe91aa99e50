"""The battles of a tournament as they finish: one JSON line each, so none is lost.

``pokegym compare`` writes ``OUT/battles.jsonl`` while it plays. The first line
describes the tournament (everything that decides a battle's outcome: agents, format,
battles per pair, pairs, mirror, seed, clock, turn limit, teams); every further line is
one finished battle: its :class:`~pokegym.arena.BattleRecord` fields and, under
``"agents"``, the decision statistics of both players in that battle (decisions,
latencies in seconds, usage such as LLM tokens, type alignment). A line is written with
one ``write`` call on a file opened for appending, as soon as the battle ends, so an
interrupted run (Ctrl-C, SIGTERM, a killed process, a crash) keeps every battle that
finished. A last line cut short by a killed process is dropped when the file is read.

:func:`summarize` reads any number of such files (and the older per-run JSON lines of
sharded runs, plain or gzipped) into one agent's record and decision statistics:
``pokegym compare --summarize FILES... --agent NAME``; :func:`pooled_ratings` fits Elo
ratings to all of their battles together (``--ratings``).

Running the same tournament again with the same file resumes it: the battles already in
the file are not played again, and the results are computed from all of them. A file
written for another tournament is refused (:class:`JournalMismatchError`), and so is a
file that another process is writing (an exclusive ``flock`` while it is open).
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import json
import math
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from pokegym.errors import PokegymError
from pokegym.ratings import ELO_SCALE, Game, fit_bradley_terry
from pokegym.stats import wilson_interval
from pokegym.tournament import AgentStats, BattleRecord

JOURNAL_NAME = "battles.jsonl"
JOURNAL_FORMAT = "pokegym-arena-battles"
JOURNAL_VERSION = 1


class JournalError(PokegymError):
    """A battles file cannot be read, written or shared."""


class JournalMismatchError(JournalError):
    """A battles file holds the battles of another tournament."""


@dataclass
class PlayedBattle:
    """One finished battle as the journal keeps it."""

    record: BattleRecord
    stats: dict[str, AgentStats]
    """Decision statistics of the battle's players, by agent name."""

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self.record), "agents": {n: asdict(s) for n, s in self.stats.items()}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlayedBattle:
        names = {f.name for f in fields(BattleRecord)}
        values = {k: v for k, v in data.items() if k in names}
        values["pair"] = tuple(values["pair"])
        stat_names = {f.name for f in fields(AgentStats)}
        stats = {
            name: AgentStats(**{k: v for k, v in entry.items() if k in stat_names})
            for name, entry in data.get("agents", {}).items()
        }
        return cls(BattleRecord(**values), stats)


def describe_differences(found: dict[str, Any], expected: dict[str, Any]) -> str:
    """``key: found there, expected here`` for every key that differs."""
    keys = [k for k in {**expected, **found} if found.get(k) != expected.get(k)]
    return "; ".join(f"{k}: {found.get(k)!r} there, {expected.get(k)!r} now" for k in keys)


class BattleJournal:
    """The battles file of one tournament, open for appending (see the module docstring).

    Args:
        path: the file (created with its header when missing).
        identity: what must match for the file's battles to count (from
            :meth:`pokegym.arena.Arena.identity`).

    Raises:
        JournalMismatchError: the file was written for another tournament.
        JournalError: the file is damaged, unreadable, or open in another process.
    """

    def __init__(self, path: str | Path, identity: dict[str, Any]):
        self.path = Path(path)
        self.identity = json.loads(json.dumps(identity))  # as it reads back from JSON
        self.battles: list[PlayedBattle] = []
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            raise JournalError(f"Cannot open {self.path} ({exc.strerror or exc}).") from None
        try:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise JournalError(
                    f"{self.path} is being written by another process (a run of the same "
                    "tournament?). Wait for it to end, or use another output folder."
                ) from None
            self._read()
        except BaseException:
            os.close(self._fd)
            raise

    # ------------------------------------------------------------------ reading
    def _read(self) -> None:
        with open(self._fd, "rb", closefd=False) as handle:
            handle.seek(0)
            data = handle.read()
        if not data:
            header = {"format": JOURNAL_FORMAT, "version": JOURNAL_VERSION,
                      "tournament": self.identity}  # fmt: skip
            self._write_line(header)
            return
        lines = data.split(b"\n")
        complete = lines[:-1]
        if lines[-1]:
            # A last line without its newline: the process died while writing it.
            os.ftruncate(self._fd, len(data) - len(lines[-1]))
        if not complete:  # only a header cut short: a new file
            header = {"format": JOURNAL_FORMAT, "version": JOURNAL_VERSION,
                      "tournament": self.identity}  # fmt: skip
            self._write_line(header)
            return
        header = self._parse(complete[0], 1)
        if header.get("format") != JOURNAL_FORMAT or header.get("version") != JOURNAL_VERSION:
            raise JournalError(
                f"{self.path} is not a version-{JOURNAL_VERSION} battles file of pokegym "
                f"compare (format {header.get('format')!r}, version {header.get('version')!r}). "
                "Use another output folder."
            )
        found = header.get("tournament")
        if found != self.identity:
            differences = describe_differences(
                found if isinstance(found, dict) else {}, self.identity
            )
            raise JournalMismatchError(
                f"{self.path} holds the battles of another tournament ({differences}). Use "
                "another --out folder for this one, or the same options to resume that one."
            )
        seen: set[tuple[tuple[str, str], int]] = set()
        for number, line in enumerate(complete[1:], start=2):
            try:
                battle = PlayedBattle.from_json(self._parse(line, number))
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise JournalError(
                    f"Line {number} of {self.path} is not a battle record ({exc!r}); the file "
                    "is damaged. Delete that line (or the file, to start over)."
                ) from None
            key = (battle.record.pair, battle.record.index)
            if key not in seen:  # a battle written twice counts once
                seen.add(key)
                self.battles.append(battle)

    def _parse(self, line: bytes, number: int) -> dict[str, Any]:
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise JournalError(
                f"Line {number} of {self.path} is not JSON ({exc}); the file is damaged. Delete "
                "that line (or the file, to start over)."
            ) from None
        if not isinstance(value, dict):
            raise JournalError(f"Line {number} of {self.path} is not a JSON object.")
        return value

    # ------------------------------------------------------------------ writing
    def append(self, record: BattleRecord, stats: dict[str, AgentStats]) -> None:
        """Write one finished battle (one ``write`` of one line, flushed to the OS)."""
        battle = PlayedBattle(record, stats)
        self._write_line(battle.to_json())
        self.battles.append(battle)

    def _write_line(self, value: dict[str, Any]) -> None:
        data = (json.dumps(value, default=_plain) + "\n").encode()
        try:
            written = os.write(self._fd, data)
            while written < len(data):  # a regular file takes it in one call in practice
                written += os.write(self._fd, data[written:])
        except OSError as exc:
            raise JournalError(f"Cannot write to {self.path} ({exc.strerror or exc}).") from None

    def close(self) -> None:
        """Release the file (idempotent)."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> BattleJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[PlayedBattle]:
        return iter(self.battles)

    def __len__(self) -> int:
        return len(self.battles)


# ---------------------------------------------------------------- summaries
def _battles_in(path: Path) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """``(battle, stats by agent)`` for every battle in a battles file or in a file of
    per-run lines (``{"battles": [...], "stats": {...}}``, whose statistics are per run:
    they come with the run's first battle)."""
    opener: Any = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt") as handle:
            lines = handle.read().splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise JournalError(f"Cannot read {path} ({exc}).") from None
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except ValueError:
            if number == len(lines):
                continue  # a last line cut short by a killed process
            raise JournalError(
                f"Line {number} of {path} is not JSON; the file is damaged."
            ) from None
        if not isinstance(line, dict) or line.get("format") == JOURNAL_FORMAT:
            continue  # the header
        if "battles" in line and "stats" in line:
            for k, battle in enumerate(line["battles"]):
                yield battle, (line["stats"] if k == 0 else {})
        elif "pair" in line and "winner" in line:
            yield line, line.get("agents", {})
        else:
            raise JournalError(
                f"Line {number} of {path} is neither a battle of `pokegym compare` nor a run "
                "of sharded battles."
            )


def summarize(
    files: Sequence[str | Path], agent: str, against: str | None = None
) -> dict[str, Any]:
    """The record of ``agent`` (against ``against``, default everyone it met) over the
    battles in ``files``: W-L-T, the win rate with its 95 % Wilson interval, timeouts,
    turns, decision latency percentiles and usage per decision.

    Raises:
        JournalError: a file is unreadable or damaged, or holds no battle of ``agent``.
    """

    wins = losses = ties = timeouts = decisions = 0
    latencies: list[float] = []
    usage: Counter[str] = Counter()
    turns: list[int] = []
    opponents: Counter[str] = Counter()
    for path in map(Path, files):
        for battle, stats in _battles_in(path):
            if agent in stats and (against is None or against in stats):
                mine = stats[agent]
                latencies += mine.get("latencies", [])
                decisions += int(mine.get("decisions", 0))
                usage.update(mine.get("usage", {}))
            if agent not in (battle["p1"], battle["p2"]):
                continue
            other = battle["p2"] if battle["p1"] == agent else battle["p1"]
            if against is not None and other != against:
                continue
            opponents[other] += 1
            turns.append(int(battle["turns"]))
            timeouts += battle.get("timeout") == agent
            if battle["winner"] == agent:
                wins += 1
            elif battle["winner"] is None:
                ties += 1
            else:
                losses += 1
    n = wins + losses + ties
    if not n:
        raise JournalError(
            f"No battle of {agent!r}{f' against {against!r}' if against else ''} in "
            f"{len(files)} file(s)."
        )
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


def pooled_ratings(files: Sequence[str | Path], reference: str | None = None) -> dict[str, Any]:
    """Elo ratings (a Bradley–Terry fit, ties as half wins) of every agent over all the
    battles in ``files`` together, with 95 % intervals, and the gap between the first two.

    Battles of several runs (other seeds, other pairs) pool into one fit, so a round robin
    can be completed by runs of single pairs. The reference (Elo 1000, default the
    lowest rated) anchors the scale; each interval is relative to it, and the gap's
    interval comes from the fit's covariance (a Wald interval on the difference).
    ``one_sided`` names the agents that won or lost every battle: their ratings have no
    finite estimate, and ``clear`` is None when the first or the second is one of them.

    Raises:
        JournalError: a file is unreadable or damaged, or the battles rate fewer than two
            agents, or ``reference`` played none of them.
    """

    games = [Game(b["p1"], b["p2"], b["winner"])
             for path in map(Path, files) for b, _ in _battles_in(path)]  # fmt: skip
    players = {g.a for g in games} | {g.b for g in games}
    if len(players) < 2:
        raise JournalError(f"Ratings need battles between two agents or more; {len(files)} "
                           f"file(s) hold {len(games)} battle(s) of "
                           f"{sorted(players)}.")  # fmt: skip
    groups = _met_groups(games)
    if len(groups) > 1:
        listed = " and ".join(str(sorted(g)) for g in groups)
        raise JournalError(f"The battles split into groups of agents that never met, directly "
                           f"or through others: {listed}. Ratings compare only agents joined "
                           "by battles: rate each group on its own, or add battles between "
                           "them.")  # fmt: skip
    if reference is not None and reference not in players:
        raise JournalError(f"The reference {reference!r} played no battle in these files "
                           f"(agents: {', '.join(sorted(players))}).")  # fmt: skip
    fit = fit_bradley_terry(games)
    fit = fit_bradley_terry(games, reference or min(players, key=fit.strength))
    elo = fit.elo()
    order = sorted(players, key=fit.strength, reverse=True)
    played = Counter(name for g in games for name in (g.a, g.b))
    out: dict[str, Any] = {
        "battles": len(games),
        "reference": fit.reference,
        "elo_95": {name: [round(x, 1) for x in elo[name]] for name in order},
        "battles_of": {name: played[name] for name in order},
    }
    # An agent that won (or lost) every battle has no finite maximum-likelihood rating:
    # its Elo and intervals are the ridge's, not the data's.
    scores = Counter(g.winner for g in games if g.winner is not None)
    one_sided = [name for name in order if scores[name] in (0, played[name])]
    out["one_sided"] = one_sided
    first, second = order[0], order[1]
    gap, se, p = fit.wald_test(first, second)
    half = 1.959963984540054 * se
    out["first_against_second"] = {
        "first": first,
        "second": second,
        "elo_gap": round(ELO_SCALE * gap, 1),
        "gap_95": [round(ELO_SCALE * (gap - half), 1), round(ELO_SCALE * (gap + half), 1)],
        "p": p,
        "clear": bool(gap - half > 0 and math.isfinite(se)),
    }
    if first in one_sided or second in one_sided:
        out["first_against_second"]["clear"] = None
    return out


def _met_groups(games: Sequence[Any]) -> list[set[str]]:
    """The agents in groups joined by battles (directly or through others)."""
    neighbours: dict[str, set[str]] = {}
    for g in games:
        neighbours.setdefault(g.a, set()).add(g.b)
        neighbours.setdefault(g.b, set()).add(g.a)
    groups: list[set[str]] = []
    seen: set[str] = set()
    for start in neighbours:
        if start in seen:
            continue
        group, frontier = {start}, [start]
        while frontier:
            for other in neighbours[frontier.pop()] - group:
                group.add(other)
                frontier.append(other)
        seen |= group
        groups.append(group)
    return groups


def agents_in(files: Iterable[str | Path]) -> list[str]:
    """Every agent that played a battle in ``files``, in order of appearance."""
    seen: dict[str, None] = {}
    for path in map(Path, files):
        for battle, _ in _battles_in(path):
            seen.setdefault(battle["p1"])
            seen.setdefault(battle["p2"])
    return list(seen)


def _plain(value: Any) -> Any:
    item = getattr(value, "item", None)  # NumPy scalars
    if callable(item):
        return item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


__all__ = [
    "JOURNAL_NAME",
    "BattleJournal",
    "JournalError",
    "JournalMismatchError",
    "PlayedBattle",
    "agents_in",
    "summarize",
]
