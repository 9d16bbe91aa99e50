"""Ratings and tests for comparing agents: Bradley–Terry / Elo by maximum likelihood,
Wald tests and contrasts from the fitted covariance, exact binomial tests and the
Holm–Bonferroni correction.

Model: agent ``i`` beats agent ``j`` with probability ``σ(β_i − β_j)`` (logistic).
The log-strengths ``β`` are fitted by maximum likelihood over *all* games at once,
so the result does not depend on the order in which games were played (unlike
incremental Elo updates). A reference agent is fixed at ``β = 0`` to make the model
identifiable; the covariance of the other ``β`` is the inverse of the observed
Fisher information at the optimum. A tie counts as half a win for each side (the
standard "ties as half wins" treatment). Elo ratings are the same fit on Elo's scale:
``elo = anchor + 400 / ln(10) · β``.

A small ridge (default ``1e-6`` on β) keeps the fit finite when an agent won or lost
every game; such agents get very wide intervals, as they should.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ELO_SCALE = 400.0 / math.log(10.0)


@dataclass(frozen=True)
class Game:
    """One battle: ``winner`` is ``a``, ``b``, or None for a tie."""

    a: str
    b: str
    winner: str | None


@dataclass
class BradleyTerry:
    """A fitted Bradley–Terry model (see the module docstring)."""

    players: list[str]
    reference: str
    beta: np.ndarray  # log-strengths, beta[reference] = 0
    covariance: np.ndarray  # full matrix; the reference's row and column are 0
    log_likelihood: float
    games: int

    def index(self, player: str) -> int:
        return self.players.index(player)

    def strength(self, player: str) -> float:
        return float(self.beta[self.index(player)])

    def std_error(self, player: str) -> float:
        i = self.index(player)
        return float(math.sqrt(max(0.0, self.covariance[i, i])))

    def win_probability(self, a: str, b: str) -> float:
        return 1.0 / (1.0 + math.exp(-(self.strength(a) - self.strength(b))))

    def elo(self, anchor: float = 1000.0) -> dict[str, tuple[float, float, float]]:
        """Elo rating of each player with a 95 % interval: {player: (elo, low, high)}."""
        out = {}
        for player in self.players:
            b, se = self.strength(player), self.std_error(player)
            out[player] = (
                anchor + ELO_SCALE * b,
                anchor + ELO_SCALE * (b - 1.959963984540054 * se),
                anchor + ELO_SCALE * (b + 1.959963984540054 * se),
            )
        return out

    def contrast(self, weights: dict[str, float]) -> tuple[float, float, float]:
        """A linear contrast c·β: (estimate, standard error, two-sided Wald p-value)."""
        c = np.zeros(len(self.players))
        for player, weight in weights.items():
            c[self.index(player)] = weight
        estimate = float(c @ self.beta)
        variance = float(c @ self.covariance @ c)
        se = math.sqrt(max(variance, 0.0))
        p = 2.0 * normal_sf(abs(estimate) / se) if se > 0 else (0.0 if estimate else 1.0)
        return estimate, se, p

    def wald_test(self, a: str, b: str) -> tuple[float, float, float]:
        """Is ``a`` stronger than ``b``? (β_a − β_b, its standard error, two-sided p)."""
        return self.contrast({a: 1.0, b: -1.0})


def fit_bradley_terry(
    games: Sequence[Game], reference: str | None = None, ridge: float = 1e-6, max_iter: int = 100
) -> BradleyTerry:
    """Maximum-likelihood Bradley–Terry fit by Newton's method (ties = half wins)."""
    players = sorted({g.a for g in games} | {g.b for g in games})
    if len(players) < 2:
        raise ValueError("A rating needs games between at least two players.")
    reference = reference or players[0]
    if reference not in players:
        raise ValueError(f"The reference {reference!r} played no game.")
    n = len(players)
    index = {p: i for i, p in enumerate(players)}
    wins = np.zeros((n, n))  # wins[i, j]: score of i against j
    for g in games:
        i, j = index[g.a], index[g.b]
        if g.winner is None:
            wins[i, j] += 0.5
            wins[j, i] += 0.5
        elif g.winner == g.a:
            wins[i, j] += 1.0
        elif g.winner == g.b:
            wins[j, i] += 1.0
        else:
            raise ValueError(f"winner {g.winner!r} is neither {g.a!r} nor {g.b!r}")
    counts = wins + wins.T
    free = [i for i in range(n) if players[i] != reference]
    beta = np.zeros(n)

    def derivatives(beta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        diff = beta[:, None] - beta[None, :]
        p = 1.0 / (1.0 + np.exp(-diff))
        ll = float(np.sum(wins * np.log(np.clip(p, 1e-300, 1.0)))) - ridge * float(beta @ beta)
        grad = np.sum(wins - counts * p, axis=1) - 2 * ridge * beta
        w = counts * p * (1 - p)
        hess = w.copy()
        np.fill_diagonal(hess, 0.0)
        hess[np.diag_indices(n)] = -np.sum(w, axis=1)
        hess = hess - 2 * ridge * np.eye(n)  # Hessian of the log-likelihood
        return ll, grad, hess

    ll, grad, hess = derivatives(beta)
    for _ in range(max_iter):
        h = hess[np.ix_(free, free)]
        step = np.linalg.solve(h, -grad[free])
        scale = 1.0
        while True:
            candidate = beta.copy()
            candidate[free] += scale * step
            new_ll, new_grad, new_hess = derivatives(candidate)
            if new_ll >= ll - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        beta, ll, grad, hess = candidate, new_ll, new_grad, new_hess
        if np.max(np.abs(scale * step)) < 1e-10:
            break
    covariance = np.zeros((n, n))
    covariance[np.ix_(free, free)] = np.linalg.inv(-hess[np.ix_(free, free)])
    return BradleyTerry(players, reference, beta, covariance, ll, len(games))


def normal_sf(z: float) -> float:
    """P(Z > z) for a standard normal."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def binomial_test(successes: int, n: int, p: float = 0.5) -> float:
    """Exact two-sided binomial test: the probability, under ``p``, of an outcome no more
    likely than the one observed (the rule R's ``binom.test`` and SciPy use)."""
    if not 0 <= successes <= n:
        raise ValueError("0 <= successes <= n")
    if n == 0:
        return 1.0
    if p in (0.0, 1.0):
        return 1.0 if successes == round(p * n) else 0.0
    log_p = [
        math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
        + k * math.log(p) + (n - k) * math.log1p(-p)
        for k in range(n + 1)
    ]  # fmt: skip
    observed = log_p[successes]
    tolerance = 1e-7  # relative, as in R: outcomes within it count as "as likely"
    total = sum(math.exp(lp) for lp in log_p if lp <= observed + math.log1p(tolerance))
    return min(1.0, total)


def holm_bonferroni(p_values: dict[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values (control the family-wise error rate)."""
    ordered = sorted(p_values.items(), key=lambda item: item[1])
    m = len(ordered)
    adjusted: dict[str, float] = {}
    running = 0.0
    for rank, (name, p) in enumerate(ordered):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[name] = running
    return adjusted
