"""How well win probabilities predict results: log-loss, Brier score, ROC AUC (with a
paired bootstrap over battles) and calibration by decile."""

from __future__ import annotations

import itertools
import math

import numpy as np

__all__ = ["bootstrap_auc", "brier", "calibration", "log_loss", "roc_auc", "value_metrics"]


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def brier(p: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((p - y) ** 2))


def roc_auc(p: np.ndarray, y: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney, ties in ``p`` counted half)."""
    positives = y > 0.5
    n_pos, n_neg = int(positives.sum()), int((~positives).sum())
    if n_pos == 0 or n_neg == 0:
        return math.nan
    order = np.argsort(p, kind="mergesort")
    ranks = np.empty(len(p), dtype=np.float64)
    sorted_p = p[order]
    i = 0
    while i < len(p):
        j = i
        while j + 1 < len(p) and sorted_p[j + 1] == sorted_p[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def bootstrap_auc(
    scores: dict[str, np.ndarray], labels: np.ndarray, groups: np.ndarray, rounds: int, seed: int
) -> dict[str, np.ndarray]:
    """AUC of every scorer on the same resamples of whole groups (battles), so that
    differences between scorers are paired. Resamples with one class only are skipped."""
    rng = np.random.default_rng(seed)
    names = np.unique(groups)
    index = {g: np.flatnonzero(groups == g) for g in names}
    draws: dict[str, list[float]] = {name: [] for name in scores}
    for _ in range(rounds):
        pick = np.concatenate([index[g] for g in rng.choice(names, len(names))])
        if labels[pick].min() == labels[pick].max():
            continue
        for name, values in scores.items():
            draws[name].append(roc_auc(values[pick], labels[pick]))
    return {name: np.array(values) for name, values in draws.items()}


def calibration(p: np.ndarray, y: np.ndarray, bins: int = 10) -> list[dict[str, float]]:
    """Predicted vs observed win rate per probability decile."""
    out = []
    edges = np.linspace(0, 1, bins + 1)
    for lo, hi in itertools.pairwise(edges):
        mask = (p >= lo) & (p < hi if hi < 1 else p <= hi)
        if mask.any():
            out.append(
                {
                    "bin": f"{lo:.1f}-{hi:.1f}",
                    "n": int(mask.sum()),
                    "predicted": float(p[mask].mean()),
                    "observed": float(y[mask].mean()),
                }
            )
    return out


def value_metrics(p: np.ndarray, outcome: np.ndarray) -> dict[str, float]:
    """Log-loss, Brier and AUC against decided results (ties left out)."""
    decided = outcome != 0.5
    p, y = p[decided], outcome[decided]
    return {"log_loss": log_loss(p, y), "brier": brier(p, y), "auc": roc_auc(p, y),
            "n": int(decided.sum())}  # fmt: skip
