"""The one_step baseline: its rules on real positions, and real battles in the arena."""

from __future__ import annotations

import pytest
from poke_env.player.battle_order import SingleBattleOrder

from pokegym.arena import ArenaConfig, run_arena
from pokegym.showdown.simulator import shared_simulator
from pokegym.world.data import to_id
from pokegym.world.sets import PokemonSet
from policies.one_step import OneStepPolicy

# Every test here plays real battles or starts Node (`pytest -m "not slow"` skips them).
pytestmark = pytest.mark.slow

GARCHOMP = """Garchomp @ Life Orb
Ability: Rough Skin
Tera Type: Steel
EVs: 252 Atk / 4 SpD / 252 Spe
Jolly Nature
- Earthquake
- Dragon Claw
- Swords Dance
- Stone Edge
"""

HEATRAN = """Heatran @ Leftovers
Ability: Flash Fire
Tera Type: Grass
EVs: 252 HP / 4 SpA / 252 SpD
Calm Nature
- Magma Storm
- Earth Power
- Taunt
- Stealth Rock
"""

WEAVILE = """Weavile @ Choice Band
Ability: Pressure
Tera Type: Ice
EVs: 252 Atk / 4 SpD / 252 Spe
Jolly Nature
- Triple Axel
- Knock Off
- Ice Shard
- Low Kick
"""

SKARMORY = """Skarmory @ Leftovers
Ability: Sturdy
Tera Type: Dragon
EVs: 252 HP / 4 Def / 252 SpD
Careful Nature
- Brave Bird
- Body Press
- Roost
- Spikes
"""

DRAGONITE = """Dragonite @ Heavy-Duty Boots
Ability: Multiscale
Tera Type: Normal
EVs: 252 Atk / 4 SpD / 252 Spe
Adamant Nature
- Extreme Speed
- Earthquake
- Dragon Dance
- Roost
"""


def first_position(make_env, team, opponent_team):
    env = make_env("gen9ou", team=team, opponent_team=opponent_team, opponent="max_power",
                   validate_teams=False)  # fmt: skip
    env.reset(seed=1)
    return env.battle


class KnownSets:
    """Beliefs that know the opponent's true sets (a seam for positions with known answers)."""

    def __init__(self, text):
        sets = shared_simulator().call([["import", text]])[0]
        self.sets = {to_id(s["species"]): PokemonSet.from_showdown(s) for s in sets}

    def modal_determinization(self):
        return dict(self.sets)


def test_picks_the_move_with_the_fewest_turns_to_ko(make_env):
    battle = first_position(make_env, GARCHOMP, HEATRAN)
    policy = OneStepPolicy(seed=0)
    policy._belief = lambda battle: KnownSets(HEATRAN)
    order = policy.choose(battle)
    assert isinstance(order, SingleBattleOrder)
    assert to_id(order.order.id) == "earthquake"  # 4x against Heatran
    look = policy.last_lookahead
    assert look is not None and look.best_move().turns_to_ko == 1


def test_switches_out_when_outmatched_to_a_pokemon_that_holds(make_env):
    # Weavile without a Fighting move is slower to KO Heatran than Magma Storm is to KO
    # Weavile; Dragonite resists Fire, is immune to Earth Power and KOs with Earthquake.
    weavile = WEAVILE.replace("- Low Kick", "- Swords Dance")
    battle = first_position(make_env, weavile + "\n" + DRAGONITE, HEATRAN)
    policy = OneStepPolicy(seed=0)
    policy._belief = lambda battle: KnownSets(HEATRAN)
    look = policy.lookahead(battle)
    assert look.outmatched(), look.text()
    order = policy.choose(battle)
    assert order.order.species == "dragonite", look.text()
    assert policy._last_switch_turn[battle.battle_tag] == battle.turn
    # With switching disabled it attacks with its best move instead.
    stay = OneStepPolicy(seed=0, switching=False)
    stay._belief = policy._belief
    assert to_id(stay.choose(battle).order.id) == "knockoff"


def test_terastallizes_only_when_it_lowers_turns_to_ko(make_env):
    battle = first_position(make_env, DRAGONITE, SKARMORY)
    assert battle.can_tera
    policy = OneStepPolicy(seed=0)
    policy._belief = lambda battle: KnownSets(SKARMORY)
    order = policy.choose(battle)
    look = policy.last_lookahead
    plain = look.best_move(we_tera=False)
    tera = look.best_move(we_tera=True)
    assert order.terastallize == (tera.turns_to_ko < plain.turns_to_ko), look.text()
    no_tera = OneStepPolicy(seed=0, tera=False)
    no_tera._belief = policy._belief
    no_tera = no_tera.choose(battle)
    assert not no_tera.terastallize


@pytest.mark.timeout(600)
def test_one_step_beats_max_power_in_real_battles():
    result = run_arena(
        ArenaConfig(agents=["one_step", "max_power"], battles_per_pair=16, seed=5, concurrency=4)
    )
    record = result.record("one_step")
    assert record["wins"] + record["losses"] + record["ties"] == 16
    assert record["wins"] >= 10, result.table()
    stats = result.agent_stats["one_step"]
    assert stats.decisions > 100
