"""Beliefs over the opponent's sets, driven by a recorded battle: no Node.

tests/data/protocol/ holds seeded simulator battles as player 1 received them (every
block of protocol lines and every request, in order), with the opponent's true sets and
the rows of the random-battle prior for its species. The fast tests rebuild poke-env's
battle object from the recording, offline, and check the beliefs against the truth; the
slow test plays the battle again on the simulator and checks that the recording is what
it gives (run it with ``POKEGYM_RECORD_LOGS=1`` to write the recording anew).
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pokegym.backends.base import PlayerView
from pokegym.world import priors
from pokegym.world.data import load_dex, to_id
from pokegym.world.priors import BeliefState, GenericPrior, TablePrior
from pokegym.world.sets import PokemonSet
from pokegym.world.state import state_from_battle

DATA = Path(__file__).parent / "data" / "protocol"
RANDOM_BATTLE = DATA / "gen9randombattle-seed11.json.gz"
TURNS = 25


def load(path: Path) -> dict[str, Any]:
    return json.loads(gzip.decompress(path.read_bytes()))


def replay(recording: dict[str, Any], on_block: Any = None) -> PlayerView:
    """Player 1's view rebuilt from the recording; ``on_block(battle)`` after each block."""
    view = PlayerView(recording["tag"], recording["names"][0], recording["names"][1], "p1",
                      recording["gen"])  # fmt: skip
    for text, requests in recording["blocks"]:
        view.feed(text)
        view.feed_requests(requests)
        if on_block is not None:
            on_block(view.battle)
    return view


def prior_of(recording: dict[str, Any]) -> TablePrior:
    return TablePrior.from_counts(recording["prior"], fallback=GenericPrior(9, style="random"))


def truth(recording: dict[str, Any]) -> dict[str, PokemonSet]:
    return {to_id(d["species"]): PokemonSet.from_showdown(d) for d in recording["truth"]}


def comparable(pset: PokemonSet, *, with_item: bool = True) -> tuple[object, ...]:
    item = pset.item if with_item else None
    return (pset.level, item, pset.ability, tuple(sorted(pset.moves)), pset.tera_type)


@pytest.fixture(scope="module")
def recording() -> dict[str, Any]:
    return load(RANDOM_BATTLE)


def test_the_recording_rebuilds_the_battle(recording):
    view = replay(recording)
    battle = view.battle
    assert battle.turn >= TURNS and battle.player_role == "p1"
    assert len(battle.opponent_team) >= 3 and battle.active_pokemon is not None


def test_beliefs_from_the_recorded_battle_keep_the_truth(recording):
    prior = prior_of(recording)
    belief = BeliefState(prior, our_role="p1", gen=9)
    changed: list[bool] = []
    view = replay(recording, on_block=lambda b: changed.append(belief.update(b)))
    battle = view.battle
    assert any(changed)
    before = belief.distributions()
    assert belief.update(battle) is False  # nothing new
    assert all(belief.distributions()[k] is before[k] for k in before)

    true = truth(recording)
    dex = load_dex(9)
    checked = 0
    for ident, mon in battle.opponent_team.items():
        dist = belief.distribution(ident)
        revealed = [m for m in mon.moves if m in dex.moves and m != "struggle"]
        assert all(set(revealed) <= set(p.moves) for p in dist.sets), ident
        pset = true[to_id(mon.species)]
        knocked = mon.item != "unknown_item" and to_id(mon.item or "") != pset.item
        if mon.item != "unknown_item":
            assert {p.item for p in dist.sets} == {to_id(mon.item or "")}, ident
        if any(comparable(p) == comparable(pset) for p in prior.distribution(mon.species).sets):
            checked += 1
            want = comparable(pset, with_item=not knocked)
            kept = [w for p, w in dist if comparable(p, with_item=not knocked) == want]
            assert kept and kept[0] > 0, (ident, dist.notes)
    assert checked >= 2

    modal = belief.modal_determinization()
    assert set(modal) == {to_id(mon.species) for mon in battle.opponent_team.values()}
    state = state_from_battle(battle, modal, dex)
    assert len(state.sides[1].mons) == len(battle.opponent_team)
    samples = belief.sample_determinizations(np.random.default_rng(3), 4)
    assert samples == belief.sample_determinizations(np.random.default_rng(3), 4)


