"""A tournament survives interruption: finished battles are journaled as they end, and
the same command resumes with only the missing battles, to the same per-battle results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from pokegym.arena import Arena, ArenaConfig, run_arena
from pokegym.journal import JOURNAL_NAME, BattleJournal, JournalError, JournalMismatchError

AGENTS = ["max_power", "random"]


def config(**changes) -> ArenaConfig:
    values = {"agents": AGENTS, "battles_per_pair": 8, "seed": 21, "concurrency": 3}
    return ArenaConfig(**{**values, **changes})


def per_battle(battles) -> list[dict]:
    """What a battle's outcome is, without its wall time."""
    rows = [b if isinstance(b, dict) else asdict(b) for b in battles]
    keep = ("pair", "index", "seed", "p1", "p2", "winner", "turns", "truncated", "timeout")
    return [{k: (list(r[k]) if k == "pair" else r[k]) for k in keep} for r in rows]


@pytest.fixture(scope="module")
def uninterrupted():
    """The reference: the tournament played in one go, without a journal."""
    return run_arena(config())


class Interrupt:
    """A progress callback that presses Ctrl-C after ``after`` finished battles."""

    def __init__(self, after: int):
        self.after, self.seen = after, 0

    def __call__(self, record) -> None:
        self.seen += 1
        if self.seen == self.after:
            raise KeyboardInterrupt


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_an_interrupted_tournament_resumes_to_the_same_battles(tmp_path, uninterrupted):
    path = tmp_path / JOURNAL_NAME
    arena = Arena(config())
    with BattleJournal(path, arena.identity()) as journal:
        with pytest.raises(KeyboardInterrupt):
            arena.run(Interrupt(after=3), journal)
    # The interruption stopped the simulators, and the finished battles are on disk.
    assert all(sim.pid is None for sim in arena.simulators)
    lines = path.read_text().splitlines()
    assert len(lines) == 1 + 3
    assert json.loads(lines[0])["tournament"]["seed"] == 21

    # A second interruption, with another concurrency (it changes no outcome).
    with pytest.raises(KeyboardInterrupt):
        run_arena(config(concurrency=1), Interrupt(after=2), journal=path)
    assert len(path.read_text().splitlines()) == 1 + 5

    played = []
    result = run_arena(config(), played.append, journal=path)
    assert result.resumed == 5 and len(played) == 3  # only the missing battles ran
    assert per_battle(result.battles) == per_battle(uninterrupted.battles)
    # Decision statistics of the earlier runs came back from the journal.
    for name in AGENTS:
        assert result.agent_stats[name].decisions == uninterrupted.agent_stats[name].decisions
        assert result.agent_stats[name].alignable == uninterrupted.agent_stats[name].alignable
        assert len(result.agent_stats[name].latencies) == result.agent_stats[name].decisions
    assert (
        result.to_dict()["agents"]["max_power"]["wins"] == uninterrupted.record("max_power")["wins"]
    )

    # Everything is in: running again plays nothing and gives the same table.
    again = run_arena(config(), played.append, journal=path)
    assert again.resumed == 8 and len(played) == 3
    assert per_battle(again.battles) == per_battle(uninterrupted.battles)
    assert len(path.read_text().splitlines()) == 1 + 8


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_battle_cut_short_on_disk_is_played_again(tmp_path, uninterrupted):
    """A process killed while writing leaves half a line: it is dropped, the battle is
    played again; a battle written twice counts once."""
    path = tmp_path / JOURNAL_NAME
    with pytest.raises(KeyboardInterrupt):
        run_arena(config(), Interrupt(after=3), journal=path)
    lines = path.read_bytes().split(b"\n")[:-1]
    path.write_bytes(b"\n".join([*lines, lines[1]]) + b"\n" + lines[2][:40])
    identity = json.loads(lines[0])["tournament"]
    with BattleJournal(path, identity) as journal:
        assert len(journal) == 3
    assert path.read_bytes().endswith(b"\n")  # the broken tail is gone
    result = run_arena(config(), journal=path)
    assert result.resumed == 3
    assert per_battle(result.battles) == per_battle(uninterrupted.battles)


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"seed": 22}, "seed"),
        ({"battles_per_pair": 10}, "battles_per_pair"),
        ({"agents": ["max_power", "one_step"]}, "agents"),
        ({"battle_format": "gen8randombattle"}, "battle_format"),
        ({"max_turns": 100}, "max_turns"),
    ],
)
def test_a_journal_of_another_tournament_is_refused(tmp_path, change, named):
    path = tmp_path / JOURNAL_NAME
    run_arena(config(battles_per_pair=1), journal=path)
    before = path.read_bytes()
    with pytest.raises(JournalMismatchError, match=rf"another tournament \({named}: ") as error:
        run_arena(config(**{"battles_per_pair": 1, **change}), journal=path)
    assert "--out" in str(error.value)
    assert path.read_bytes() == before
    # Concurrency and the simulator count change no outcome: the journal is accepted.
    result = run_arena(config(battles_per_pair=1, concurrency=1, simulators=1), journal=path)
    assert result.resumed == 1


