"""Playtests: a record of every battle a person finishes against an agent, and the report.

Every battle played with ``pokegym play`` (terminal) or ``pokegym play --web`` that
comes to an end (a result, a forfeit, the turn limit) appends one JSON line to
``<replays folder>/playtest.jsonl``: the opponent's agent spec, the format, the
result, the turns, the person's 1-5 difficulty rating and the decision times of both
sides. ``pokegym playtest report`` turns one or more such files into a table per
opponent (the agent's win rate against people with a 95 % Wilson interval, the mean
difficulty rating with a 95 % t interval) and a plot.

The agent's score counts a win (or a person's forfeit) as 1, a tie or a battle cut
at the turn limit as 1/2.
"""

from __future__ import annotations

import argparse
import csv
import fcntl
import io
import json
import math
import statistics
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pokegym.errors import PokegymError
from pokegym.files import atomic_write
from pokegym.stats import wilson_interval

RECORDS_FILE = "playtest.jsonl"
RECORD_VERSION = 1
_AGENT_SCORE = {"lost": 1.0, "forfeit": 1.0, "tie": 0.5, "truncated": 0.5, "won": 0.0}
_append_lock = threading.Lock()
# Two-sided 95 % quantiles of Student's t for 1-30 degrees of freedom.
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip


class PlaytestRecordError(PokegymError, ValueError):
    """A playtest records file cannot be read (missing, or a line that is not a record)."""


def playtest_record(
    result: Any, *, opponent_spec: str, front_end: str, replay: str | None = None
) -> dict[str, Any]:
    """The record of one finished battle (``result`` is a :class:`pokegym.play.PlayResult`)."""
    return {
        "version": RECORD_VERSION,
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "front_end": front_end,
        "opponent": opponent_spec,
        "opponent_name": result.opponent_name,
        "player_name": result.player_name,
        "format": result.format,
        "seed": result.seed,
        "result": result.result,
        "ended_by": result.ended_by,
        "turns": result.turns,
        "rating": result.rating,
        "decision_seconds": list(result.decision_seconds),
        "opponent_seconds": list(result.opponent_seconds),
        "replay": replay,
    }


