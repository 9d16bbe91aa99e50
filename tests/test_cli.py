"""The ``pokegym`` command line, run as a real subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pokegym.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pokegym: error: ")
    for fragment in fragments:
        assert fragment in lines[0]


def battle_records(path: Path) -> list[dict]:
    payload = json.loads(path.read_text())
    return [{k: v for k, v in b.items() if k != "seconds"} for b in payload["battles"]]


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_battle_summary_and_json(tmp_path):
    out = tmp_path / "match.json"
    result = run_cli(
        "battle", "--format", "gen9randombattle", "--p1", "random", "--p2", "max_power",
        "--battles", "4", "--seed", "1", "--quiet", "--json", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("[Gen 9] Random Battle: random vs max_power, 4 battles")
    assert any(line.startswith("4 battles") for line in lines)
    summary = {line.split()[0]: line for line in lines if "win rate" in line}
    assert set(summary) == {"random", "max_power"}

    payload = json.loads(out.read_text())
    assert payload["format"] == "gen9randombattle"
    assert payload["agents"] == ["random", "max_power"]
    battles = payload["battles"]
    assert len(battles) == 4
    # Sides alternate between battles.
    assert [tuple(b["seats"]) for b in battles] == [(0, 1), (1, 0), (0, 1), (1, 0)]
    for name, k in (("random", 0), ("max_power", 1)):
        wins = sum(1 for b in battles if b["winner"] == k)
        assert f"wins {wins:>4}" in summary[name]
    assert all(b["winner"] in (0, 1, None) and b["turns"] >= 1 for b in battles)

    # The same seed plays the same match.
    again = tmp_path / "again.json"
    result = run_cli(
        "battle", "--format", "gen9randombattle", "--p1", "random", "--p2", "max_power",
        "--battles", "4", "--seed", "1", "--quiet", "--json", str(again),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert battle_records(again) == battle_records(out)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_battle_with_teams_and_replays(tmp_path, rain_team):
    team = tmp_path / "rain.txt"
    team.write_text(rain_team)
    replays = tmp_path / "replays"
    result = run_cli(
        "battle", "--format", "gen9ou", "--p1", "max_power:seed=1", "--p2", "max_power:seed=2",
        "--p1-team", str(team), "--battles", "2", "--quiet", "--replays", str(replays),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "max_power (A) vs max_power (B)" in result.stdout
    logs = sorted(replays.glob("*.log"))
    assert len(logs) == 2
    for log in logs:
        text = log.read_text()
        assert "|win|" in text or "|tie" in text
        assert "Pelipper" in text or "Barraskewda" in text or "Iron Treads" in text
    # Each side's player is the agent that sat there; sides alternate between battles.
    seated = [
        [line for line in log.read_text().splitlines() if line.startswith("|player|")]
        for log in logs
    ]
    assert seated[0] == ["|player|p1|max_power (A)||", "|player|p2|max_power (B)||"]
    assert seated[1] == ["|player|p1|max_power (B)||", "|player|p2|max_power (A)||"]
    for log in logs:
        win = [line for line in log.read_text().splitlines() if line.startswith("|win|")]
        assert all(line in ("|win|max_power (A)", "|win|max_power (B)") for line in win)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_bad_format_is_a_one_line_error():
    result = run_cli("battle", "--format", "gen9oo", "--battles", "2", "--quiet")
    assert result.returncode == 2
    assert_one_line_error(result, "Unknown battle format 'gen9oo'", "gen9ou")


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_unknown_agent_is_a_one_line_error():
    result = run_cli("battle", "--p1", "no_such_agent", "--battles", "1", "--quiet")
    assert_one_line_error(result, "no_such_agent", "max_power", "random")


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_missing_team_file_is_a_one_line_error(tmp_path):
    missing = tmp_path / "nope.txt"
    result = run_cli(
        "battle", "--format", "gen9ou", "--p1-team", str(missing), "--battles", "1", "--quiet"
    )
    assert_one_line_error(result, str(missing))


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_team_file_that_is_not_utf8_is_a_one_line_error(tmp_path, rain_team):
    team = tmp_path / "latin1.txt"
    team.write_bytes(rain_team.replace("Pelipper", "Pélipper").encode("latin-1"))
    result = run_cli(
        "battle", "--format", "gen9ou", "--p1-team", str(team), "--battles", "1", "--quiet"
    )
    assert_one_line_error(result, str(team), "UTF-8")


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("pairs", "fragments"),
    [
        ("random:zzz", ["'zzz'", "max_power, random"]),
        ("random", ["'random'", "a:b"]),
        (",", ["no pair"]),
        ("random:max_power:random", ["'random:max_power:random'", "a:b"]),
        ("random:random", ["itself"]),
    ],
)
def test_bad_pairs_are_one_line_errors(tmp_path, pairs, fragments):
    result = run_cli(
        "compare", "--agents", "max_power,random", "--pairs", pairs, "--battles", "1",
        "--out", str(tmp_path), "--quiet",
    )  # fmt: skip
    assert result.returncode == 2
    assert_one_line_error(result, "--pairs", *fragments)


@pytest.mark.timeout(60)
def test_usage_errors():
    result = run_cli("battle", "--battles", "0")
    assert result.returncode == 2
    assert "--battles must be at least 1" in result.stderr
    assert "Traceback" not in result.stderr
    result = run_cli("fly")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_showdown_status_console_script(tmp_path):
    script = Path(sys.executable).with_name("pokegym")
    command = [str(script)] if script.exists() else [shutil.which("pokegym") or "pokegym"]
    result = subprocess.run(
        [*command, "showdown", "status", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("node: ")
    assert any(line.startswith("showdown: ") and "installed at" in line for line in lines)
    assert any(line.startswith("server: nothing listens on 127.0.0.1:1") for line in lines)


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.timeout(60)
def test_showdown_status_sees_a_running_server(local_server):
    result = run_cli("showdown", "status", "--port", str(local_server.port))
    assert result.returncode == 0, result.stderr
    assert f"server: a Showdown server answers on 127.0.0.1:{local_server.port}" in result.stdout


def test_commands_of_upper_layers_come_through_entry_points():
    """`pokegym train ...` is found through the pokegym.commands entry points and gets its
    own options untouched (including --help and --flags)."""
    result = run_cli("train", "--help")
    assert result.returncode == 0, result.stderr
    assert "ppo" in result.stdout
    result = run_cli("-v", "train", "nosuchmethod", "--steps", "5")
    assert result.returncode == 2
    assert "unknown method 'nosuchmethod'" in result.stderr
    listed = run_cli("--help")
    assert "train" in listed.stdout


def test_upper_layer_commands_are_listed_with_their_own_first_line():
    listed = run_cli("--help").stdout
    assert "Showdown replays as data" in listed  # train.replays_cli's docstring
    assert "run one of the project's benchmarks" in listed  # bench.cli's
    assert "(from " not in listed  # every plugin's docstring was read


def test_bench_names_its_benchmarks_and_refuses_unknown_ones():
    listed = run_cli("bench", "list")
    assert listed.returncode == 0
    for name in ("env", "calc", "worldmodel", "search_speed", "engine_oracle", "paired"):
        assert f"  {name} " in listed.stdout
    refused = run_cli("bench", "nosuch")
    assert refused.returncode == 2
    assert "no benchmark named 'nosuch'" in refused.stderr
    assert "pokegym bench list" in refused.stderr
