"""Teams: the built-in Gen 9 OU pool, user teams, sampling, mirror matches."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import play_episode
from poke_env.data import to_id_str

from pokegym.errors import InvalidTeamError
from pokegym.teams import Team, TeamPool, builtin_formats, builtin_pool, load_team, validate_team


def species_ids(team_text: str) -> list[str]:
    return [to_id_str(name) for name in Team(team_text).species]


def test_builtin_pool_has_distinct_archetypes(gen9ou_pool):
    assert "gen9ou" in builtin_formats()
    assert len(gen9ou_pool) >= 12
    archetypes = [team.archetype for team in gen9ou_pool]
    assert all(archetypes), "every built-in team names its archetype"
    assert len(set(archetypes)) == len(archetypes)
    assert len({team.name for team in gen9ou_pool}) == len(gen9ou_pool)
    assert len({team.text for team in gen9ou_pool}) == len(gen9ou_pool)
    for team in gen9ou_pool:
        assert len(team.species) == 6, team.name
        assert len(set(team.species)) == 6, f"{team.name} repeats a species"


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_every_builtin_team_passes_showdowns_validator(gen9ou_pool):
    for team in gen9ou_pool:
        packed = validate_team(team, "gen9ou")
        # The packed format has one "]"-separated entry per Pokémon.
        assert packed.count("]") == 5, team.name
    gen9ou_pool.validate()


def test_builtin_pool_for_unknown_format():
    with pytest.raises(InvalidTeamError, match="ships no teams"):
        builtin_pool("gen3ou")


def test_seeded_sampling_is_reproducible(gen9ou_pool):
    def draws(seed: int) -> list[str]:
        rng = np.random.default_rng(seed)
        return [gen9ou_pool.sample(rng).name for _ in range(20)]

    assert draws(1) == draws(1)
    assert draws(1) != draws(2)
    assert len(set(draws(3))) > 1


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_mirror_gives_both_sides_the_same_team(make_env):
    env = make_env("gen9ou", mirror=True)
    for seed in range(3):
        _, info = env.reset(seed=seed)
        battle = info["battle"]
        own = sorted(mon.species for mon in battle.team.values())
        opponent = sorted(mon.species for mon in battle.teampreview_opponent_team)
        assert own == opponent


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("source", ["path", "str-path", "text", "team", "list"])
def test_user_team_plays_a_real_battle(make_env, tmp_path, rain_team, source):
    path = tmp_path / "rain.txt"
    path.write_text(rain_team)
    team = {
        "path": path,
        "str-path": str(path),
        "text": rain_team,
        "team": Team(rain_team, name="rain"),
        "list": [path],
    }[source]
    env = make_env("gen9ou", team=team)
    episode = play_episode(env, seed=3)
    assert episode.terminated and episode.rewards[-1] in (-1.0, 1.0)
    battle = episode.final_info["battle"]
    assert [mon.species for mon in battle.team.values()] == species_ids(rain_team)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_team_folder(make_env, tmp_path, gen9ou_pool):
    chosen = list(gen9ou_pool)[:2]
    for team in chosen:
        (tmp_path / f"{team.name}.txt").write_text(team.text)
    env = make_env("gen9ou", team=tmp_path)
    seen = set()
    for seed in range(8):
        _, info = env.reset(seed=seed)
        seen.add(tuple(mon.species for mon in info["battle"].team.values()))
    assert seen <= {tuple(species_ids(team.text)) for team in chosen}
    assert len(seen) == 2


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_opponent_team_is_respected(make_env, rain_team):
    env = make_env("gen9ou", opponent_team=rain_team)
    expected = sorted(species_ids(rain_team))
    for seed in range(3):
        episode = play_episode(env, seed=seed)
        battle = episode.final_info["battle"]
        assert sorted(mon.species for mon in battle.teampreview_opponent_team) == expected
        # Every opponent Pokémon that came out is from that team.
        assert {mon.species for mon in battle.opponent_team.values()} <= set(expected)


def test_load_team_sources(tmp_path, rain_team):
    path = tmp_path / "t.txt"
    path.write_text(rain_team)
    assert load_team(path).text == rain_team
    assert load_team(str(path)).name == "t"
    assert load_team(rain_team).text == rain_team
    team = Team(rain_team)
    assert load_team(team) is team
    with pytest.raises(InvalidTeamError):
        load_team(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidTeamError, match="at least one team"):
        TeamPool(teams=[])


def test_species_of_forms_and_nicknames():
    text = (
        "Zappy (Zapdos-Galar) @ Choice Band\nAbility: Defiant\n- Brave Bird\n\n"
        "Lilligant-Hisui (F) @ Focus Sash\nAbility: Chlorophyll\n- Leaf Blade\n\n"
        "Bolt (Raging Bolt) (M)\nAbility: Protosynthesis\n- Thunderclap\n"
    )
    assert Team(text).species == ["Zapdos-Galar", "Lilligant-Hisui", "Raging Bolt"]