def test_damaged_and_busy_journals_are_clear_errors(tmp_path):
    identity = {"agents": AGENTS, "seed": 1}
    path = tmp_path / JOURNAL_NAME
    with BattleJournal(path, identity):
        with pytest.raises(JournalError, match="another process"):
            BattleJournal(path, identity)
    path.write_text(path.read_text() + "{not json}\n")
    with pytest.raises(JournalError, match=r"Line 2 .* not JSON"):
        BattleJournal(path, identity)
    path.write_text(json.dumps({"format": "something else"}) + "\n")
    with pytest.raises(JournalError, match="not a version-1 battles file"):
        BattleJournal(path, identity)


# ------------------------------------------------------------------ the command line
def simulator_children(pid: int) -> list[int]:
    """The Showdown simulator processes a process started (its Node children)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"sim_bridge" in cmdline:
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def compare_command(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pokegym.cli", "compare", "--agents", ",".join(AGENTS),
            "--battles", "8", "--seed", "21", "--concurrency", "3", "--out", str(out),
            "--quiet", *extra]  # fmt: skip


def battle_lines(path: Path) -> int:
    try:
        return max(0, path.read_bytes().count(b"\n") - 1)
    except FileNotFoundError:
        return 0


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_compare_stops_on_a_signal_and_the_same_command_resumes(tmp_path, uninterrupted, signum):
    out = tmp_path / "results"
    journal = out / JOURNAL_NAME
    process = subprocess.Popen(
        compare_command(out),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A test run started in the background inherits SIGINT ignored; a terminal's
        # Ctrl-C reaches a command with the default action.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        simulators: list[int] = []
        while battle_lines(journal) < 2 and process.poll() is None:
            simulators = simulator_children(process.pid) or simulators
            time.sleep(0.02)
        simulators = simulator_children(process.pid) or simulators
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pokegym: interrupted"), stderr
    saved = battle_lines(journal)
    assert 2 <= saved < 8
    assert f"{saved} of 8 battles are saved in {journal}" in lines[0]
    assert "run the same command again" in lines[0]
    assert not (out / "results.json").exists()
    assert simulators and not any(alive(pid) for pid in simulators)

    resumed = subprocess.run(compare_command(out), capture_output=True, text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {saved} of 8 battles" in resumed.stdout
    assert f"({saved} from an earlier run, {8 - saved} played now)" in resumed.stdout
    results = json.loads((out / "results.json").read_text())
    assert results["resumed"] == saved
    assert per_battle(results["battles"]) == per_battle(uninterrupted.battles)
    assert battle_lines(journal) == 8
    assert len((out / "battles.csv").read_text().splitlines()) == 1 + 8


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_compare_refuses_a_folder_of_another_tournament(tmp_path):
    out = tmp_path / "results"
    first = subprocess.run(
        compare_command(out, "--pairs", "max_power:random"),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    before = (out / JOURNAL_NAME).read_bytes()
    other = compare_command(out)
    other[other.index("--seed") + 1] = "5"
    result = subprocess.run(other, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pokegym: error: "), result.stderr
    assert "another tournament (seed: 21 there, 5 now)" in lines[0] and "--out" in lines[0]
    assert (out / JOURNAL_NAME).read_bytes() == before
