"""The porimon experience memory: similarity formulas, retrieval on a constructed set,
persistence and corrupt files."""

from __future__ import annotations

import json
import math

import pytest

from memory.porimon import (
    ExperienceItem,
    ExperienceMemory,
    MemoryFileError,
    PokemonRecord,
    directed_team_similarity,
    pokemon_similarity,
    records,
    team_similarity,
)

GARCHOMP = PokemonRecord("garchomp", (108, 130, 95, 80, 85, 102), 1.0, ("Dragon", "Ground"),
                         "roughskin")  # fmt: skip
DRAGONITE = PokemonRecord("dragonite", (91, 134, 95, 100, 100, 80), 1.0, ("Dragon", "Flying"),
                          "multiscale")  # fmt: skip
BLISSEY = PokemonRecord("blissey", (255, 10, 10, 75, 135, 55), 1.0, ("Normal",), "naturalcure")
TOXAPEX = PokemonRecord("toxapex", (50, 63, 152, 53, 142, 35), 1.0, ("Poison", "Water"),
                        "regenerator")  # fmt: skip
HEATRAN = PokemonRecord("heatran", (91, 90, 106, 130, 106, 77), 1.0, ("Fire", "Steel"),
                        "flashfire")  # fmt: skip
PIKACHU = PokemonRecord("pikachu", (35, 55, 40, 50, 50, 90), 1.0, ("Electric",), "static")


def test_pokemon_similarity_matches_the_formula():
    assert pokemon_similarity(GARCHOMP, GARCHOMP) == pytest.approx(1.0)
    xp = [b / 255 for b in GARCHOMP.base_stats] + [1.0]
    xq = [b / 255 for b in DRAGONITE.base_stats] + [1.0]
    euclid = 1 - math.dist(xp, xq) / math.sqrt(7)
    jaccard = 1 / 5  # {dragon} of {dragon, ground, flying, roughskin, multiscale}
    assert pokemon_similarity(GARCHOMP, DRAGONITE, alpha=0.3) == pytest.approx(
        0.3 * euclid + 0.7 * jaccard
    )
    assert pokemon_similarity(GARCHOMP, DRAGONITE) > pokemon_similarity(GARCHOMP, BLISSEY)
    hurt = PokemonRecord(**{**GARCHOMP.__dict__, "hp_fraction": 0.2, "status": "brn"})
    assert pokemon_similarity(GARCHOMP, hurt) < 1.0
    with pytest.raises(ValueError, match="alpha"):
        pokemon_similarity(GARCHOMP, hurt, alpha=1.5)


def test_team_similarity_uniform_weighted_and_symmetric():
    a, b = [GARCHOMP, BLISSEY], [DRAGONITE, TOXAPEX, HEATRAN]
    forward = directed_team_similarity(a, b)
    backward = directed_team_similarity(b, a)
    assert forward != pytest.approx(backward)
    assert team_similarity(a, b) == pytest.approx(0.5 * (forward + backward))
    assert team_similarity(a, b) == pytest.approx(team_similarity(b, a))
    # All the weight on Garchomp: its best match (Dragonite) decides alone.
    weighted = directed_team_similarity(a, b, {"garchomp": 1.0, "blissey": 0.0})
    assert weighted == pytest.approx(max(pokemon_similarity(GARCHOMP, q) for q in b))


def item(name, ours, theirs, importance=None, outcome=1.0):
    return ExperienceItem(summary=f"battle {name}", lessons=[f"lesson {name}"], our_team=ours,
                          their_team=theirs, importance=importance or {}, outcome=outcome,
                          battle_tag=name)  # fmt: skip


def test_retrieval_returns_the_expected_items_once_enough_are_stored(tmp_path):
    memory = ExperienceMemory(tmp_path / "memory.json")
    fillers = [item(f"f{i}", [PIKACHU, BLISSEY], [TOXAPEX, PIKACHU]) for i in range(8)]
    for x in fillers:
        memory.add(x)
    target = item("dragons", [GARCHOMP, DRAGONITE], [HEATRAN, TOXAPEX])
    near = item("near", [GARCHOMP, BLISSEY], [HEATRAN, PIKACHU])
    memory.add(target)
    assert memory.retrieve([GARCHOMP, DRAGONITE], [HEATRAN, TOXAPEX]) == []  # 9 < 10 stored
    memory.add(near)
    found = memory.retrieve([GARCHOMP, DRAGONITE], [HEATRAN, TOXAPEX])
    assert [x.battle_tag for x, _ in found][:2] == ["dragons", "near"]
    assert len(found) == 3
    assert found[0][1] == pytest.approx(1.0)
    assert found[0][1] >= found[1][1] >= found[2][1]


def test_memory_persists_and_refuses_corrupt_files(tmp_path):
    path = tmp_path / "memory.json"
    memory = ExperienceMemory(path)
    memory.add(item("one", [GARCHOMP], [HEATRAN], {"garchomp": 0.9}))
    again = ExperienceMemory(path)
    assert len(again) == 1 and again.items[0] == memory.items[0]
    assert not list(tmp_path.glob(".memory-*")), "no temporary file left behind"
    path.write_text("{not json")
    with pytest.raises(MemoryFileError, match="not a readable memory file"):
        ExperienceMemory(path)
    assert path.read_text() == "{not json"  # untouched
    path.write_text(json.dumps({"format": "pokegym-porimon-memory", "version": 99, "items": []}))
    with pytest.raises(MemoryFileError, match="version 99"):
        ExperienceMemory(path)
    path.write_text(json.dumps({"format": "pokegym-porimon-memory", "version": 1,
                                "items": [{"summary": "x"}]}))  # fmt: skip
    with pytest.raises(MemoryFileError, match="item 0 is malformed"):
        ExperienceMemory(path)


@pytest.mark.slow
def test_records_from_a_real_battle(make_env):
    from pokegym.world.data import load_dex

    env = make_env("gen9randombattle", opponent="random")
    env.reset(seed=4)
    battle = env.battle
    ours = records(battle.team.values(), load_dex(9))
    assert len(ours) == 6
    assert all(len(r.base_stats) == 6 and r.types for r in ours)
    assert all(0.0 <= r.hp_fraction <= 1.0 for r in ours)
