"""Puzzle suites: the shipped 1v1 data, its generator, the runner and the env."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import gymnasium as gym
import pytest
from poke_env.data import GenData
from poke_env.data.normalize import to_id_str

import pokegym  # noqa: F401  (registers the env ids)
from pokegym.agents import make_agent
from pokegym.puzzles import (
    ScenarioIndexError,
    SuiteFileError,
    UnknownSuiteError,
    load_suite,
)
from pokegym.puzzles.attrition import best_move, is_attrition_set, type_multiplier
from pokegym.puzzles.build import BuildConfig, BuildConfigError, build_suite, draw_candidate
from pokegym.puzzles.cli import main as puzzles_main
from pokegym.puzzles.mechanic import MechanicLine
from pokegym.puzzles.mistakes import (
    MISTAKES,
    agent_moves,
    repeated_resisted_hits,
    repeated_resisted_move,
)
from pokegym.puzzles.play import (
    AgentScore,
    Outcome,
    format_table,
    play_scenario,
    play_teams,
    play_teams_logged,
    puzzle_setup,
    start_scenario,
)
from pokegym.puzzles.scenarios import export_set, save_suite
from pokegym.puzzles.switcher import Switcher, register_puzzle_agents
from pokegym.showdown.simulator import Simulator
from pokegym.stats import wilson_interval


@pytest.fixture(scope="module")
def suite():
    return load_suite("1v1")


@pytest.fixture(scope="module")
def tera_suite():
    return load_suite("tera")


def _config(suite) -> BuildConfig:
    return BuildConfig(
        suite=suite.name, seed=suite.seed, n=len(suite), tries=suite.tries,
        reference=suite.reference, opponent=suite.opponent, format=suite.format,
        max_turns=suite.max_turns,
    )  # fmt: skip


# ------------------------------------------------------------------ data, no Node


def test_shipped_suite_is_a_thousand_gen8_scenarios(suite) -> None:
    assert suite.name == "1v1" and suite.format == "gen8randombattle"
    assert len(suite) == 1000
    assert suite.reference == "abyssal"
    candidates = [s.candidate for s in suite.scenarios]
    assert candidates == sorted(set(candidates))  # kept in the order they were drawn
    assert suite.candidates > candidates[-1]
    for scenario in suite.scenarios[:50]:
        assert all(text.count("\n- ") >= 1 for text in scenario.teams)
        assert all("\n\n" not in text.strip() for text in scenario.teams)  # one Pokémon
        assert 0 <= scenario.reference_try < suite.tries


def test_bad_suite_names_and_indices_are_named_errors(suite, tmp_path: Path) -> None:
    with pytest.raises(UnknownSuiteError, match=r"No puzzle suite named 'nope'.*1v1"):
        load_suite("nope")
    for index in (-1, 1000, "3", True):
        with pytest.raises(ScenarioIndexError, match="scenarios 0 to 999"):
            suite.scenario(index)
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(b"not gzip")
    with pytest.raises(SuiteFileError, match="not a puzzle suite"):
        load_suite(broken)
    with pytest.raises(BuildConfigError, match="at least 1"):
        BuildConfig(n=0)
    with pytest.raises(UnknownSuiteError):
        BuildConfig(suite="tera2")


def test_suite_file_round_trip_is_byte_stable(suite, tmp_path: Path) -> None:
    small = replace(suite, scenarios=suite.scenarios[:3])
    first = save_suite(small, tmp_path / "a.json.gz").read_bytes()
    again = save_suite(load_suite(tmp_path / "a.json.gz"), tmp_path / "b.json.gz").read_bytes()
    assert first == again
    assert json.loads(gzip.decompress(first))["scenarios"][2] == suite.scenarios[2].to_json()


def test_table_has_wilson_intervals() -> None:
    score = AgentScore("max_power", [Outcome(i, i < 3, 5, False, 0.1) for i in range(4)])
    small = replace(load_suite("1v1"), scenarios=())
    table = format_table(small, [score])
    low, high = wilson_interval(3, 4)
    assert f"max_power       3      4   75.0%  [{low:.1%}, {high:.1%}]" in table
    assert score.to_json()["results"][3] == {
        "scenario": 3, "won": False, "turns": 5, "truncated": False
    }  # fmt: skip


def test_cli_unknown_suite_exits_with_the_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert puzzles_main(["run", "--suite", "nope", "--agents", "random"]) == 2
    assert "No puzzle suite named 'nope'" in capsys.readouterr().err
    assert puzzles_main(["run", "--agents", "random", "--start", "1000"]) == 2
    assert "there is no scenario 1000" in capsys.readouterr().err


_LOG = """|turn|1
|move|p1a: Duraludon|Draco Meteor|p2a: Sandslash
|-resisted|p2a: Sandslash
|-damage|p2a: Sandslash|80/100
|move|p2a: Sandslash|Earthquake|p1a: Duraludon
|-supereffective|p1a: Duraludon
|turn|2
|switch|p2a: Weezing|Weezing-Galar, L85, F|100/100
|move|p1a: Duraludon|Draco Meteor|p2a: Weezing
|-immune|p2a: Weezing
|turn|3
|switch|p2a: Sandslash|Sandslash-Alola, L87, M|80/100
|move|p1a: Duraludon|Draco Meteor|p2a: Sandslash
|-resisted|p2a: Sandslash
|turn|4
|move|p1a: Duraludon|Flash Cannon|p2a: Sandslash
|-resisted|p2a: Sandslash
|turn|5
|move|p1a: Duraludon|Body Press|p2a: Sandslash
|-supereffective|p2a: Sandslash
|move|p2a: Sandslash|Earthquake|p1a: Duraludon
|-resisted|p1a: Duraludon
|turn|6
|move|p1a: Duraludon|Flash Cannon|p2a: Sandslash
|-resisted|p2a: Sandslash
"""


def test_mistakes_are_counted_from_the_log() -> None:
    uses = agent_moves(_LOG)
    assert [(u.turn, u.move, u.resisted) for u in uses] == [
        (1, "Draco Meteor", True), (2, "Draco Meteor", True), (3, "Draco Meteor", True),
        (4, "Flash Cannon", True), (5, "Body Press", False), (6, "Flash Cannon", True),
    ]  # fmt: skip
    # stall: turns 2, 3 and 4 follow a move that met a resist; the opponent's resisted
    # Earthquake is not the agent's.
    assert repeated_resisted_hits(_LOG) == 3
    # switching: only Draco Meteor again after it was resisted (turns 2 and 3).
    assert repeated_resisted_move(_LOG) == 2
    assert repeated_resisted_hits("") == repeated_resisted_move("|turn|1\n") == 0


def test_table_with_a_named_mistake_has_its_rate_and_interval() -> None:
    small = replace(load_suite("switching"), scenarios=())
    outcomes = [Outcome(i, i == 0, 5, False, 0.1, [0, 2, 1, 0, 0][i]) for i in range(5)]
    score = AgentScore("max_power", outcomes)
    table = format_table(small, [score])
    low, high = wilson_interval(2, 5)
    assert "Mistake: repeated a resisted attack" in table
    assert f"      2   40.0%  [{low:.1%}, {high:.1%}]" in table
    assert table.rstrip().endswith("0.60")
    data = score.to_json()
    assert data["mistake"]["battles"] == 2 and data["mistake"]["per_battle"] == pytest.approx(0.6)
    assert data["results"][1]["mistakes"] == 2


def _sets(text: str) -> list[dict]:
    sets = []
    for block in text.strip().split("\n\n"):
        head = block.splitlines()[0].split("@")[0].strip()
        for suffix in (" (M)", " (F)"):
            head = head.removesuffix(suffix)
        species = head[head.rindex("(") + 1 : -1] if head.endswith(")") else head
        moves = [line[2:] for line in block.splitlines() if line.startswith("- ")]
        sets.append({"species": species, "moves": moves})
    return sets


def test_shipped_stall_and_switching_teams_are_what_the_suites_say() -> None:
    stall, switching = load_suite("stall"), load_suite("switching")
    assert len(stall) >= 100 and len(switching) >= 100
    assert stall.opponent == "abyssal" and switching.opponent == "switcher"
    for scenario in stall.scenarios:
        mine, theirs = (_sets(t) for t in scenario.teams)
        assert len(mine) == len(theirs) == 3
        assert all(is_attrition_set(s) for s in theirs)
    for scenario in switching.scenarios:
        mine, theirs = (_sets(t) for t in scenario.teams)
        assert len(mine) == len(theirs) == 2
        move = best_move(mine[0])
        move_type = GenData.from_gen(8).moves[move]["type"]
        assert all(type_multiplier(move_type, s["species"]) < 1 for s in theirs)


# ------------------------------------------------------------- the real simulator


@pytest.mark.slow
@pytest.mark.parametrize("name", ["stall", "switching"])
def test_reference_wins_a_shipped_scenario_on_its_try_and_the_log_is_counted(name: str) -> None:
    """The filter played again on a shipped scenario: the reference agent wins its try;
    the runner counts the named mistake from the battle's log."""
    suite = load_suite(name)
    scenario = suite.scenario(3)
    register_puzzle_agents()
    setup = puzzle_setup(suite)
    sim = setup.backend.simulator
    try:
        candidate = draw_candidate(sim, _config(suite), scenario.candidate)
        seed = candidate.try_seeds[scenario.reference_try]
        reference, opponent = make_agent(suite.reference), make_agent(suite.opponent)
        won, _, _, log = play_teams_logged(
            setup, scenario.teams, seed, reference, opponent, log="spectator"
        )
        assert won
        assert agent_moves(log) and "|win|" in log
        outcome = play_scenario(
            setup, scenario, make_agent("max_power"), opponent, MISTAKES[name][1]
        )
        assert outcome.mistakes is not None and outcome.mistakes >= 0
    finally:
        setup._close_battle()


