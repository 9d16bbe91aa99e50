"""The world model's compact state, built from live poke-env battles."""

from __future__ import annotations

import numpy as np
import pytest

from pokegym.env import ShowdownEnv
from pokegym.world.data import load_dex, to_id
from pokegym.world.sets import PokemonSet, compute_stats
from pokegym.world.state import default_set, state_from_battle


@pytest.mark.slow
def test_state_from_a_real_battle_is_exact_for_own_side_and_overlays_the_opponent():
    env = ShowdownEnv("gen9randombattle", opponent="max_power")
    try:
        obs, info = env.reset(seed=11)
        rng = np.random.default_rng(0)
        for _ in range(6):
            obs, _, terminated, truncated, info = env.step(
                int(rng.choice(np.flatnonzero(obs["action_mask"])))
            )
            if terminated or truncated:
                break
        battle = info["battle"]
        dex = load_dex(9)
        opponent = battle.opponent_active_pokemon
        chosen = PokemonSet(species=to_id(opponent.species), level=opponent.level, item="leftovers",
                            evs=(85,) * 6, moves=("tackle",))  # fmt: skip
        state = state_from_battle(battle, {to_id(opponent.species): chosen}, dex)

        own = state.sides[0]
        assert len(own.mons) == len(battle.team)
        for mon_state, mon in zip(own.mons, battle.team.values(), strict=True):
            assert mon_state.species == to_id(mon.species)
            assert mon_state.stats[0] == mon.max_hp
            assert mon_state.stats[5] == mon.stats["spe"]
            assert mon_state.hp == (0 if mon.fainted else mon.current_hp)
            assert set(mon_state.moves) <= set(mon.moves)
        assert own.active_mon.species == to_id(battle.active_pokemon.species)

        opp = state.sides[1]
        seen = [m for m in battle.opponent_team.values() if m.revealed or m.active]
        assert len(opp.mons) == len(seen)
        active = opp.active_mon
        assert active.species == to_id(opponent.species)
        expected_stats = compute_stats(dex, active.species, opponent.level, (85,) * 6)
        assert active.stats[0] == expected_stats["hp"]
        assert abs(active.hp - expected_stats["hp"] * opponent.current_hp_fraction) < 1e-6
        # Revealed moves come first, then the determinized set's.
        for move in opponent.moves:
            assert move in active.moves
        if opponent.item not in (None, "unknown_item"):
            assert active.item == to_id(opponent.item)
        else:
            assert active.item == "leftovers"

        copy = state.copy()
        copy.sides[0].active_mon.hp = -1
        copy.sides[1].spikes = 3
        assert state.sides[0].active_mon.hp != -1 and state.sides[1].spikes != 3
    finally:
        env.close()


def test_default_set_for_an_unknown_opponent():
    dex = load_dex(9)
    pokemon_set = default_set(dex, "garchomp", 80)
    assert pokemon_set.level == 80
    assert pokemon_set.ability in {to_id(a) for a in dex.species["garchomp"]["abilities"].values()}
    stats = pokemon_set.stats(dex)
    # Base 108/130/95/80/85/102, level 80, 84 EVs (+21) and 31 IVs, neutral nature:
    # hp  = floor((216 + 31 + 21) * 0.8) + 80 + 10 = 214 + 90 = 304
    # atk = floor((260 + 52) * 0.8) + 5 = 249 + 5 = 254;  def = floor(242 * 0.8) + 5 = 198
    # spa = floor(212 * 0.8) + 5 = 174;  spd = floor(222 * 0.8) + 5 = 182
    # spe = floor(256 * 0.8) + 5 = 209
    assert stats == {"hp": 304, "atk": 254, "def": 198, "spa": 174, "spd": 182, "spe": 209}


@pytest.mark.slow
def test_compute_stats_matches_showdown_for_generated_and_pool_teams():
    """Stats from PokemonSet + compute_stats equal the stats Showdown puts in requests."""
    from pokegym.backends.sim import SimBattleSession
    from pokegym.formats import resolve_format
    from pokegym.showdown.simulator import shared_simulator
    from pokegym.teams import builtin_pool

    sim = shared_simulator()
    for format_id, teams in (
        ("gen9randombattle", (None, None)),
        ("gen8randombattle", (None, None)),
        ("gen9ou", tuple(team.text for team in list(builtin_pool("gen9ou"))[:2])),
    ):
        fmt = resolve_format(format_id, simulator=sim)
        dex = load_dex(fmt.gen)
        session = SimBattleSession(sim, fmt, teams=teams, seeds=(5, 6, 7))
        try:
            for side, sets in enumerate(session.teams()):
                request = session.views[side].request
                assert request is not None
                by_species = {
                    to_id(m["details"].split(",")[0]): m for m in request["side"]["pokemon"]
                }
                for data in sets:
                    pokemon_set = PokemonSet.from_showdown(data)
                    shown = by_species[pokemon_set.species]
                    stats = pokemon_set.stats(dex)
                    assert int(shown["condition"].split("/")[1].split()[0]) == stats["hp"]
                    for stat in ("atk", "def", "spa", "spd", "spe"):
                        assert shown["stats"][stat] == stats[stat], (format_id, pokemon_set, stat)
        finally:
            session.close()


