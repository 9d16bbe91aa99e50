"""The observation vector: space, layout, and partial observability."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import play_episode

from pokegym import observation as O
from pokegym.actions import N_ACTIONS


def offsets(table: list[tuple[str, int, str]]) -> dict[str, int]:
    """Offset of each feature inside its block, from the module's feature table."""
    out, position = {}, 0
    for name, width, _ in table:
        out[name] = position
        position += width
    return out


P = offsets(O.POKEMON_FEATURES)
M = offsets(O.MOVE_FEATURES)
F = offsets(O.FIELD_FEATURES)
WIDTH = {name: width for name, width, _ in O.POKEMON_FEATURES}


def own_slot(vec: np.ndarray, i: int) -> np.ndarray:
    base = O.OWN_TEAM_OFFSET + i * O.POKEMON_SIZE
    return vec[base : base + O.POKEMON_SIZE]


def opponent_slot(vec: np.ndarray, i: int) -> np.ndarray:
    base = O.OPPONENT_TEAM_OFFSET + i * O.POKEMON_SIZE
    return vec[base : base + O.POKEMON_SIZE]


def feature(block: np.ndarray, name: str) -> np.ndarray:
    return block[P[name] : P[name] + WIDTH[name]]


def move_present(block: np.ndarray, slot: int) -> float:
    return float(block[P["moves"] + slot * O.MOVE_SIZE + M["present"]])


def field(vec: np.ndarray, name: str) -> float:
    return float(vec[O.FIELD_OFFSET + F[name]])


def test_layout_sizes_are_consistent():
    assert O.POKEMON_SIZE == sum(w for _, w, _ in O.POKEMON_FEATURES)
    assert O.MOVE_SIZE == sum(w for _, w, _ in O.MOVE_FEATURES)
    assert WIDTH["moves"] == O.N_MOVE_SLOTS * O.MOVE_SIZE
    assert O.OPPONENT_TEAM_OFFSET == O.OWN_TEAM_OFFSET + O.N_SLOTS * O.POKEMON_SIZE
    assert O.FIELD_OFFSET == O.OPPONENT_TEAM_OFFSET + O.N_SLOTS * O.POKEMON_SIZE
    assert O.OBSERVATION_SIZE == O.FIELD_OFFSET + O.FIELD_SIZE
    space = O.observation_space()
    assert space["observation"].shape == (O.OBSERVATION_SIZE,)
    assert space["observation"].dtype == np.float32
    assert space["action_mask"].shape == (N_ACTIONS,)
    assert space["action_mask"].dtype == np.int8


