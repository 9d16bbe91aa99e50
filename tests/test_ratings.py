"""Statistics with known answers: Wilson, exact binomial, Holm, Bradley–Terry / Elo."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pokegym.ratings import (
    ELO_SCALE,
    Game,
    binomial_test,
    fit_bradley_terry,
    holm_bonferroni,
    normal_sf,
)
from pokegym.stats import percentile, wilson_interval


def test_wilson_interval_textbook_values():
    # Newcombe (1998), Table I: 81/263 -> 0.2553 to 0.3662 (score interval, no correction).
    low, high = wilson_interval(81, 263)
    assert low == pytest.approx(0.2553, abs=5e-4) and high == pytest.approx(0.3662, abs=5e-4)
    # 15/148 -> 0.0624 to 0.1605; 0/20 -> 0 to 0.1611.
    low, high = wilson_interval(15, 148)
    assert low == pytest.approx(0.0624, abs=5e-4) and high == pytest.approx(0.1605, abs=5e-4)
    low, high = wilson_interval(0, 20)
    assert low == 0.0 and high == pytest.approx(0.1611, abs=5e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    # The interval holds the observed rate at the ends too (no rounding below 1 or above 0).
    for n in (1, 3, 7, 49, 913, 10_000):
        assert wilson_interval(n, n)[1] == 1.0 and wilson_interval(0, n)[0] == 0.0
        for wins in range(0, n + 1, max(1, n // 7)):
            low, high = wilson_interval(wins, n)
            assert low <= wins / n <= high


def test_exact_binomial_test():
    # 7 heads in 10 fair tosses: P = (1+10+45+120+120+45+10+1)/1024 = 352/1024.
    assert binomial_test(7, 10) == pytest.approx(352 / 1024)
    assert binomial_test(5, 10) == pytest.approx(1.0)
    assert binomial_test(0, 10) == pytest.approx(2 / 1024)
    # An asymmetric null: 3 of 20 at p = 0.3: outcomes with P <= P(3) summed.
    probs = [math.comb(20, k) * 0.3**k * 0.7 ** (20 - k) for k in range(21)]
    expected = sum(p for p in probs if p <= probs[3] * (1 + 1e-7))
    assert binomial_test(3, 20, 0.3) == pytest.approx(expected)
    with pytest.raises(ValueError):
        binomial_test(11, 10)


def test_holm_bonferroni_ordering_and_values():
    adjusted = holm_bonferroni({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005})
    # Sorted: d .005*4=.02, a .01*3=.03, c .03*2=.06, b .04*1=.04 -> monotone .06
    assert adjusted == pytest.approx({"d": 0.02, "a": 0.03, "c": 0.06, "b": 0.06})
    assert holm_bonferroni({"x": 0.9, "y": 0.8}) == pytest.approx({"y": 1.0, "x": 1.0})


def test_bradley_terry_recovers_known_strengths():
    rng = np.random.default_rng(3)
    truth = {"A": 0.0, "B": 0.5, "C": 1.0, "D": -0.7, "E": 1.6}
    players = list(truth)
    games = []
    for i, a in enumerate(players):
        for b in players[i + 1 :]:
            p = 1 / (1 + math.exp(-(truth[a] - truth[b])))
            for _ in range(1500):
                games.append(Game(a, b, a if rng.random() < p else b))
    fit = fit_bradley_terry(games, reference="A")
    for player, value in truth.items():
        assert fit.strength(player) == pytest.approx(value, abs=4 * fit.std_error(player) + 1e-9)
        assert abs(fit.strength(player) - value) < 0.12
    assert fit.strength("A") == 0.0 and fit.std_error("A") == 0.0
    # Intervals are honest: the true differences lie inside ~95 % of the Wald intervals.
    diff, se, p = fit.wald_test("E", "C")
    assert diff == pytest.approx(0.6, abs=3 * se) and p < 1e-6
    # Elo is the same fit on Elo's scale.
    elo = fit.elo(anchor=1500)
    assert elo["C"][0] - elo["A"][0] == pytest.approx(ELO_SCALE * fit.strength("C"))
    assert elo["C"][1] < elo["C"][0] < elo["C"][2]


def test_bradley_terry_is_order_independent_and_handles_ties_and_sweeps():
    games = [Game("x", "y", "x")] * 30 + [Game("x", "y", "y")] * 10 + [Game("x", "y", None)] * 4
    fit = fit_bradley_terry(games, reference="y")
    # Two players: the MLE is the log odds of the score, ties counted as half wins.
    assert fit.strength("x") == pytest.approx(math.log(32 / 12), abs=1e-6)
    shuffled = list(reversed(games))
    assert fit_bradley_terry(shuffled, reference="y").strength("x") == pytest.approx(
        fit.strength("x")
    )
    sweep = fit_bradley_terry([Game("p", "q", "p")] * 5 + [Game("q", "r", "q")] * 5, reference="q")
    assert sweep.strength("p") > 2 and sweep.std_error("p") > 1  # finite, and very uncertain
    with pytest.raises(ValueError):
        fit_bradley_terry([Game("p", "q", "z")])


def test_normal_sf_and_percentile():
    assert normal_sf(1.959963984540054) == pytest.approx(0.025)
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert math.isnan(percentile([], 50))