@pytest.mark.slow
def test_own_tera_types_come_from_the_request():
    """poke-env leaves ``tera_type`` unset until a Pokémon terastallizes; the backend reads
    each own Pokémon's Tera type from the request, so the state (and the search) can
    terastallize, and the opponent's Tera types stay unknown."""
    from pokegym.world.transition import TransitionModel

    env = ShowdownEnv("gen9randombattle", opponent="max_power")
    try:
        _, info = env.reset(seed=12)
        battle = info["battle"]
        request = {entry["ident"]: entry["teraType"]
                   for entry in battle.last_request["side"]["pokemon"]}  # fmt: skip
        assert len(request) == len(battle.team)
        for key, mon in battle.team.items():
            assert mon.tera_type is not None
            assert mon.tera_type.name.lower() == request[key].lower()
        assert all(mon.tera_type is None for mon in battle.opponent_team.values())
        dex = load_dex(9)
        state = state_from_battle(battle, {}, dex)
        assert all(m.tera_type for m in state.sides[0].mons)
        legal = TransitionModel(dex).legal_actions(state, 0)
        assert any(kind == "move" and tera for kind, _, tera in legal)
    finally:
        env.close()


def test_a_pokemon_shown_at_0_hp_by_zoroark_s_illusion_is_at_full_hp():
    """Zoroark disguised as Iron Thorns takes a KO: Showdown damages "Iron Thorns" to 0,
    then replaces it with Zoroark, which faints. poke-env leaves Iron Thorns at 0 HP, not
    fainted; the real Iron Thorns has not been in battle, so the state gives it full HP
    (at 0 the opponent's side looked finished, and the search refused its root)."""
    import logging

    from poke_env.battle import Battle

    from pokegym.world.state import opponent_mon_state

    battle = Battle("battle-gen9randombattle-1", "me", logging.getLogger("test"), gen=9)
    battle.player_role = "p1"
    protocol = """|player|p1|me|
|player|p2|them|
|switch|p2a: Iron Thorns|Iron Thorns, L83|100/100
|turn|11
|-damage|p2a: Iron Thorns|0 fnt
|replace|p2a: Zoroark|Zoroark, L83, M
|-end|p2a: Zoroark|Illusion
|faint|p2a: Zoroark"""
    for line in protocol.splitlines():
        battle.parse_message(line.split("|"))
    thorns, zoroark = battle.opponent_team["p2: Iron Thorns"], battle.opponent_team["p2: Zoroark"]
    assert thorns.current_hp_fraction == 0 and not thorns.fainted  # what poke-env keeps
    dex = load_dex(9)
    state = opponent_mon_state(dex, thorns, default_set(dex, "ironthorns", 83))
    assert state.hp == state.stats[0] > 0
    assert opponent_mon_state(dex, zoroark, default_set(dex, "zoroark", 83)).hp == 0
    # Every reader of poke-env's HP agrees (pokegym.hp): the prompt's HP text, the web
    # view's fraction and the shaped reward count Iron Thorns at full HP.
    from pokegym.hp import hp_fraction
    from pokegym.rewards import ShapedReward
    from pokegym.text.render import _hp

    assert hp_fraction(thorns) == 1.0 and hp_fraction(zoroark) == 0.0
    assert _hp(thorns) == "100% HP" and _hp(zoroark) == "fainted"
    shaped = ShapedReward()
    # Seen: Iron Thorns (full) and Zoroark (fainted); 4 unseen at full; our team is empty.
    assert shaped.potential(battle) == pytest.approx(shaped.hp * -(1.0 + 4) + shaped.faint)


def test_the_state_can_hold_the_pokemon_team_preview_showed():
    """``previewed``: the opponent's Pokémon Team Preview showed and not out yet join its
    side after those seen, at full HP; a form hidden at preview (``Urshifu-*``) that has
    since come out under its own name is not counted twice."""
    import logging

    from poke_env.battle import Battle

    battle = Battle("battle-gen9ou-1", "me", logging.getLogger("test"), gen=9)
    battle.player_role = "p1"
    protocol = """|player|p1|me|
|player|p2|them|
|poke|p2|Great Tusk|
|poke|p2|Urshifu-*|
|poke|p2|Gholdengo|
|teampreview
|start
|switch|p2a: Great Tusk|Great Tusk|100/100
|turn|1
|switch|p2a: Urshifu|Urshifu-Rapid-Strike, M|70/100
|turn|2"""
    for line in protocol.splitlines():
        battle.parse_message(line.split("|"))
    dex = load_dex(9)
    assert dex.base_species("Urshifu-Rapid-Strike") == dex.base_species("Urshifu-*") == "urshifu"
    assert dex.base_species("Great Tusk") == "greattusk"
    assert dex.base_species("Not A Pokemon") == "notapokemon"
    seen = state_from_battle(battle, {}, dex).sides[1]
    assert [m.species for m in seen.mons] == ["greattusk", "urshifurapidstrike"]
    side = state_from_battle(battle, {}, dex, previewed=True).sides[1]
    assert [m.species for m in side.mons] == ["greattusk", "urshifurapidstrike", "gholdengo"]
    assert side.active_mon.species == "urshifurapidstrike"
    gholdengo = side.mons[2]
    assert gholdengo.hp == gholdengo.stats[0] > 0
    assert side.mons[1].hp == pytest.approx(0.7 * side.mons[1].stats[0])
