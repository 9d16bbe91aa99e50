"""Variants of one agent compared on the same battles: win rates and paired differences.

Each variant is one or more ``pokegym compare`` output folders (or their
``battles.jsonl``, gzipped or not, as docs/data keeps the published runs', or
``results.json``) of the variant against the same opponent with the
same seeds. A battle is identified by its own seed, which the arena derives from the
tournament's seed, the two agents' names and the battle's index: when every variant
plays under the same name (``--agents "mcts:...",abyssal``), battle ``k`` of seed ``s``
has the same seed, teams and dice for all of them.

For each variant: W-L over its battles with the Wilson 95 % interval. Against the
reference (the first variant), on the battles both played: the discordant pairs (``b``:
won by the reference only, ``v``: by the variant only), McNemar's exact p-value and
Newcombe's 95 % interval for the difference in win rate (paired, method 10).

    pokegym bench paired --agent mcts runs/m_plain runs/m_prior runs/m_network
    pokegym bench paired --agent mcts --names plain,prior runs/a/s1,runs/a/s2 \\
        runs/b/s1,runs/b/s2

A variant given as ``a,b`` joins several folders (e.g. one per seed).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
from math import comb
from pathlib import Path
from typing import Any

from pokegym.stats import wilson_interval

Outcomes = dict[int, float]  # a battle's own seed -> 1 win / 0 loss / ½


def load_outcomes(paths: list[Path], agent: str) -> Outcomes:
    """The outcome of every battle of ``agent`` in the given folders or files."""
    out: Outcomes = {}
    for path in paths:
        for battle in _battles(path):
            if agent not in battle["pair"]:
                continue
            winner = battle.get("winner")
            out[int(battle["seed"])] = 0.5 if winner is None else float(winner == agent)
    return out


def _battles(path: Path) -> list[dict[str, Any]]:
    if path.is_dir():
        journal, results = path / "battles.jsonl", path / "results.json"
        path = journal if journal.exists() else results
    if not path.exists():
        raise SystemExit(f"{path}: no battles.jsonl or results.json there")
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        zipped = path.suffix == ".gz"
        text = gzip.decompress(path.read_bytes()).decode() if zipped else path.read_text()
        battles = []
        for line in text.splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:  # a line cut short by a killed run
                continue
            if "pair" in entry:
                battles.append(entry)
        return battles
    return list(json.loads(path.read_text())["battles"])


def mcnemar_exact(b: int, v: int) -> float:
    """Two-sided exact McNemar test (binomial at ½ on the discordant pairs)."""
    n = b + v
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(b, v) + 1)) / 2**n
    return min(1.0, 2 * tail)


def newcombe_paired(a: int, b: int, c: int, d: int, z: float = 1.959964) -> tuple[float, float]:
    """Newcombe's (1998, method 10) 95 % interval for p1 - p2 from paired binary outcomes:
    ``a`` both won, ``b`` only the first, ``c`` only the second, ``d`` neither."""
    n = a + b + c + d
    if n == 0:
        return (math.nan, math.nan)
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson_interval(a + b, n, z)
    l2, u2 = wilson_interval(a + c, n, z)
    denominator = (a + b) * (c + d) * (a + c) * (b + d)
    if denominator == 0:
        phi = 0.0
    else:
        cross = a * d - b * c  # continuity-corrected towards 0 when positive
        corrected = cross - n / 2 if cross > n / 2 else (cross if cross < 0 else 0.0)
        phi = corrected / math.sqrt(denominator)
    diff = p1 - p2
    low = diff - math.sqrt(
        (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    )  # fmt: skip
    high = diff + math.sqrt(
        (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    )  # fmt: skip
    return max(-1.0, low), min(1.0, high)


def paired_counts(reference: Outcomes, variant: Outcomes) -> tuple[int, int, int, int]:
    """On the battles both played: won by both, by the reference only, by the variant only,
    by neither (a tie counts as not won)."""
    shared = set(reference) & set(variant)
    a = sum(1 for k in shared if reference[k] == 1.0 and variant[k] == 1.0)
    b = sum(1 for k in shared if reference[k] == 1.0 and variant[k] != 1.0)
    c = sum(1 for k in shared if reference[k] != 1.0 and variant[k] == 1.0)
    return a, b, c, len(shared) - a - b - c


def table(variants: dict[str, Outcomes]) -> str:
    names = list(variants)
    reference = variants[names[0]]
    lines = ["| variant | W–L | win rate [95 % CI] | vs " + names[0] + ": b / v | McNemar p | "
             "difference [95 % CI] |", "|---|---|---|---|---|---|"]  # fmt: skip
    for name in names:
        outcomes = variants[name]
        wins = sum(1 for v in outcomes.values() if v == 1.0)
        losses = sum(1 for v in outcomes.values() if v == 0.0)
        n = len(outcomes)
        low, high = wilson_interval(wins, n) if n else (math.nan, math.nan)
        row = f"| {name} | {wins}–{losses} | {100 * wins / max(n, 1):.1f} % " \
              f"[{100 * low:.1f}, {100 * high:.1f}] |"  # fmt: skip
        if name == names[0]:
            row += " – | – | – |"
        else:
            a, b, c, d = paired_counts(reference, outcomes)
            n_shared = a + b + c + d
            low_d, high_d = newcombe_paired(a, c, b, d)  # variant minus reference
            row += (f" {b} / {c} (n = {n_shared}) | {mcnemar_exact(b, c):.3f} | "
                    f"{100 * (c - b) / max(n_shared, 1):+.1f} [{100 * low_d:+.1f}, "
                    f"{100 * high_d:+.1f}] |")  # fmt: skip
        lines.append(row)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("variants", nargs="+", help="a folder or file per variant (a,b joins)")
    parser.add_argument("--agent", required=True, help="the compared agent's name in the arena")
    parser.add_argument("--names", help="comma-separated names for the variants")
    args = parser.parse_args(argv)
    names = args.names.split(",") if args.names else [v.rstrip("/") for v in args.variants]
    if len(names) != len(args.variants):
        parser.error("--names needs one name per variant")
    variants = {
        name: load_outcomes([Path(p) for p in spec.split(",")], args.agent)
        for name, spec in zip(names, args.variants, strict=True)
    }
    print(table(variants))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
