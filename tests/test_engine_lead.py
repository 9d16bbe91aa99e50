"""The ``engine`` agent's Team Preview: the lead chosen by searching every pair of leads."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from pokegym.agents import register_agent
from pokegym.arena import ArenaConfig, run_arena
from pokegym.world.data import load_dex, to_id
from pokegym.world.priors import belief_for
from policies.core import engine_state as es
from policies.engine import EngineOptions, EnginePolicy


def test_a_lead_rule_that_does_not_exist_is_refused_by_name():
    with pytest.raises(ValueError, match="lead"):
        EngineOptions(lead="first")


def _previewer(values=None, error=None, lead="search"):
    agent = EnginePolicy.__new__(EnginePolicy)
    agent.options = EngineOptions(lead=lead)
    agent.rng = np.random.default_rng(0)
    agent.failures = 0

    def lead_values(battle, started):
        if error is not None:
            raise error
        return np.asarray(values, dtype=float)

    agent.lead_values = lead_values
    return agent


TEAM = SimpleNamespace(team=dict.fromkeys("abcdef"))


def test_the_lead_is_the_row_with_the_best_mean_and_the_rest_keep_team_order():
    values = np.full((6, 6), 0.5)
    values[3] = [0.9, 0.2, 0.9, 0.2, 0.9, 0.2]  # mean 0.55: best on average
    values[1] = [1.0, 0.1, 0.1, 0.1, 0.1, 0.1]  # the best single pair, a poor mean
    assert _previewer(values).team_preview(TEAM) == "/team 412356"


def test_a_failed_lead_search_plays_a_random_lead_and_counts_the_failure():
    agent = _previewer(error=RuntimeError("engine panicked"))
    order = agent.team_preview(TEAM)
    assert sorted(order.removeprefix("/team ")) == list("123456")
    assert agent.failures == 1


def test_lead_random_does_not_search():
    agent = _previewer(error=AssertionError("searched"), lead="random")
    assert sorted(agent.team_preview(TEAM).removeprefix("/team ")) == list("123456")
    assert agent.failures == 0


# ------------------------------------------------------------------ the real engine
def _mon(species, ability, item, speed):
    pe = es.import_engine()
    return pe.Pokemon(id=species, ability=ability, item=item, speed=speed)


def test_the_slower_leads_weather_stands_and_rocks_make_it_last_eight_turns():
    pelipper = _mon("pelipper", "drizzle", "damprock", 150)
    torkoal = _mon("torkoal", "drought", "heatrock", 40)
    assert es.lead_field(pelipper, torkoal)[:2] == ("sun", 8)
    faster_torkoal = _mon("torkoal", "drought", "leftovers", 200)
    assert es.lead_field(pelipper, faster_torkoal)[:2] == ("rain", 8)
    tapu = _mon("pincurchin", "electricsurge", "terrainextender", 50)
    plain = _mon("blissey", "naturalcure", "leftovers", 90)
    assert es.lead_field(plain, tapu) == ("none", 0, "electricterrain", 8)
    assert es.lead_field(plain, plain) == ("none", 0, "none", 0)


class PreviewRecorder(EnginePolicy):
    """The engine agent, keeping what it saw and chose at Team Preview."""

    def __init__(self, **options):
        super().__init__(**options)
        self.previews: list[dict] = []

    def lead_values(self, battle, started):
        values = super().lead_values(battle, started)
        dex = load_dex(battle.gen)
        belief = belief_for(battle)
        guess = belief.modal_determinization()
        unseen = es.unseen_opponents(battle, guess, belief.prior, self.rng)
        led = es.engine_state(battle, dex, guess, unseen, leads=(2, 4))
        self.previews.append({
            "values": values, "ours": [to_id(m.species) for m in battle.team.values()],
            "previewed": {to_id(m.species) for m in battle.teampreview_opponent_team},
            "state": led,
        })  # fmt: skip
        return values

    def team_preview(self, battle):
        order = super().team_preview(battle)
        self.previews[-1]["order"] = order
        return order


@pytest.mark.slow
def test_the_lead_search_scores_every_pair_and_sends_the_best_lead_first():
    made = []

    def factory(**options):
        made.append(PreviewRecorder(iterations=200, samples=2, lead="search"))
        return made[-1]

    register_agent("engine_preview", factory)
    result = run_arena(ArenaConfig(agents=["engine_preview", "random"], battles_per_pair=2,
                                   seed=21, concurrency=1, clock_bank=None,
                                   battle_format="gen9ou"))  # fmt: skip
    assert result.record("engine_preview")["battles"] == 2
    previews = [p for agent in made for p in agent.previews]
    assert len(previews) == 2 and all(agent.failures == 0 for agent in made)
    for p in previews:
        values = p["values"]
        assert values.shape == (6, 6)
        assert ((values >= 0.0) & (values <= 1.0)).all() and values.std() > 0
        lead = int(np.argmax(values.mean(axis=1)))
        assert p["order"] == "/team " + "".join(
            str(i + 1) for i in [lead] + [i for i in range(6) if i != lead]
        )
        # The state of a pair of leads: both teams whole, the two leads out.
        state = p["state"]
        ours = [to_id(m.id) for m in state.side_one.pokemon]
        theirs = {to_id(m.id) for m in state.side_two.pokemon}
        assert ours == p["ours"] and theirs == p["previewed"]
        assert state.side_one.active_index == "2" and state.side_two.active_index == "4"
        weather, _, terrain, _ = es.lead_field(state.side_one.pokemon[2],
                                               state.side_two.pokemon[4])  # fmt: skip
        assert str(state.weather).lower() == weather and str(state.terrain).lower() == terrain
