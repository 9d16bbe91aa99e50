"""Where is the search's value off? Its value of each searched decision against how the
battle ended, by the kind of action the search then played.

Reads a collection of a search agent (``pokegym collect``: each searched decision stores
``search_value``, the search's win chance of the state) and, for every deciding agent,
opponent and kind of action played (attack, boosting move, other status move, switch),
prints the decisions, the mean search value, the mean hand-written value and the share of
those decisions whose battle the deciding side won. A search whose value is calibrated
has the mean value near the win rate in every row; a kind whose gap differs from the
others' is where its leaves judge the position worse (or better) than the battles bear
out.

    pokegym bench value_by_action data/ei2
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from pokegym.world.data import Dex, load_dex
from train.collection import read_collection

KINDS = ("attack", "boost", "status", "switch", "other")


def action_kind(label: str | None, dex: Dex) -> str:
    """``attack``, ``boost`` (a status move that raises the user's stats), ``status``,
    ``switch`` or ``other`` (no label, or a move the game data does not know)."""
    if not label:
        return "other"
    kind, _, rest = label.partition(":")
    if kind == "switch":
        return "switch"
    entry = dex.moves.get(rest.split(":")[0])  # "move:earthquake:tera"
    if entry is None:
        return "other"
    if entry.get("category") != "Status":
        return "attack"
    if entry.get("target") == "self" and entry.get("boosts"):
        return "boost"
    return "status"


def table(rows: dict, dex: Dex) -> dict[tuple[str, str, str], tuple[int, float, float, float]]:
    """(agent, opponent, kind) -> (decisions, mean search value, mean hand-written value,
    win rate), over the rows that hold a search value."""
    sums: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for agent, opponent, label, value, heuristic, outcome in zip(
        rows["agent"], rows["opponent"], rows["action_label"], rows["search_value"],
        rows["heuristic_value"], rows["outcome"], strict=True,
    ):  # fmt: skip
        if value is None:
            continue
        cell = sums[(agent, opponent, action_kind(label, dex))]
        cell[0] += 1
        cell[1] += value
        cell[2] += heuristic
        cell[3] += outcome
    return {key: (int(n), v / n, h / n, o / n) for key, (n, v, h, o) in sums.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collection", type=Path, help="a `pokegym collect --out` folder")
    parser.add_argument("--gen", type=int, default=9)
    args = parser.parse_args(argv)
    columns = ["agent", "opponent", "action_label", "search_value", "heuristic_value", "outcome"]
    rows = read_collection(args.collection, columns).to_pydict()
    result = table(rows, load_dex(args.gen))
    if not result:
        print(f"{args.collection} holds no searched decisions (no search_value).")
        return 1
    print("| agent | opponent | action | decisions | search value | hand-written | won | gap |")
    print("|---|---|---|---|---|---|---|---|")
    for (agent, opponent, kind), (n, value, heuristic, won) in sorted(
        result.items(), key=lambda item: (item[0][0], item[0][1], KINDS.index(item[0][2]))
    ):
        print(f"| {agent} | {opponent} | {kind} | {n} | {value:.3f} | {heuristic:.3f} | "
              f"{won:.3f} | {value - won:+.3f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