@pytest.mark.slow
def test_switcher_switches_to_the_resist_of_the_last_move() -> None:
    """In a live switching scenario, after the agent's best move hits the switcher's
    active Pokémon that does not resist it, the switcher brings in the one that does."""
    suite = load_suite("switching")
    setup = puzzle_setup(suite)
    switcher = Switcher()
    try:
        for scenario in suite.scenarios[:20]:
            mine = _sets(scenario.teams[0])
            move = best_move(mine[0])
            session = start_scenario(setup, scenario.teams, scenario.battle_seed)
            battle, theirs = session.battles[0], session.battles[1]
            order = next(m for m in battle.available_moves if m.id == move)
            session.choose({0: f"move {battle.available_moves.index(order) + 1}", 1: "move 1"})
            if session.finished or not session.needs_choice(1):
                session.close()
                continue
            choice = switcher.choose(theirs)
            active = theirs.active_pokemon
            threat = theirs.opponent_active_pokemon.moves[move]
            if active.damage_multiplier(threat) >= 1 and theirs.available_switches:
                assert choice.order in theirs.available_switches
            else:
                assert choice.order in theirs.available_moves
            session.close()
            setup.session = None
    finally:
        setup._close_battle()


@pytest.mark.slow
def test_switching_env_resets_to_a_scenario_against_the_switcher() -> None:
    env = gym.make("Showdown-PuzzleSwitching-v0")
    try:
        obs, info = env.reset(options={"scenario": 10})
        assert info["scenario"] == 10
        inner = env.unwrapped
        assert isinstance(inner.opponent, Switcher)
        assert len(inner.battle.team) == 2
        terminated = truncated = False
        while not (terminated or truncated):
            mask = obs["action_mask"]
            obs, _, terminated, truncated, info = env.step(int(mask.nonzero()[0][0]))
        assert info["scenario"] == 10
    finally:
        env.close()