def append_record(folder: str | Path, record: dict[str, Any]) -> Path:
    """Append ``record`` as one line to ``folder/playtest.jsonl`` (safe across threads
    and processes: one locked write per line)."""
    path = Path(folder) / RECORDS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    with _append_lock, open(path, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            handle.write(line)
            handle.flush()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    return path


def load_records(sources: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Records from files, or folders holding a ``playtest.jsonl``.

    Raises:
        PlaytestRecordError: a source is missing or holds a line that is not a record.
    """
    records: list[dict[str, Any]] = []
    for source in sources:
        path = Path(source)
        if path.is_dir():
            path = path / RECORDS_FILE
        if not path.is_file():
            raise PlaytestRecordError(
                f"No playtest records at {path}: play battles first (`pokegym play`, "
                "`pokegym play --web`), or pass the folder given to --replays."
            )
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise PlaytestRecordError(f"{path}:{number}: not a JSON line ({exc}).") from exc
            if not isinstance(record, dict) or not {"opponent", "result"} <= record.keys():
                raise PlaytestRecordError(
                    f"{path}:{number}: not a playtest record (needs 'opponent' and 'result')."
                )
            records.append(record)
    return records


def t_quantile95(df: int) -> float:
    """Two-sided 95 % quantile of Student's t (Cornish-Fisher beyond 30 d.o.f.)."""
    if df < 1:
        raise ValueError("degrees of freedom start at 1")
    if df <= len(_T95):
        return _T95[df - 1]
    z = 1.959963984540054
    return z + (z**3 + z) / (4 * df)


@dataclass(frozen=True)
class OpponentSummary:
    """One opponent's row of the report."""

    opponent: str
    battles: int
    agent_score: float  # wins + half the ties, from the agent's side
    win_rate: float
    win_low: float
    win_high: float
    ratings: int
    rating_mean: float | None
    rating_low: float | None
    rating_high: float | None
    mean_turns: float
    person_seconds: float | None  # median seconds per decision
    agent_seconds: float | None


def summarise(records: Sequence[dict[str, Any]]) -> list[OpponentSummary]:
    """One row per opponent spec, in order of first appearance."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        if record.get("result") in _AGENT_SCORE:
            groups.setdefault(str(record["opponent"]), []).append(record)
    rows = []
    for opponent, group in groups.items():
        n = len(group)
        score = sum(_AGENT_SCORE[r["result"]] for r in group)
        low, high = wilson_interval(score, n)
        ratings = [int(r["rating"]) for r in group if isinstance(r.get("rating"), int)]
        mean = r_low = r_high = None
        if ratings:
            mean = statistics.fmean(ratings)
            if len(ratings) > 1:
                half = t_quantile95(len(ratings) - 1) * statistics.stdev(ratings)
                half /= math.sqrt(len(ratings))
                r_low, r_high = max(1.0, mean - half), min(5.0, mean + half)
        person = [s for r in group for s in r.get("decision_seconds") or []]
        agent = [s for r in group for s in r.get("opponent_seconds") or []]
        rows.append(
            OpponentSummary(
                opponent=opponent,
                battles=n,
                agent_score=score,
                win_rate=score / n,
                win_low=low,
                win_high=high,
                ratings=len(ratings),
                rating_mean=mean,
                rating_low=r_low,
                rating_high=r_high,
                mean_turns=statistics.fmean(int(r.get("turns") or 0) for r in group),
                person_seconds=statistics.median(person) if person else None,
                agent_seconds=statistics.median(agent) if agent else None,
            )
        )
    return rows


def _interval(mean: float | None, low: float | None, high: float | None, fmt: str) -> str:
    if mean is None:
        return "-"
    if low is None or high is None:
        return format(mean, fmt)
    return f"{format(mean, fmt)} [{format(low, fmt)}, {format(high, fmt)}]"


def report_table(rows: Sequence[OpponentSummary]) -> str:
    """A Markdown table of the summaries."""
    lines = [
        "| opponent | battles | agent win rate [95 % CI] | difficulty 1-5 [95 % CI] | rated "
        "| mean turns | person s/decision | agent s/decision |",
        "|---|---:|---|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        win = f"{100 * row.win_rate:.1f} % [{100 * row.win_low:.1f}, {100 * row.win_high:.1f}]"
        rating = _interval(row.rating_mean, row.rating_low, row.rating_high, ".2f")
        person = "-" if row.person_seconds is None else f"{row.person_seconds:.1f}"
        agent = "-" if row.agent_seconds is None else f"{row.agent_seconds:.3f}"
        lines.append(
            f"| {row.opponent} | {row.battles} | {win} | {rating} | {row.ratings} "
            f"| {row.mean_turns:.1f} | {person} | {agent} |"
        )
    return "\n".join(lines)


def write_report(records: Sequence[dict[str, Any]], out: str | Path) -> list[Path]:
    """Write ``playtest.md`` (table), ``playtest.csv`` and ``playtest.png`` into ``out``."""
    rows = summarise(records)
    if not rows:
        raise PlaytestRecordError(
            "The records hold no finished battle (won, lost, tie, forfeit or truncated)."
        )
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    table = report_table(rows)
    md = folder / "playtest.md"
    atomic_write(
        md,
        f"# Playtest: {len(records)} records, {sum(r.battles for r in rows)} battles\n\n"
        f"{table}\n\nAgent score: a win or a person's forfeit 1, a tie or the turn limit 1/2. "
        "Win-rate intervals: Wilson 95 %; rating intervals: Student's t 95 %.\n",
    )
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    fields = list(OpponentSummary.__dataclass_fields__)
    writer.writerow(fields)
    for row in rows:
        writer.writerow([getattr(row, name) for name in fields])
    csv_path = atomic_write(folder / "playtest.csv", buffer.getvalue())
    png = _plot(rows, folder / "playtest.png")
    return [md, csv_path, png]


def _plot(rows: Sequence[OpponentSummary], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [row.opponent for row in rows]
    ys = list(range(len(rows)))
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(10, 1.2 + 0.6 * len(rows)), sharey=True, constrained_layout=True
    )
    rates = [100 * row.win_rate for row in rows]
    errors = [
        [100 * (row.win_rate - row.win_low) for row in rows],
        [100 * (row.win_high - row.win_rate) for row in rows],
    ]
    left.barh(ys, rates, xerr=errors, color="#4a78b5", capsize=4)
    left.axvline(50, color="grey", linewidth=0.8, linestyle="--")
    left.set_xlim(0, 100)
    left.set_xlabel("agent win rate against people, % (95 % Wilson)")
    left.set_yticks(
        ys, [f"{name} (n={row.battles})" for name, row in zip(names, rows, strict=True)]
    )
    left.invert_yaxis()
    for y, row in zip(ys, rows, strict=True):
        if row.rating_mean is None:
            right.text(1.1, y, "no ratings", va="center", color="grey")
            continue
        low = row.rating_low if row.rating_low is not None else row.rating_mean
        high = row.rating_high if row.rating_high is not None else row.rating_mean
        right.errorbar(
            row.rating_mean, y, xerr=[[row.rating_mean - low], [high - row.rating_mean]],
            fmt="o", color="#c0504d", capsize=4,
        )  # fmt: skip
    right.set_xlim(0.8, 5.2)
    right.set_xticks([1, 2, 3, 4, 5])
    right.set_xlabel("difficulty rating, mean (95 % t)")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """``pokegym playtest report [--records DIR_OR_FILE ...] [--out DIR]``."""
    parser = argparse.ArgumentParser(prog="pokegym playtest", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    report = sub.add_parser("report", help="table and plot of difficulty and win rate")
    report.add_argument(
        "--records", nargs="+", default=["replays"], metavar="PATH",
        help="playtest.jsonl files or the folders holding them (default: replays)",
    )  # fmt: skip
    report.add_argument("--out", default="playtest", help="folder for the table and plot")
    args = parser.parse_args(argv)
    records = load_records(args.records)
    written = write_report(records, args.out)
    print(report_table(summarise(records)))
    print(f"Written: {', '.join(str(p) for p in written)}")
    return 0
