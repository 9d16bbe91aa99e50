"""The arena over real battles: records, seeds, concurrency, the clock, outputs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import FakeClock

from pokegym.agents import register_agent, split_agent_specs
from pokegym.arena import ArenaConfig, run_arena
from policies import MaxPowerPolicy

ARENA_CLOCK = FakeClock()


class SlowMaxPower(MaxPowerPolicy):
    """Max power, but each decision costs 50 ms on ``ARENA_CLOCK`` (the arena's clock
    where a test installs it) and reports fake LLM usage."""

    def choose(self, battle):
        ARENA_CLOCK.advance(0.05)
        return super().choose(battle)

    def pop_usage(self):
        return {"tokens_in": 100, "calls": 1}


register_agent("slow_max_power", SlowMaxPower)


def outcomes(result):
    return [(b.p1, b.p2, b.winner, b.turns) for b in result.battles]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_round_robin_records_sides_seeds_and_concurrency():
    config = ArenaConfig(agents=["random", "max_power"], battles_per_pair=8, concurrency=4, seed=3)
    result = run_arena(config)
    assert len(result.battles) == 8
    # Sides alternate within a pair.
    assert [b.p1 for b in result.battles] == ["random", "max_power"] * 4
    record = result.record("max_power")
    assert record["wins"] + record["losses"] + record["ties"] == 8
    assert result.record("random")["wins"] == record["losses"]
    rate, low, high = result.win_rate("max_power")
    assert low <= rate <= high
    # Same seed, other concurrency and simulator count: the same battles.
    again = run_arena(
        ArenaConfig(
            agents=["random", "max_power"], battles_per_pair=8, concurrency=1, simulators=2, seed=3
        )
    )
    assert outcomes(again) == outcomes(result)
    other_seed = run_arena(
        ArenaConfig(agents=["random", "max_power"], battles_per_pair=8, concurrency=4, seed=4)
    )
    assert outcomes(other_seed) != outcomes(result)
    # Type alignment is measured and bounded.
    stats = result.agent_stats["max_power"]
    assert 0 <= stats.aligned <= stats.alignable and stats.alignable > 0
    assert stats.decisions == len(stats.latencies) > 0


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_clock_timeouts_are_losses_reported_separately(monkeypatch):
    import pokegym.arena

    # The arena times decisions on a clock that only the slow agent moves: it runs out
    # of its 0.12 s bank at its third decision, whatever the machine's speed.
    ARENA_CLOCK.install(monkeypatch, pokegym.arena)
    config = ArenaConfig(
        agents=["slow_max_power", "max_power"],
        battles_per_pair=2,
        clock_bank=0.12,
        clock_increment=0.0,
        concurrency=2,
    )
    result = run_arena(config)
    assert result.agent_stats["slow_max_power"].decisions == 2 * 3
    assert result.agent_stats["slow_max_power"].latencies == [pytest.approx(0.05)] * 6
    assert all(b.timeout == "slow_max_power" for b in result.battles)
    assert all(b.winner == "max_power" for b in result.battles)
    assert result.record("slow_max_power")["timeouts"] == 2
    assert result.record("slow_max_power")["losses"] == 2
    # Without the clock the slow agent plays its battles out and reports usage.
    result = run_arena(
        ArenaConfig(
            agents=["slow_max_power", "max_power"],
            battles_per_pair=2,
            clock_bank=None,
            max_turns=15,
        )
    )
    assert all(b.timeout is None for b in result.battles)
    usage = result.agent_stats["slow_max_power"].usage
    decisions = result.agent_stats["slow_max_power"].decisions
    assert usage["tokens_in"] == 100 * decisions and usage["calls"] == decisions


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_mirror_ou_and_outputs(tmp_path):
    config = ArenaConfig(
        agents=["max_power", "random"],
        battle_format="gen9ou",
        battles_per_pair=4,
        mirror=True,
        replays=str(tmp_path / "replays"),
    )
    result = run_arena(config)
    written = {p.name for p in result.write(tmp_path)}
    assert {
        "table.txt",
        "results.json",
        "battles.csv",
        "winrate_heatmap.png",
        "ratings.png",
    } <= written
    data = json.loads((tmp_path / "results.json").read_text())
    assert set(data["agents"]) == {"max_power", "random"}
    assert len(data["battles"]) == 4
    assert (
        "max_power vs random" in data["pairs"] and "p_holm" in data["pairs"]["max_power vs random"]
    )
    assert len(list((tmp_path / "replays").glob("*.html"))) == 4
    assert (tmp_path / "winrate_heatmap.png").read_bytes()[:4] == b"\x89PNG"


def test_agent_spec_splitting_and_bad_configs():
    assert split_agent_specs("a,b:x=1,y=2,c") == ["a", "b:x=1,y=2", "c"]
    # a value may hold a colon (a URL): it stays the previous agent's option
    url = "pokellmon:model=openai,model_base_url=http://127.0.0.1:8000/v1"
    assert split_agent_specs(url + ",one_step") == [url, "one_step"]
    assert split_agent_specs("engine:budget=0.9,b:x=http://h:1") == [
        "engine:budget=0.9",
        "b:x=http://h:1",
    ]
    with pytest.raises(ValueError, match="unique"):
        run_arena(ArenaConfig(agents=["random", "random"]))
    with pytest.raises(KeyError):
        run_arena(ArenaConfig(agents=["random", "no_such_agent"]))


@pytest.mark.slow
def test_a_bad_format_leaves_no_simulator_running(monkeypatch):
    """The arena starts its simulators before it can ask Showdown about the format; when
    the format is refused, the simulators it started are stopped again."""
    import pokegym.arena as arena_module
    from pokegym.errors import UnknownFormatError
    from pokegym.showdown.simulator import Simulator

    started: list[Simulator] = []

    class Recorded(Simulator):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(arena_module, "Simulator", Recorded)
    with pytest.raises(UnknownFormatError):
        run_arena(ArenaConfig(agents=["random", "max_power"], battle_format="gen9nosuchformat"))
    assert started and all(sim.pid is None for sim in started)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_compare_cli(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pokegym.cli",
            "compare",
            "--agents",
            "max_power,random",
            "--battles",
            "4",
            "--out",
            str(tmp_path),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr
    assert "max_power vs random" in out.stdout and "Elo" in out.stdout
    assert (tmp_path / "results.json").exists()
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "pokegym.cli",
            "compare",
            "--agents",
            "max_power",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "at least two agents" in bad.stderr
    assert "Traceback" not in bad.stderr
