"""bench/engine_oracle.py: the engine agent told the opponent's whole team, on real
battles (the Rust engine and the simulator)."""

from __future__ import annotations

import re

import pytest

from pokegym.world.data import to_id

pytest.importorskip("poke_engine", reason="poke-engine is built by `pokegym engine build`")


@pytest.mark.slow
def test_the_told_engine_searches_the_true_team_and_reports_a_rate(capsys):
    from bench import engine_oracle

    assert engine_oracle.main(["--battles", "2", "--seed", "3", "--agent", "iterations=40"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    found = re.search(r"(\d+)-(\d+), .* over 2 battles .* (\d+) decisions searched the true team",
                      line)  # fmt: skip
    assert found is not None, line
    assert int(found[1]) + int(found[2]) == 2 and int(found[3]) > 5


@pytest.mark.slow
def test_the_true_team_is_the_opponents_own_view():
    from bench.engine_oracle import true_team
    from pokegym.backends.sim import SimBattleSession
    from pokegym.formats import resolve_format
    from pokegym.showdown.simulator import shared_simulator

    sim = shared_simulator()
    sim.ensure_running()
    fmt = resolve_format("gen9randombattle", simulator=sim)
    session = SimBattleSession(sim, fmt, seeds=(5, 6, 7), names=("p1", "p2"))
    team = true_team(session.battles[1])
    assert len({pset.species for pset in team.values()}) == 6
    for pset in team.values():
        assert pset.moves and pset.ability and pset.tera_type, pset
    ours = {m.species for m in session.battles[0].team.values()}
    assert ours and {to_id(s) for s in ours} != set(team)  # the other side's team
