"""bench/engine_oracle.py: the engine agent told the opponent's whole team, on real
battles (the Rust engine and the simulator)."""

from __future__ import annotations

import json
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
def test_the_told_engine_plays_the_battles_of_plain_engine_against_another_agent(capsys, tmp_path):
    """``--opponent``: battle k is the one ``compare --agents engine,OPPONENT`` plays with
    the seed (same teams: every battle pairs), and ``--paired`` tables the two."""
    from bench import engine_oracle
    from bench.paired import load_outcomes
    from pokegym.arena import ArenaConfig, run_arena

    plain = run_arena(ArenaConfig(agents=["engine:iterations=40", "random"], battles_per_pair=2,
                                  seed=4, concurrency=1, clock_bank=None))  # fmt: skip
    journal = tmp_path / "battles.jsonl"
    journal.write_text("".join(json.dumps({"pair": list(r.pair), "seed": r.seed,
                                           "winner": r.winner}) + "\n"
                               for r in plain.battles))  # fmt: skip
    assert len(load_outcomes([journal], "engine")) == 2
    argv = ["--battles", "2", "--seed", "4", "--agent", "iterations=40", "--opponent", "random",
            "--paired", str(journal)]  # fmt: skip
    assert engine_oracle.main(argv) == 0
    out = capsys.readouterr().out
    assert "vs random" in out
    row = next(line for line in out.splitlines() if line.startswith("| engine told"))
    assert "(n = 2)" in row, out  # both battles of the plain run paired
    with pytest.raises(SystemExit):
        engine_oracle.main(["--battles", "1", "--paired", str(journal)])


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


class _Belief:
    """A belief whose every guess gives each seen species the same made-up set."""

    def __init__(self, seen: list[str]):
        self.seen = seen

    def sample_determinizations(self, rng, n):
        from pokegym.world.sets import PokemonSet

        return [{s: PokemonSet(species=s, moves=("tackle",)) for s in self.seen}] * n


@pytest.mark.slow
def test_each_told_part_replaces_only_its_part_of_the_guesses():
    from bench.engine_oracle import ToldEngine, true_team
    from pokegym.backends.sim import SimBattleSession
    from pokegym.formats import resolve_format
    from pokegym.showdown.simulator import shared_simulator

    sim = shared_simulator()
    sim.ensure_running()
    fmt = resolve_format("gen9randombattle", simulator=sim)
    session = SimBattleSession(sim, fmt, seeds=(8, 9, 10), names=("p1", "p2"))
    ours, theirs = session.battles
    seen = [to_id(m.species) for m in ours.opponent_team.values()]
    assert len(seen) == 1  # the opponent's lead
    truth = true_team(theirs)
    belief = _Belief(seen)
    for part in ("all", "seen", "unseen"):
        agent = ToldEngine(seed=0, told=part, samples=3)
        agent.told_battle = theirs
        guesses = agent.guesses(ours, belief)
        if part == "all":
            assert guesses == [truth]
            continue
        assert len(guesses) == 3
        for guess in guesses:
            if part == "seen":
                assert guess == {seen[0]: truth[seen[0]]}
            else:  # the five true unseen Pokémon first, the seen one as the belief guessed
                assert list(guess)[:5] == [s for s in truth if s != seen[0]]
                assert guess[seen[0]].moves == ("tackle",)
    with pytest.raises(ValueError, match="told is one of"):
        ToldEngine(seed=0, told="some")
