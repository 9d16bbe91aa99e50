"""ActionCodec on real battle states: masks, round trips, descriptions, choices."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import play_episode
from poke_env.player.battle_order import DefaultBattleOrder, SingleBattleOrder

from pokegym.actions import GIMMICK_MOVE, MOVE, N_ACTIONS, N_MOVES, SWITCH, WAIT, ActionCodec
from pokegym.errors import IllegalActionError


class RoundTripStats:
    def __init__(self) -> None:
        self.states = 0
        self.preview_states = 0
        self.gimmick_actions = 0
        self.forced_switch_states = 0


def check_round_trips(codec: ActionCodec, stats: RoundTripStats):
    def on_state(obs, info):
        battle = info["battle"]
        mask = obs["action_mask"]
        np.testing.assert_array_equal(mask, codec.mask(battle))
        assert mask.shape == (N_ACTIONS,) and mask.dtype == np.int8
        assert mask.any(), "a deciding player always has a legal action"
        assert not mask[WAIT], "a single-agent env is never asked to wait"
        waiting = codec.mask(battle, waiting=True)
        assert list(np.flatnonzero(waiting)) == [WAIT]
        stats.states += 1
        if battle.teampreview:
            stats.preview_states += 1
            assert list(np.flatnonzero(mask)) == list(range(SWITCH, SWITCH + len(battle.team)))
        if battle.force_switch:
            stats.forced_switch_states += 1
            assert not mask[:SWITCH].any(), "a forced switch offers no moves"
        for action in np.flatnonzero(mask):
            action = int(action)
            order = codec.to_order(action, battle)
            assert codec.from_order(order, battle) == action, (action, order)
            assert codec.check(action, battle) == action
            choice = codec.to_choice(action, battle)
            assert choice is not None
            assert codec.order_to_choice(order, battle) == choice
            if GIMMICK_MOVE <= action < SWITCH:
                stats.gimmick_actions += 1
                assert codec.gimmick is not None
                assert choice.endswith(codec.gimmick)
                assert order.terastallize == (codec.gimmick == "terastallize")
                assert order.dynamax == (codec.gimmick == "dynamax")
            elif action < GIMMICK_MOVE:
                assert choice == f"move {action - MOVE + 1}"
            elif battle.teampreview:
                assert choice.startswith("team ")
                assert choice[5] == str(action - SWITCH + 1)
            else:
                assert choice.startswith("switch ")
                assert order.order is list(battle.team.values())[action - SWITCH]

    return on_state


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("battle_format", "options", "gimmick"),
    [
        ("gen9randombattle", {}, "terastallize"),
        ("gen8randombattle", {}, "dynamax"),
        ("gen9ou", {"team_preview": True}, "terastallize"),
        ("gen91v1factory", {"team_preview": True}, None),
    ],
    ids=["gen9randombattle", "gen8randombattle-dynamax", "gen9ou-team-preview", "gen91v1"],
)
def test_round_trip_on_every_legal_action(make_env, battle_format, options, gimmick):
    env = make_env(battle_format, **options)
    assert env.codec.gimmick == gimmick
    stats = RoundTripStats()
    for seed in (0, 1):
        play_episode(env, seed=seed, on_state=check_round_trips(env.codec, stats))
    assert stats.states > 0
    if gimmick is not None:
        assert stats.gimmick_actions > 0, f"no {gimmick} action was ever legal"
    if options.get("team_preview"):
        assert stats.preview_states == 2
    if battle_format.endswith("randombattle"):
        assert stats.forced_switch_states > 0


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_gen8_without_dynamax_masks_gimmick(make_env):
    env = make_env("gen8randombattle", dynamax=False)
    assert env.codec.gimmick is None
    assert "dynamaxclause" in env.fmt.id

    def on_state(obs, info):
        assert not obs["action_mask"][GIMMICK_MOVE:SWITCH].any()

    play_episode(env, seed=3, on_state=on_state)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_gimmick_is_masked_once_used(make_env):
    """After terastallizing once, no tera action is legal for the rest of the battle."""
    env = make_env("gen9randombattle")
    obs, info = env.reset(seed=12)
    assert obs["action_mask"][GIMMICK_MOVE:SWITCH].any()
    tera = int(np.flatnonzero(obs["action_mask"][GIMMICK_MOVE:SWITCH])[0]) + GIMMICK_MOVE
    obs, _, terminated, _, info = env.step(tera)
    assert info["battle"].used_tera
    rng = np.random.default_rng(0)
    while not terminated:
        assert not obs["action_mask"][GIMMICK_MOVE:SWITCH].any()
        obs, _, terminated, truncated, info = env.step(
            int(rng.choice(np.flatnonzero(obs["action_mask"])))
        )
        assert not truncated


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_team_preview_choices(make_env):
    env = make_env("gen9ou", team_preview=True)
    _, info = env.reset(seed=2)
    battle = info["battle"]
    codec = env.codec
    assert battle.teampreview and len(battle.team) == 6
    assert codec.to_choice(SWITCH, battle) == "team 123456"
    assert codec.to_choice(SWITCH + 2, battle) == "team 312456"
    assert codec.to_choice(SWITCH + 5, battle) == "team 612345"
    assert codec.from_order("/team 312456", battle) == SWITCH + 2
    assert codec.from_order("team 5", battle) == SWITCH + 4
    assert codec.order_to_choice("/team 213456", battle) == "team 213456"
    species = list(battle.team.values())[2].species
    assert codec.describe(SWITCH + 2, battle) == f"{SWITCH + 2}=lead with slot 3 {species}"


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_describe(make_env):
    env = make_env("gen9randombattle")
    _, info = env.reset(seed=9)
    battle = info["battle"]
    codec = env.codec
    moves = battle.last_request["active"][0]["moves"]
    assert codec.describe(0, battle) == f"0=move 1 {moves[0]['move']}"
    assert codec.describe(GIMMICK_MOVE + 1, battle) == (
        f"{GIMMICK_MOVE + 1}=move 2 {moves[1]['move']} + terastallize"
    )
    team = list(battle.team.values())
    assert codec.describe(SWITCH + 1, battle) == f"{SWITCH + 1}=switch to slot 2 {team[1].species}"
    assert codec.describe(WAIT) == f"{WAIT}=wait"
    assert codec.describe(3) == "3=move 4"
    assert "out of range" in codec.describe(N_ACTIONS)
    assert "out of range" in codec.describe(-1)
    assert ActionCodec("dynamax").describe(GIMMICK_MOVE) == f"{GIMMICK_MOVE}=move 1 + dynamax"
    legal = codec.legal_actions(battle)
    assert legal == [int(i) for i in np.flatnonzero(codec.mask(battle))]


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_orders_that_name_nothing_legal(make_env):
    env = make_env("gen9randombattle")
    _, info = env.reset(seed=9)
    battle = info["battle"]
    codec = env.codec
    # Switching to the Pokémon already on the field is not a legal action.
    with pytest.raises(IllegalActionError):
        codec.order_to_choice(SingleBattleOrder(battle.active_pokemon), battle)
    with pytest.raises(IllegalActionError):
        codec.from_order(DefaultBattleOrder(), battle)
    with pytest.raises(IllegalActionError):
        codec.from_order("/team 123456", battle)  # not at Team Preview
    assert codec.order_to_choice(DefaultBattleOrder(), battle) == "default"
    assert codec.to_order(WAIT, battle) == DefaultBattleOrder()
    assert codec.to_choice(WAIT, battle) is None


def test_unknown_gimmick_rejected():
    with pytest.raises(ValueError, match="gimmick"):
        ActionCodec("megaevolve")


def test_layout_constants():
    assert (MOVE, GIMMICK_MOVE, SWITCH, WAIT, N_ACTIONS) == (0, 4, 8, 14, 15)
    assert GIMMICK_MOVE - MOVE == N_MOVES