def test_shipped_tera_suite_is_gen9_with_tera_types(tera_suite) -> None:
    assert tera_suite.format == "gen9randombattle" and len(tera_suite) >= 100
    assert all("Tera Type: " in s.teams[0] for s in tera_suite.scenarios)
    candidates = [s.candidate for s in tera_suite.scenarios]
    assert candidates == sorted(set(candidates))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "indices"),
    [
        ("1v1", (0, 1, 517, 999)),
        ("tera", (0, 99)),
        ("dynamax", (0, 57, 99)),
        ("stall", (0, 99)),
        ("switching", (0, 99)),
    ],
)
def test_shipped_scenarios_are_what_the_generator_makes(name: str, indices) -> None:
    suite = load_suite(name)
    config = _config(suite)
    sim = Simulator(timeout=120)
    try:
        for index in indices:
            scenario = suite.scenario(index)
            candidate = draw_candidate(sim, config, scenario.candidate)
            assert candidate.teams == scenario.teams
            assert candidate.battle_seed == scenario.battle_seed
    finally:
        sim.close()


@pytest.mark.slow
@pytest.mark.parametrize("battle_format", ["gen8randombattle", "gen9randombattle"])
def test_export_reads_back_as_the_generated_set(battle_format: str) -> None:
    sim = Simulator(timeout=120)
    sim.ensure_running()
    try:
        (sets,) = sim.call([["generate", battle_format, "11,22,33,44"]])
        for generated in sets:
            (read,) = sim.call([["import", export_set(generated)]])
            got = read[0]
            for key in ("species", "item", "ability", "level", "moves"):
                assert got[key] == generated[key], key
            assert got["evs"] == generated["evs"]
            assert {k: v for k, v in got["ivs"].items()} == generated["ivs"]
            assert bool(got.get("gigantamax")) == bool(generated.get("gigantamax"))
            assert got.get("teraType") == generated.get("teraType")
    finally:
        sim.close()


