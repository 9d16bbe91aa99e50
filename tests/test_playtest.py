"""Playtest records (every battle a person finishes) and ``pokegym playtest report``."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pokegym.cli import build_parser
from pokegym.play import play_command, save_battle
from pokegym.play_result import PlayResult
from pokegym.playtest import (
    PlaytestRecordError,
    load_records,
    report_table,
    summarise,
    t_quantile95,
    write_report,
)
from pokegym.stats import wilson_interval

ROOT = Path(__file__).resolve().parent.parent


def record(opponent: str, result: str, rating: int | None = None, **extra: object) -> dict:
    return {"opponent": opponent, "result": result, "rating": rating, "turns": 20,
            "decision_seconds": [2.0, 4.0], "opponent_seconds": [0.01], **extra}  # fmt: skip


RECORDS = [
    *[record("abyssal", "lost", 4) for _ in range(6)],  # the agent won six
    record("abyssal", "won", 2),
    record("abyssal", "won"),
    record("abyssal", "tie", 3),
    record("abyssal", "forfeit", 5),  # a person giving up counts for the agent
    record("random", "won", 1),
    record("random", "truncated", 1),
    record("random", "unfinished"),  # broke off: not counted
]


def test_summary_counts_the_agents_score_with_intervals():
    rows = {row.opponent: row for row in summarise(RECORDS)}
    assert list(rows) == ["abyssal", "random"]
    abyssal = rows["abyssal"]
    assert abyssal.battles == 10 and abyssal.agent_score == 7.5
    assert abyssal.win_rate == 0.75
    assert (abyssal.win_low, abyssal.win_high) == wilson_interval(7.5, 10)
    ratings = [4] * 6 + [2, 3, 5]
    mean = sum(ratings) / len(ratings)
    assert abyssal.ratings == 9 and abyssal.rating_mean == pytest.approx(mean)
    assert abyssal.rating_low < mean < abyssal.rating_high
    assert abyssal.person_seconds == 3.0 and abyssal.agent_seconds == 0.01
    random = rows["random"]
    assert (random.battles, random.agent_score) == (2, 0.5)
    # Two equal ratings: no spread, the interval is the point.
    assert random.rating_mean == 1.0 and random.rating_low == random.rating_high == 1.0
    table = report_table(list(rows.values()))
    assert "| abyssal | 10 | 75.0 % [" in table and "| random | 2 | 25.0 % [" in table


def test_t_quantiles():
    assert t_quantile95(1) == 12.706 and t_quantile95(30) == 2.042
    assert t_quantile95(40) == pytest.approx(2.021, abs=0.002)
    assert t_quantile95(10_000) == pytest.approx(1.960, abs=0.001)
    with pytest.raises(ValueError):
        t_quantile95(0)


def test_the_report_files(tmp_path):
    written = write_report(RECORDS, tmp_path / "out")
    assert [p.name for p in written] == ["playtest.md", "playtest.csv", "playtest.png"]
    assert written[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Wilson 95 %" in written[0].read_text()
    lines = written[1].read_text().splitlines()
    assert lines[0].startswith("opponent,battles,agent_score,win_rate") and len(lines) == 3
    with pytest.raises(PlaytestRecordError, match="no finished battle"):
        write_report([record("x", "unfinished")], tmp_path / "none")


def test_bad_records_files_say_where(tmp_path):
    with pytest.raises(PlaytestRecordError, match="No playtest records"):
        load_records([tmp_path])
    path = tmp_path / "playtest.jsonl"
    path.write_text(json.dumps(record("a", "won")) + "\n\n{oops\n")
    with pytest.raises(PlaytestRecordError, match=r"playtest.jsonl:3: not a JSON line"):
        load_records([tmp_path])
    path.write_text('{"result": "won"}\n')
    with pytest.raises(PlaytestRecordError, match=r":1: not a playtest record"):
        load_records([path])


@pytest.mark.slow
def test_a_terminal_battle_appends_a_record(tmp_path):
    replays = tmp_path / "replays"
    args = build_parser().parse_args(
        ["play", "--opponent", "random", "--seed", "3", "--replays", str(replays)]
    )
    answers = iter(["1", "forfeit", "y", "4"])
    code = play_command(args, input_fn=lambda prompt: next(answers), output=io.StringIO())
    assert code == 0
    [line] = (replays / "playtest.jsonl").read_text().splitlines()
    saved = json.loads(line)
    assert (saved["front_end"], saved["opponent"], saved["result"]) == (
        "terminal", "random", "forfeit",
    )  # fmt: skip
    assert saved["rating"] == 4 and saved["seed"] == 3 and saved["turns"] >= 1
    assert len(saved["decision_seconds"]) == 1 and len(saved["opponent_seconds"]) >= 1
    assert (replays / saved["replay"]).is_file()


@pytest.mark.slow
def test_ctrl_d_forfeits_and_still_counts_but_a_broken_battle_does_not(tmp_path):
    replays = tmp_path / "replays"
    args = build_parser().parse_args(["play", "--opponent", "random", "--replays", str(replays)])

    def leave(prompt: str) -> str:
        raise EOFError  # Ctrl-D at the first prompt: a forfeit

    assert play_command(args, input_fn=leave, output=io.StringIO()) == 1
    [line] = (replays / "playtest.jsonl").read_text().splitlines()
    assert (json.loads(line)["ended_by"], json.loads(line)["result"]) == ("eof", "forfeit")
    broken = PlayResult("gen9randombattle", "Tester", "random", seed=1, log="|turn|1")
    assert not broken.ended
    save_battle(broken, tmp_path / "broken", opponent_spec="random")
    assert sorted(p.suffix for p in (tmp_path / "broken").iterdir()) == [".json", ".log"]


@pytest.mark.timeout(120)
def test_the_report_command(tmp_path):
    folder = tmp_path / "replays"
    folder.mkdir()
    (folder / "playtest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "pokegym.cli", "playtest", "report"]
    done = subprocess.run(
        [*command, "--records", str(folder), "--out", str(tmp_path / "report")],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "| abyssal | 10 |" in done.stdout and "playtest.png" in done.stdout
    assert (tmp_path / "report" / "playtest.png").is_file()
    missing = subprocess.run(
        [*command, "--records", str(tmp_path / "nowhere")],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert missing.stderr.startswith("pokegym: error: No playtest records")
