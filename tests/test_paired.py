"""``pokegym bench paired``: variants of one agent on the same battles, read from the
arena's journals (plain or gzipped, as docs/data keeps the published runs')."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from bench.paired import load_outcomes, main, mcnemar_exact, paired_counts

HEADER = {"format": "pokegym-arena-battles", "version": 1}


def _journal(path: Path, winners: list[str | None], *, gz: bool = False) -> Path:
    lines = [json.dumps(HEADER)]
    for k, winner in enumerate(winners):
        lines.append(json.dumps({"pair": ["engine", "abyssal"], "index": k, "seed": 1000 + k,
                                 "winner": winner}))  # fmt: skip
    text = "\n".join(lines) + "\n"
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def test_a_gzipped_journal_reads_as_the_plain_one(tmp_path):
    winners = ["engine", "abyssal", None, "engine"]
    plain = load_outcomes([_journal(tmp_path / "a.jsonl", winners)], "engine")
    zipped = load_outcomes([_journal(tmp_path / "a.jsonl.gz", winners, gz=True)], "engine")
    assert plain == zipped == {1000: 1.0, 1001: 0.0, 1002: 0.5, 1003: 1.0}


def test_variants_pair_battle_by_battle(tmp_path, capsys):
    reference = _journal(tmp_path / "ref.jsonl.gz", ["engine"] * 8 + ["abyssal"] * 2, gz=True)
    variant = _journal(tmp_path / "var.jsonl", ["engine"] * 6 + ["abyssal"] * 2 + ["engine"] * 2)
    a, b, c, d = paired_counts(load_outcomes([reference], "engine"),
                               load_outcomes([variant], "engine"))  # fmt: skip
    assert (a, b, c, d) == (6, 2, 2, 0)
    assert main(["--agent", "engine", "--names", "ref,var", str(reference), str(variant)]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[2].startswith("| ref | 8–2 |")
    assert f"| 2 / 2 (n = 10) | {mcnemar_exact(2, 2):.3f} | +0.0 [" in rows[3]