@pytest.mark.slow
def test_building_again_keeps_the_same_scenarios_and_the_reference_wins_them(suite) -> None:
    """The filter played again: the reference agent wins the same candidates."""
    rebuilt = build_suite(replace(_config(suite), n=3))
    assert rebuilt.scenarios == suite.scenarios[:3]
    assert rebuilt.candidates == suite.scenarios[2].candidate + 1


@pytest.mark.slow
def test_terastallizing_decides_a_shipped_tera_scenario(tera_suite) -> None:
    """Played out again: the Tera line wins and the non-Tera line loses."""
    scenario = tera_suite.scenario(0)
    setup = puzzle_setup(tera_suite)
    reference, opponent = make_agent(tera_suite.reference), make_agent(tera_suite.opponent)
    try:
        seed = scenario.battle_seed
        tera = MechanicLine(reference, "tera", forced=True)
        assert play_teams(setup, scenario.teams, seed, tera, opponent)[0]
        assert not play_teams(
            setup, scenario.teams, seed, MechanicLine(reference, "tera", forced=False), opponent
        )[0]
    finally:
        setup._close_battle()


def test_shipped_dynamax_suite_is_gen8_one_pokemon_a_side() -> None:
    dynamax_suite = load_suite("dynamax")
    assert dynamax_suite.format == "gen8randombattle" and len(dynamax_suite) >= 100
    assert dynamax_suite.reference == "abyssal" and dynamax_suite.tries == 2
    for scenario in dynamax_suite.scenarios:
        assert all("\n\n" not in text.strip() for text in scenario.teams)
    candidates = [s.candidate for s in dynamax_suite.scenarios]
    assert candidates == sorted(set(candidates))


