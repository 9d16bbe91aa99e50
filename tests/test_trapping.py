"""A switch into a hidden trap (Shadow Tag) is rejected by Showdown as unavailable.

The env must hand the decision back to the agent on the same turn with the updated
mask (no switches), on both backends, without stalling.
"""

from __future__ import annotations

import numpy as np
import pytest
from poke_env.player.battle_order import SingleBattleOrder

from pokegym.actions import SWITCH
from pokegym.env import ShowdownEnv

# Every test here plays real battles or starts Node (`pytest -m "not slow"` skips them).
pytestmark = pytest.mark.slow

AGENT_TEAM = """Garchomp @ Leftovers
Ability: Rough Skin
EVs: 252 Atk / 4 SpD / 252 Spe
Jolly Nature
- Earthquake
- Dragon Claw
- Swords Dance
- Protect

Corviknight @ Leftovers
Ability: Pressure
EVs: 252 HP / 252 Def / 4 SpD
Impish Nature
- Roost
- Brave Bird
- Defog
- U-turn
"""

TRAPPER_TEAM = """Gothitelle @ Leftovers
Ability: Shadow Tag
EVs: 252 HP / 252 SpA / 4 SpD
Modest Nature
- Calm Mind
- Protect
- Psychic
- Rest

Blissey @ Leftovers
Ability: Natural Cure
EVs: 252 HP / 252 Def / 4 SpD
Bold Nature
- Soft-Boiled
- Seismic Toss
- Protect
- Toxic
"""


class CalmMindLead:
    """Leads with Gothitelle and uses its first move (Calm Mind: no damage)."""

    def team_preview(self, battle):
        return "/team 12"

    def choose(self, battle):
        return SingleBattleOrder(battle.available_moves[0])


@pytest.mark.parametrize("backend", ["sim", pytest.param("server", marks=pytest.mark.server)])
@pytest.mark.timeout(120)
def test_switch_into_shadow_tag_is_handed_back(backend):
    env = ShowdownEnv(
        "gen9customgame",
        team=AGENT_TEAM,
        opponent_team=TRAPPER_TEAM,
        opponent=CalmMindLead(),
        backend=backend,
        timeout=20,
    )
    try:
        obs, info = env.reset(seed=0)
        battle = info["battle"]
        assert battle.opponent_active_pokemon.species == "gothitelle"
        corviknight = SWITCH + 1
        # Shadow Tag is hidden: Showdown only says the switch "may" be trapped.
        assert obs["action_mask"][corviknight] == 1
        turn = info["turn"]
        obs, _, _, _, info = env.step(corviknight)
        # Rejected as unavailable: same turn, the agent decides again, no switches left.
        assert info["turn"] == turn
        assert battle.trapped
        assert not obs["action_mask"][SWITCH:].any()
        assert obs["action_mask"][:4].all()
        assert battle.active_pokemon.species == "garchomp"
        obs, reward, terminated, _, info = env.step(0)  # Earthquake
        assert info["turn"] == turn + 1
        assert reward == 0.0 and not terminated
        assert np.flatnonzero(obs["action_mask"]).size > 0
    finally:
        env.close()
