"""``pokegym bench evaluation_fit``: poke-engine's evaluation terms read from a battle log,
the symmetric logistic fit, and the benchmark on battles the arena recorded."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from bench import evaluation_fit as fit
from pokegym.web.replay import ReplayLog, replay_battle, turn_starts

LOG = """|player|p1|p1||
|player|p2|p2||
|teamsize|p1|2
|teamsize|p2|3
|gen|9
|start
|switch|p1a: Garchomp|Garchomp, L80, M|100/100
|switch|p2a: Pikachu|Pikachu, L90, F|100/100
|turn|1
|move|p1a: Garchomp|Swords Dance|p1a: Garchomp
|-boost|p1a: Garchomp|atk|2
|move|p2a: Pikachu|Stealth Rock|p1a: Garchomp
|-sidestart|p2: p2|move: Stealth Rock
|-sidestart|p1: p1|Reflect
|-status|p2a: Pikachu|par
|-damage|p2a: Pikachu|50/100 par
|turn|2
|move|p1a: Garchomp|Earthquake|p2a: Pikachu
|-damage|p2a: Pikachu|0 fnt
|faint|p2a: Pikachu
|win|p1
"""


def _replay() -> ReplayLog:
    lines = [line for line in LOG.splitlines() if line.startswith("|")]
    return ReplayLog("test.log", lines, ("p1", "p2"), 9, "[Gen 9] Random Battle")


def test_the_terms_of_a_turn_as_the_released_evaluation_counts_them():
    replay = _replay()
    assert list(turn_starts(replay, replay_battle(replay))) == [None, None, "p1 won."]
    battle = replay_battle(replay)
    states = turn_starts(replay, battle)
    next(states)
    leads = fit.turn_terms(battle)
    assert leads[list(fit.TERMS).index("alive_value")] == 30.0 * (2 - 3)  # unseen count alive
    next(states)  # the start of turn 2
    terms = dict(zip(fit.TERMS, fit.turn_terms(battle), strict=True))
    # Garchomp +2 Attack (2.0 x 30); Pikachu at half HP, paralysed (-25), Stealth Rock on
    # p2's side hitting Pikachu and its two unseen team mates (-10 each); items unknown
    # count as held; p1's Reflect with all 5 turns left (20 points a turn).
    assert terms == {
        "boost_value": 60.0, "alive_value": -30.0, "hp_value": -50.0, "item_value": -10.0,
        "status_value": 25.0, "hazard_value": 30.0, "volatile_value": 0.0,
        "condition_value": 100.0, "tera_value": 0.0,
    }  # fmt: skip


def test_a_battles_rows_leave_out_the_end_and_carry_the_winner(tmp_path):
    path = tmp_path / "battle.log"
    path.write_text(LOG)
    rows, won = fit.battle_rows(path)
    assert rows.shape == (2, len(fit.TERMS)) and won == 1.0
    path.write_text(LOG.replace("|win|p1", "|tie"))
    assert fit.battle_rows(path) is None


def test_boost_points_follow_the_released_table():
    assert fit.boost_points({"atk": 6}) == pytest.approx(3.3 * 30)
    assert fit.boost_points({"def": -2, "spe": 1}) == pytest.approx(-2.0 * 15 + 30)
    assert fit.boost_points({"spa": 9}) == pytest.approx(3.3 * 30)  # clamped at +6


def test_the_fit_finds_the_multipliers_that_made_the_outcomes():
    """Outcomes drawn from a model whose item term counts 3 times and whose hazards 0.5
    times what the released weights say: the fit names those multipliers."""
    rng = np.random.default_rng(7)
    x = rng.normal(0.0, 40.0, size=(40_000, len(fit.TERMS)))
    truth = np.ones(len(fit.TERMS))
    truth[fit.TERMS.index("item_value")] = 3.0
    truth[fit.TERMS.index("hazard_value")] = 0.5
    p = 1.0 / (1.0 + np.exp(-0.0125 * (x @ truth)))
    y = (rng.random(len(p)) < p).astype(float)
    turns = fit.Turns(x, np.zeros((len(y), 0)), y, np.arange(len(y)) // 20, ("a",))
    found = fit.multipliers(turns)
    # Relative to the released model's slope, which the changed terms pull as well.
    ratio = found / found[fit.TERMS.index("hp_value")]
    assert ratio == pytest.approx(truth, rel=0.1)
    symmetric = fit.fit_logistic(x, y)
    assert np.allclose(fit.fit_logistic(-x, 1.0 - y), symmetric)


def test_the_stronger_player_does_not_pass_for_a_terms_worth():
    """A strong agent that also uses more Tera wins more: with a column for who played
    p1, the fit gives the win to the player and leaves Tera's multiplier near its truth
    (1); without it, Tera's cost looks much smaller (here it would even turn positive)."""
    rng = np.random.default_rng(11)
    n = 30_000
    x = rng.normal(0.0, 40.0, size=(n, len(fit.TERMS)))
    strong_first = rng.random(n) < 0.5
    side = np.where(strong_first, 1.0, -1.0)
    tera = fit.TERMS.index("tera_value")
    x[:, tera] = -75.0 * side * (rng.random(n) < 0.8)  # the strong one terastallizes
    p = 1.0 / (1.0 + np.exp(-(0.0125 * x.sum(axis=1) + 1.5 * side)))
    y = (rng.random(n) < p).astype(float)
    battle = np.arange(n) // 20
    with_players = fit.Turns(x, side[:, None], y, battle, ("strong", "weak"))
    without = fit.Turns(x, np.zeros((n, 0)), y, battle, ("strong", "weak"))
    assert fit.multipliers(with_players)[tera] == pytest.approx(1.0, abs=0.25)
    assert fit.multipliers(without)[tera] < 0.5


@pytest.mark.slow
def test_the_benchmark_on_battles_the_arena_recorded(tmp_path):
    out = tmp_path / "run"
    subprocess.run([sys.executable, "-m", "pokegym.cli", "compare", "--agents",
                    "random,max_power", "--battles", "12", "--seed", "5", "--concurrency",
                    "1", "--no-clock", "--quiet", "--replays", "--out", str(out)],
                   check=True, timeout=600)  # fmt: skip
    result_file = tmp_path / "fit.json"
    done = subprocess.run([sys.executable, "-m", "pokegym.cli", "bench", "evaluation_fit",
                           str(out), "--draws", "5", "--json", str(result_file)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(result_file.read_text())
    assert result["battles"] == 12 and result["turns"] > 12
    assert result["agents"] == ["max_power", "random"]
    assert result["multipliers"]["hp_value"]["seen"]
    assert np.isfinite(result["multipliers"]["hp_value"]["fitted"])
    assert "engine:" in done.stdout and "held-out" in done.stdout
