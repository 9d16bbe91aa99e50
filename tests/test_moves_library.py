"""The move library and the Showdown mod: designed moves in real simulated battles."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from poke_env.battle.move import Move

from pokegym.agents import make_agent
from pokegym.arena import ArenaConfig, run_arena
from pokegym.env import BattleSetup
from pokegym.match import play_battle
from pokegym.moves import MoveDesign, MoveLibrary, MoveLibraryError
from pokegym.showdown.simulator import Simulator
from pokegym.world.data import load_dex

MAGMA_LANCE = MoveDesign(
    "Magma Lance", "Fire", "Physical", 85, 95, 10, "burn", 20, "A spear of molten rock."
)

# Garchomp knows only the designed move, so every move it uses is the designed one.
TEAM = """Garchomp @ Life Orb
Ability: Rough Skin
Tera Type: Fire
EVs: 252 Atk / 4 SpD / 252 Spe
Jolly Nature
- Magma Lance
"""

OPPONENT = """Corviknight @ Leftovers
Ability: Pressure
Tera Type: Dragon
EVs: 248 HP / 252 Def / 8 SpD
Impish Nature
- Brave Bird
- Roost
- U-turn
- Body Press
"""


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MoveLibrary:
    path = tmp_path / "library.json"
    monkeypatch.setenv("POKEGYM_MOVES_FILE", str(path))
    return MoveLibrary()


def test_library_round_trip_and_numbers(library: MoveLibrary) -> None:
    assert len(library) == 0  # an absent file is an empty library
    first = library.add(MAGMA_LANCE, "garchomp", evaluation={"score": 80})
    second = library.add(
        MoveDesign("Tide Hammer", "Water", "Physical", 90, 90, 10), ["Blastoise", "Feraligatr"]
    )
    assert (first.num, second.num) == (20001, 20002)
    assert first.pokemon == ("Garchomp",)  # Showdown's spelling
    reread = MoveLibrary(library.path)
    assert [m.id for m in reread] == ["magmalance", "tidehammer"]
    assert reread.get("Magma Lance").design == MAGMA_LANCE
    assert reread.get("magma lance").evaluation == {"score": 80}
    data = json.loads(library.path.read_text())
    assert data["version"] == 1 and data["moves"][0]["entry"]["basePower"] == 85
    assert data["moves"][0]["entry"]["secondary"] == {"chance": 20, "status": "brn"}


def test_library_refuses_duplicates_showdown_names_and_unknown_species(
    library: MoveLibrary,
) -> None:
    library.add(MAGMA_LANCE, "Garchomp")
    with pytest.raises(MoveLibraryError, match="already in the library"):
        library.add(MAGMA_LANCE, "Garchomp")
    replaced = library.add(
        MoveDesign("Magma Lance", "Fire", "Physical", 80, 100, 10), "Garchomp", replace=True
    )
    assert replaced.num == 20001 and len(library) == 1
    with pytest.raises(MoveLibraryError, match="name of a Showdown move"):
        library.add(MoveDesign("Flamethrower", "Fire", "Special", 90, 100, 15), "Charizard")
    with pytest.raises(MoveLibraryError, match="Unknown Pokémon 'Garchompp'"):
        library.add(MoveDesign("Sand Lance", "Ground", "Physical", 80, 100, 10), "Garchompp")
    removed = library.remove("magma lance")
    assert removed.design.power == 80 and len(library) == 0
    with pytest.raises(MoveLibraryError, match="No move named"):
        library.remove("Magma Lance")


def test_corrupt_library_raises_and_is_left_untouched(library: MoveLibrary) -> None:
    library.path.write_text("{not json")
    with pytest.raises(MoveLibraryError, match="cannot be read"):
        library.moves()
    with pytest.raises(MoveLibraryError, match="cannot be read"):
        library.add(MAGMA_LANCE, "Garchomp")
    assert library.path.read_text() == "{not json"
    library.path.write_text(json.dumps({"version": 99, "moves": []}))
    with pytest.raises(MoveLibraryError, match="version 1"):
        library.moves()


def test_activation_teaches_poke_env_and_the_world_model(library: MoveLibrary) -> None:
    library.add(MAGMA_LANCE, "Garchomp")
    assert library.activate() == ["magmalance"]
    move = Move("magmalance", 9)
    assert (move.base_power, move.accuracy, move.type.name) == (85, 0.95, "FIRE")
    assert load_dex(9).moves["magmalance"]["basePower"] == 85


@pytest.mark.slow
def test_designed_move_is_used_in_a_real_battle(library: MoveLibrary) -> None:
    library.add(MAGMA_LANCE, "Garchomp")
    sim = Simulator()
    try:
        setup = BattleSetup(
            "gen9designedmoves",
            team=TEAM,
            opponent_team=OPPONENT,
            simulator=sim,
            log_battles="spectator",
        )
        # Showdown's validator accepts the move on the Pokémon it was approved for only.
        assert sim.validate_team("gen9designedmoves", TEAM)["problems"] is None
        tusk = TEAM.replace("Garchomp", "Great Tusk").replace("Rough Skin", "Protosynthesis")
        problems = sim.validate_team("gen9designedmoves", tusk)["problems"]
        assert problems and "can't learn Magma Lance" in " ".join(problems)
        session = setup._start_session(np.random.default_rng(1))
        try:
            ours = session.battles[0]
            assert set(ours.active_pokemon.moves) == {"magmalance"}
            assert ours.active_pokemon.moves["magmalance"].base_power == 85
            play_battle(
                session,
                (make_agent("max_power"), make_agent("max_power")),
                setup.codec,
                np.random.default_rng(1),
                max_turns=100,
            )
            assert session.finished
            log = session.replay_log()
        finally:
            session.close()
        assert "|move|p1a: Garchomp|Magma Lance|p2a: Corviknight" in log
        assert "|-damage|p2a: Corviknight|" in log  # it hit, with the designed power
    finally:
        sim.close()


@pytest.mark.slow
def test_designed_random_teams_always_hold_a_designed_pokemon(library: MoveLibrary) -> None:
    library.add(MAGMA_LANCE, "Garchomp")
    sim = Simulator()
    try:
        sim.ensure_running()
        seeds = [f"{k},{k + 1},{k + 2},{k + 3}" for k in range(1, 9)]
        teams = sim.call([["generate", "gen9designedmovesrandombattle", s] for s in seeds])
        for team in teams:
            chomp = [s for s in team if s["species"] == "Garchomp"]
            assert len(chomp) == 1 and "magmalance" in [
                m.lower().replace(" ", "") for m in chomp[0]["moves"]
            ]
            assert len(team) == 6
        # The same seed gives the same team: the designed draw uses the generator's PRNG.
        again = sim.call([["generate", "gen9designedmovesrandombattle", seeds[0]]])[0]
        assert again == teams[0]
    finally:
        sim.close()


@pytest.mark.slow
def test_designed_random_battles_in_the_arena(library: MoveLibrary, tmp_path: Path) -> None:
    library.add(MAGMA_LANCE, "Garchomp")
    config = ArenaConfig(
        agents=["max_power", "random"],
        battle_format="gen9designedmovesrandombattle",
        battles_per_pair=4,
        concurrency=2,
        simulators=1,
        clock_bank=None,
        replays=str(tmp_path / "replays"),
    )
    result = run_arena(config)
    assert len(result.battles) == 4
    replays = sorted((tmp_path / "replays").rglob("*.html"))
    assert len(replays) == 4
    texts = [path.read_text() for path in replays]
    assert all("|win|" in text for text in texts)
    assert any("|Magma Lance|" in text for text in texts)


@pytest.mark.slow
def test_a_corrupt_library_stops_designed_formats_only(library: MoveLibrary) -> None:
    from pokegym.formats import resolve_format

    library.path.write_text('{"version": 1, "moves": [{"id": "x"}]}')
    sim = Simulator()
    try:
        # Other formats never load the mod: a broken library cannot break them.
        setup = BattleSetup("gen9randombattle", simulator=sim)
        session = setup._start_session(np.random.default_rng(0))
        assert session.battles[0].active_pokemon is not None
        session.close()
        with pytest.raises(MoveLibraryError, match="move #1 is malformed"):
            resolve_format("gen9designedmoves", simulator=sim)
    finally:
        sim.close()