def test_layout_table_mentions_every_feature():
    table = O.layout_table()
    assert str(O.OBSERVATION_SIZE) in table
    for features in (O.POKEMON_FEATURES, O.MOVE_FEATURES, O.FIELD_FEATURES):
        for name, _, description in features:
            assert f"{name}: {description}" in table
    assert f"[{O.FIELD_OFFSET}:{O.OBSERVATION_SIZE}]" in table
    assert f"[{O.OPPONENT_TEAM_OFFSET}:{O.FIELD_OFFSET}]" in table


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("battle_format", "options"),
    [
        ("gen9randombattle", {}),
        ("gen8randombattle", {}),
        ("gen9ou", {"team_preview": True}),
        ("gen91v1factory", {}),
    ],
    ids=["gen9randombattle", "gen8randombattle", "gen9ou", "gen91v1"],
)
def test_observations_stay_in_the_space(make_env, battle_format, options):
    env = make_env(battle_format, **options)
    space = env.observation_space

    def on_state(obs, info):
        vec = obs["observation"]
        assert vec.shape == (O.OBSERVATION_SIZE,) and vec.dtype == np.float32
        assert np.isfinite(vec).all()
        assert space.contains(obs)
        battle = info["battle"]
        team = list(battle.team.values())
        for i in range(O.N_SLOTS):
            block = own_slot(vec, i)
            if i < len(team):
                mon = team[i]
                assert block[P["present"]] == 1 and block[P["revealed"]] == 1
                assert block[P["active"]] == float(mon.active)
                assert block[P["fainted"]] == float(mon.fainted)
                if not mon.fainted:
                    assert block[P["hp_fraction"]] == pytest.approx(mon.current_hp_fraction)
                n_moves = min(len(mon.moves), O.N_MOVE_SLOTS)
                assert [move_present(block, s) for s in range(O.N_MOVE_SLOTS)] == (
                    [1.0] * n_moves + [0.0] * (O.N_MOVE_SLOTS - n_moves)
                )
            else:
                assert not block.any()
        opponents = list(battle.opponent_team.values())
        for i, mon in enumerate(opponents[: O.N_SLOTS]):
            block = opponent_slot(vec, i)
            assert block[P["present"]] == 1
            # Only revealed moves are shown; the Tera Type only once used.
            n_moves = min(len(mon.moves), O.N_MOVE_SLOTS)
            assert sum(move_present(block, s) for s in range(O.N_MOVE_SLOTS)) == n_moves
            if not mon.is_terastallized:
                assert not feature(block, "tera_type").any()
        assert field(vec, "turn") == pytest.approx(min(battle.turn / 100, O.HIGH))
        assert field(vec, "team_preview") == float(battle.teampreview)

    episode = play_episode(env, seed=17, on_state=on_state)
    for obs in episode.observations:
        assert space.contains(obs)


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_random_battle_turn_one_shows_only_the_opponent_lead(make_env):
    env = make_env("gen9randombattle")
    for seed in (1, 2, 3):
        obs, info = env.reset(seed=seed)
        vec = obs["observation"]
        assert info["turn"] == 1
        lead = opponent_slot(vec, 0)
        assert lead[P["present"]] == 1 and lead[P["revealed"]] == 1 and lead[P["active"]] == 1
        assert lead[P["hp_fraction"]] == 1.0
        # No move of the opponent is known before it has moved, nor its Tera Type.
        assert all(move_present(lead, s) == 0 for s in range(O.N_MOVE_SLOTS))
        assert not feature(lead, "tera_type").any()
        for i in range(1, O.N_SLOTS):
            assert not opponent_slot(vec, i).any(), f"unseen opponent slot {i} is not empty"
        # Own team: all six present and known, exactly one active.
        assert sum(own_slot(vec, i)[P["present"]] for i in range(O.N_SLOTS)) == 6
        assert sum(own_slot(vec, i)[P["active"]] for i in range(O.N_SLOTS)) == 1
        assert field(vec, "own_remaining") == 1.0
        assert field(vec, "opponent_remaining") == 1.0


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_team_preview_slots_after_the_lead_is_chosen(make_env):
    """gen9ou: the opponent's six are known from Team Preview; only the lead is revealed."""
    env = make_env("gen9ou")
    obs, info = env.reset(seed=5)
    vec = obs["observation"]
    battle = info["battle"]
    assert info["turn"] == 1 and len(battle.teampreview_opponent_team) == 6
    present = [opponent_slot(vec, i)[P["present"]] for i in range(O.N_SLOTS)]
    revealed = [opponent_slot(vec, i)[P["revealed"]] for i in range(O.N_SLOTS)]
    active = [opponent_slot(vec, i)[P["active"]] for i in range(O.N_SLOTS)]
    assert present == [1.0] * 6
    assert revealed == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert active == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    for i in range(1, O.N_SLOTS):
        block = opponent_slot(vec, i)
        assert block[P["item_known"]] == 0
        assert block[P["active"]] == 0 and block[P["hp_fraction"]] in (0.0, 1.0)
        assert all(move_present(block, s) == 0 for s in range(O.N_MOVE_SLOTS))
        assert feature(block, "base_stats").any(), "a previewed species shows its base stats"


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_team_preview_state_reveals_no_opponent(make_env):
    """At the Team Preview decision nothing of the opponent has been on the field yet:
    all six slots are present (seen at preview) with revealed=0 and active=0."""
    env = make_env("gen9ou", team_preview=True)
    obs, info = env.reset(seed=5)
    vec = obs["observation"]
    assert info["battle"].teampreview
    assert field(vec, "team_preview") == 1.0
    present = [opponent_slot(vec, i)[P["present"]] for i in range(O.N_SLOTS)]
    revealed = [opponent_slot(vec, i)[P["revealed"]] for i in range(O.N_SLOTS)]
    active = [opponent_slot(vec, i)[P["active"]] for i in range(O.N_SLOTS)]
    assert present == [1.0] * 6
    assert active == [0.0] * 6
    assert revealed == [0.0] * 6


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_encoder_is_a_pure_function_of_the_battle(make_env):
    env = make_env("gen9randombattle")
    obs, info = env.reset(seed=8)
    again = env.encoder.encode(info["battle"])
    np.testing.assert_array_equal(obs["observation"], again)
    assert env.encoder.size == O.OBSERVATION_SIZE
