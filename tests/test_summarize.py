"""`pokegym compare --summarize`: one agent's record over battles files (journals of
`compare`, and the per-run lines of the older sharded runs), plain or gzipped."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pokegym.arena import ArenaConfig, run_arena
from pokegym.journal import JOURNAL_NAME, JournalError, agents_in, summarize

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
