"""`pokegym compare --summarize`: one agent's record over battles files (journals of
`compare`, and the per-run lines of the older sharded runs), plain or gzipped."""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from pokegym.arena import ArenaConfig, run_arena
from pokegym.journal import JOURNAL_NAME, JournalError, agents_in, pooled_ratings, summarize

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "docs" / "data" / "pokechamp-qwen-0.5b-h200.jsonl.gz"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pokegym.cli", "compare", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


@pytest.fixture(scope="module")
def journal(tmp_path_factory) -> tuple[Path, object]:
    """A real tournament's battles file (three agents, six battles) and its result."""
    path = tmp_path_factory.mktemp("summary") / JOURNAL_NAME
    config = ArenaConfig(agents=["max_power", "random", "one_step"], battles_per_pair=2, seed=8,
                         clock_bank=None)  # fmt: skip
    return path, run_arena(config, journal=path)


def test_the_summary_of_a_battles_file_matches_the_tournament(journal, tmp_path):
    path, result = journal
    summary = summarize([path], "max_power")
    record = result.record("max_power")
    assert summary["record"] == [record["wins"], record["losses"], record["ties"]]
    assert summary["opponents"] == {"random": 2, "one_step": 2}
    low, high = summary["win_rate_95"]
    assert low <= summary["win_rate"] <= high
    assert 0 < summary["p50_ms"] <= summary["p95_ms"]
    against = summarize([path], "max_power", "random")
    assert against["battles"] == 2 and against["opponents"] == {"random": 2}
    assert sorted(agents_in([path])) == ["max_power", "one_step", "random"]
    # A gzipped copy reads the same; two files add up.
    packed = tmp_path / "battles.jsonl.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert summarize([packed], "max_power") == summary
    assert summarize([path, packed], "max_power")["battles"] == 8


def test_the_command_prints_json_and_refuses_bad_input(journal, tmp_path):
    path, _ = journal
    done = cli("--summarize", str(path), "--agent", "random", "--against", "one_step")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["battles"] == 2
    everyone = json.loads(cli("--summarize", str(path), str(SHIPPED)).stdout)
    assert set(everyone) == {"max_power", "random", "one_step", "pokechamp", "abyssal"}
    assert everyone["pokechamp"]["battles"] == 208
    lonely = cli("--summarize", str(path), "--against", "random")
    assert lonely.returncode == 2 and "--against needs --agent" in lonely.stderr
    missing = cli("--summarize", str(path), "--agent", "abyssal")
    assert missing.returncode == 2 and "No battle of 'abyssal'" in missing.stderr
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text('{"not": "a battle"}\n{}\n')
    with pytest.raises(JournalError, match="neither a battle"):
        summarize([damaged], "random")


def _battle_lines(path: Path, results: list[tuple[str, str, str | None]]) -> Path:
    """A battles file written by hand: one line per (p1, p2, winner)."""
    lines = [json.dumps({"pair": [a, b], "index": k, "seed": k, "p1": a, "p2": b, "winner": w,
                         "turns": 20}) for k, (a, b, w) in enumerate(results)]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return path


def test_pooled_ratings_are_the_bradley_terry_fit_of_all_files(journal, tmp_path):
    # Two agents, 9 wins in 10 split over two files: the maximum-likelihood Elo gap is
    # 400·log10(9/1), and the lower rated one is the reference at 1000.
    first = _battle_lines(tmp_path / "a.jsonl", [("engine", "abyssal", "engine")] * 6)
    second = _battle_lines(tmp_path / "b.jsonl", [("abyssal", "engine", "engine")] * 3
                           + [("abyssal", "engine", "abyssal")])  # fmt: skip
    table = pooled_ratings([first, second])
    assert table["battles"] == 10 and table["reference"] == "abyssal"
    assert table["elo_95"]["abyssal"][0] == 1000.0
    gap = table["first_against_second"]
    assert (gap["first"], gap["second"]) == ("engine", "abyssal")
    assert gap["elo_gap"] == pytest.approx(400 * math.log10(9), abs=0.2)
    low, high = gap["gap_95"]
    assert low < gap["elo_gap"] < high and gap["clear"] is (low > 0)
    assert list(table["elo_95"]) == ["engine", "abyssal"]  # strongest first
    # A real tournament's file: the ratings follow the records, every agent rated.
    path, result = journal
    real = pooled_ratings([path], reference="random")
    assert real["battles"] == 6 and real["elo_95"]["random"][0] == 1000.0
    assert set(real["elo_95"]) == {"max_power", "random", "one_step"}
    for name, (elo, low, high) in real["elo_95"].items():
        assert low <= elo <= high, name
    # Every pair met equally often, so the fit orders the agents as their scores do.
    score = {a: result.record(a)["wins"] + 0.5 * result.record(a)["ties"] for a in real["elo_95"]}
    for a in score:
        for b in score:
            if score[a] > score[b]:
                assert real["elo_95"][a][0] > real["elo_95"][b][0], (a, b, score)
    with pytest.raises(JournalError, match="reference 'abyssal' played no battle"):
        pooled_ratings([path], reference="abyssal")
    # Agents that never met, directly or through others, cannot be put on one scale.
    apart = _battle_lines(tmp_path / "d.jsonl", [("engine", "abyssal", "engine"),
                                                 ("random", "max_power", "max_power")])  # fmt: skip
    with pytest.raises(JournalError, match="never met"):
        pooled_ratings([apart])
    # A clean sweep has no finite rating: said, and no claim about the gap.
    sweep = pooled_ratings([_battle_lines(tmp_path / "e.jsonl",
                                          [("engine", "abyssal", "engine")] * 10)])  # fmt: skip
    assert sweep["one_sided"] == ["engine", "abyssal"]
    assert sweep["first_against_second"]["clear"] is None
    assert table["one_sided"] == []
    lonely = _battle_lines(tmp_path / "c.jsonl", [])
    with pytest.raises(JournalError, match="two agents or more"):
        pooled_ratings([lonely])


def test_the_ratings_command(journal, tmp_path):
    path, _ = journal
    done = cli("--summarize", str(path), "--ratings", "--reference", "random")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["reference"] == "random"
    both = cli("--summarize", str(path), "--ratings", "--agent", "random")
    assert both.returncode == 2 and "leave out --agent" in both.stderr
    alone = cli("--summarize", str(path), "--reference", "random")
    assert alone.returncode == 2 and "add --ratings" in alone.stderr