@pytest.mark.slow
def test_dynamaxing_decides_a_shipped_dynamax_scenario() -> None:
    """Played out again: the Dynamax line wins and the non-Dynamax line loses."""
    dynamax_suite = load_suite("dynamax")
    scenario = dynamax_suite.scenario(0)
    setup = puzzle_setup(dynamax_suite)
    reference = make_agent(dynamax_suite.reference)
    opponent = make_agent(dynamax_suite.opponent)
    try:
        seed = scenario.battle_seed
        with_dynamax = MechanicLine(reference, "dynamax", forced=True)
        assert play_teams(setup, scenario.teams, seed, with_dynamax, opponent)[0]
        without = MechanicLine(reference, "dynamax", forced=False)
        assert not play_teams(setup, scenario.teams, seed, without, opponent)[0]
    finally:
        setup._close_battle()


@pytest.mark.slow
def test_dynamax_env_resets_to_a_dynamax_scenario() -> None:
    env = gym.make("Showdown-PuzzleDynamax-v0")
    try:
        _, info = env.reset(options={"scenario": 7})
        assert info["scenario"] == 7
        assert env.unwrapped.battle.can_dynamax
        assert env.unwrapped.suite.name == "dynamax"
    finally:
        env.close()


@pytest.mark.slow
def test_tera_env_resets_to_a_tera_scenario(tera_suite) -> None:
    env = gym.make("Showdown-PuzzleTera-v0")
    try:
        _, info = env.reset(options={"scenario": 5})
        assert info["scenario"] == 5
        assert env.unwrapped.battle.can_tera
        assert env.unwrapped.battle.active_pokemon.tera_type is not None
    finally:
        env.close()


@pytest.mark.slow
def test_env_resets_to_the_asked_scenario(suite) -> None:
    env = gym.make("Showdown-Puzzle1v1-v0", opponent="max_power")
    try:
        for index in (4, 250):
            obs, info = env.reset(options={"scenario": index})
            assert info["scenario"] == index
            inner = env.unwrapped
            scenario = suite.scenario(index)
            sim = inner.backend.simulator
            (sides,) = sim.call([["teams", inner.session.battle_id]])
            for side, text in zip(sides, scenario.teams, strict=True):
                assert len(side) == 1
                (expected,) = sim.call([["import", text]])
                assert side[0]["species"] == expected[0]["species"]
                assert side[0]["moves"] == expected[0]["moves"]
                assert side[0]["level"] == expected[0]["level"]
            # The agent's poke-env view holds the scenario's Pokémon and sees the other.
            assert inner.battle.active_pokemon.species == to_id_str(sides[0][0]["species"])
            assert inner.battle.opponent_active_pokemon.species == to_id_str(sides[1][0]["species"])
            terminated = truncated = False
            while not (terminated or truncated):
                mask = obs["action_mask"]
                obs, _, terminated, truncated, info = env.step(int(mask.nonzero()[0][0]))
            assert info["scenario"] == index
        obs, info = env.reset(seed=3)
        assert 0 <= info["scenario"] < len(suite)
        with pytest.raises(ScenarioIndexError, match="no scenario 1000"):
            env.reset(options={"scenario": 1000})
    finally:
        env.close()


@pytest.mark.slow
def test_run_on_five_scenarios_prints_a_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "table.json"
    argv = ["run", "--suite", "1v1", "--agents", "random,abyssal", "--limit", "5"]
    assert puzzles_main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    data = json.loads(out.read_text())
    assert [a["agent"] for a in data["agents"]] == ["random", "abyssal"]
    for row in data["agents"]:
        assert [r["scenario"] for r in row["results"]] == [0, 1, 2, 3, 4]
        solved = sum(r["won"] for r in row["results"])
        low, high = wilson_interval(solved, 5)
        assert row["solved"] == solved and row["ci95"] == pytest.approx([low, high])
        name = row["agent"]
        assert f"{name:<7}  {solved:>6}      5  {solved / 5:>6.1%}  [{low:.1%}, {high:.1%}]" in (
            printed
        )
