"""Win rate against the search's time budget: a table and a plot from paired runs.

Each point is one or more ``pokegym compare`` output folders of the same agent name
against the same opponent and seeds, one per time budget (``"distilled:budget=0.1"``,
``"distilled:budget=0.3"``, ...), so battle ``k`` of seed ``s`` has the same teams and dice
at every budget. For each budget: W-L with the Wilson 95 % interval, the seconds per
decision the agent took (median and p95, from its own latencies in the journal), and
against the reference budget the discordant pairs, McNemar's exact p-value and Newcombe's
interval for the paired difference (as :mod:`bench.paired` computes them). The plot
draws the win rates with their intervals against the budget on a log scale.

    pokegym bench budget_curve --agent distilled --reference 0.5 \\
        0.1=runs/B01/s100 0.3=runs/B03/s100 0.5=runs/B05/s100 1=runs/B1/s100 \\
        --plot docs/img/budget_curve.png

A point given as ``a,b`` joins several folders (e.g. one per seed).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path

from bench.paired import _battles, load_outcomes, mcnemar_exact, newcombe_paired, paired_counts
from pokegym.stats import percentile, wilson_interval


@dataclass(frozen=True)
class BudgetPoint:
    """One budget's battles: outcomes by battle seed and the agent's decision times."""

    budget: float
    outcomes: dict[int, float]  # battle seed -> 1 win / 0 loss / ½
    latencies: tuple[float, ...]

    @property
    def wins(self) -> int:
        return sum(1 for v in self.outcomes.values() if v == 1.0)

    @property
    def losses(self) -> int:
        return sum(1 for v in self.outcomes.values() if v == 0.0)


def load_point(budget: float, paths: list[Path], agent: str) -> BudgetPoint:
    """The battles of ``agent`` in the given folders or files; a battle seed found twice
    (a run resumed into two folders) counts once, its last record, as in :mod:`paired`."""
    outcomes = load_outcomes(paths, agent)
    if not outcomes:
        raise SystemExit(f"no battles of {agent!r} in {', '.join(map(str, paths))}")
    by_seed: dict[int, list[float]] = {}
    for path in paths:
        for battle in _battles(path):
            record = (battle.get("agents") or {}).get(agent)
            if agent in battle["pair"] and record:
                by_seed[int(battle["seed"])] = [float(x) for x in record.get("latencies", ())]
    latencies = tuple(x for seed in outcomes for x in by_seed.get(seed, ()))
    return BudgetPoint(budget, outcomes, latencies)


def parse_point(text: str) -> tuple[float, list[Path]]:
    budget, sep, folders = text.partition("=")
    try:
        value = float(budget)
    except ValueError:
        value = math.nan
    if not sep or not folders or not value > 0:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give a point as BUDGET=FOLDER[,FOLDER...], e.g. 0.5=runs/B05/s100"
        )
    return value, [Path(p) for p in folders.split(",")]


def table(points: list[BudgetPoint], reference: BudgetPoint) -> str:
    lines = [
        f"| budget (s) | n | W–L | win rate [95 %] | s per decision: median / p95 | "
        f"vs {reference.budget:g} s: b / v | McNemar p | difference [95 %] |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for point in points:
        n = len(point.outcomes)
        low, high = wilson_interval(point.wins, n)
        times = list(point.latencies)
        median = percentile(times, 50) if times else math.nan
        p95 = percentile(times, 95) if times else math.nan
        row = (
            f"| {point.budget:g} | {n} | {point.wins}–{point.losses} | "
            f"{100 * point.wins / n:.1f} % [{100 * low:.1f}, {100 * high:.1f}] | "
            f"{median:.3f} / {p95:.3f} |"
        )
        if point is reference:
            row += " – | – | – |"
        else:
            a, b, c, d = paired_counts(reference.outcomes, point.outcomes)
            shared = a + b + c + d
            low_d, high_d = newcombe_paired(a, c, b, d)  # this budget minus the reference
            row += (
                f" {b} / {c} (n = {shared}) | {mcnemar_exact(b, c):.3f} | "
                f"{100 * (c - b) / max(shared, 1):+.1f} "
                f"[{100 * low_d:+.1f}, {100 * high_d:+.1f}] |"
            )
        lines.append(row)
    return "\n".join(lines)


def plot(points: list[BudgetPoint], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [p.budget for p in points]
    rates, below, above = [], [], []
    for p in points:
        n = len(p.outcomes)
        low, high = wilson_interval(p.wins, n)
        rate = p.wins / n
        rates.append(100 * rate)
        below.append(100 * (rate - low))
        above.append(100 * (high - rate))
    figure, axes = plt.subplots(figsize=(6, 4))
    axes.errorbar(xs, rates, yerr=[below, above], fmt="o-", capsize=4)
    axes.set_xscale("log")
    axes.set_xticks(xs, [f"{x:g}" for x in xs])
    axes.set_xlabel("time budget per decision (s)")
    axes.set_ylabel("win rate (%), 95 % Wilson interval")
    axes.set_title(title)
    axes.grid(True, alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("points", nargs="+", type=parse_point, help="BUDGET=FOLDER[,FOLDER...]")
    parser.add_argument("--agent", required=True, help="the agent's name in the arena")
    parser.add_argument("--reference", type=float, help="the budget the others are paired with")
    parser.add_argument("--plot", type=Path, help="write the curve to this PNG")
    parser.add_argument("--title", default="win rate against the time budget")
    args = parser.parse_args(argv)
    points = sorted(
        (load_point(budget, paths, args.agent) for budget, paths in args.points),
        key=lambda p: p.budget,
    )
    budgets = [p.budget for p in points]
    if len(set(budgets)) != len(budgets):
        parser.error("each budget once (join folders of one budget with a comma)")
    wanted = points[0].budget if args.reference is None else args.reference
    reference = next((p for p in points if p.budget == wanted), None)
    if reference is None:
        parser.error(f"--reference {wanted:g}: no point has that budget ({budgets})")
    print(table(points, reference))
    if args.plot:
        plot(points, args.plot, args.title)
        print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