def test_turn_orders_are_read_from_the_recorded_lines(recording):
    """Every turn in which both actives moved gives one turn order; the opponent's true
    set is consistent with each (Showdown decided those turns with it)."""
    view = replay(recording)
    orders = priors.turn_orders(view.battle)
    assert len(orders) >= 5
    true = truth(recording)
    dex = load_dex(9)
    for ident, order in orders:
        species = to_id(view.battle.opponent_team[ident].species)
        assert priors.order_consistent(true[species], order, dex), (ident, order)


def test_a_decision_never_builds_a_prior(recording, tmp_path, monkeypatch):
    """With no prior built, a belief made during a decision says what to run instead of
    starting Node (this fast test would fail if it started one)."""
    monkeypatch.setenv("POKEGYM_HOME", str(tmp_path))
    battle = replay(recording).battle
    with pytest.raises(priors.PriorsNotBuiltError, match="pokegym priors build"):
        BeliefState.from_battle(battle, "gen9randombattle")


# ----------------------------------------------------------------------- recording
def record_random_battle(seed: int = 11, turns: int = TURNS) -> dict[str, Any]:
    """Play the battle on the simulator and capture what player 1 received."""
    from pokegym.actions import ActionCodec
    from pokegym.agents import make_agent
    from pokegym.backends.sim import SimBattleSession
    from pokegym.env import opponent_choice
    from pokegym.formats import resolve_format
    from pokegym.showdown.simulator import Simulator

    sim = Simulator()
    try:
        fmt = resolve_format("gen9randombattle", simulator=sim)
        session = SimBattleSession(sim, fmt, seeds=(seed, seed + 1, seed + 2), start=False)
        blocks: list[list[Any]] = []
        feed = session._absorb

        def absorb(result: Any, starting: bool = False) -> None:
            blocks.append([result[0], list(result[5] or [])])  # player 1's text and requests
            feed(result, starting)

        session._absorb = absorb  # type: ignore[method-assign]
        session.absorb(sim.call([session.start_command])[0], starting=True)
        battle = session.views[0].battle
        rng = np.random.default_rng(seed)
        agents = (make_agent(f"random:seed={seed}"), make_agent(f"max_power:seed={seed}"))
        codec = ActionCodec(fmt.gimmick)
        while not session.finished and battle.turn < turns:
            session.choose({side: opponent_choice(agents[side], session.battles[side], codec, rng)
                            for side in (0, 1) if session.needs_choice(side)})  # fmt: skip
        team = session.teams()[1]
        raw = json.loads(priors.random_prior_cache_path("gen9randombattle").read_text())
        keys = {to_id(d.get("speciesId") or d["species"]) for d in team}
        keys |= {k for d in team for k in raw["formes"].get(to_id(d["species"]), [])}
        keys &= set(raw["species"])
        prior = {"format": raw["format"], "gen": raw["gen"], "formes": raw["formes"],
                 "species": {k: raw["species"][k] for k in sorted(keys)}}  # fmt: skip
        names = [battle.player_username, battle.opponent_username]
        return {"tag": battle.battle_tag, "names": names, "gen": 9, "blocks": blocks,
                "truth": team, "prior": prior}  # fmt: skip
    finally:
        sim.close()


@pytest.mark.slow
def test_the_recording_is_what_the_simulator_plays():
    fresh = record_random_battle()
    if os.environ.get("POKEGYM_RECORD_LOGS"):
        DATA.mkdir(parents=True, exist_ok=True)
        RANDOM_BATTLE.write_bytes(gzip.compress(json.dumps(fresh).encode(), mtime=0))
    assert load(RANDOM_BATTLE) == json.loads(json.dumps(fresh))
