"""Small statistics for win rates and per-decision measurements."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

Z95 = 1.959963984540054


def wilson_interval(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (default 95 %).

    Ties are usually counted as half a win by the caller. Returns (0, 1) for n = 0.
    """
    if n <= 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # The interval always holds p; clamping keeps rounding from putting p outside it
    # (at p = 1, centre + half can round to 0.9999999999999999).
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = math.ceil(rank)
    if low == high:
        return ordered[low]
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def clustered_mean_interval(
    values: Sequence[float], clusters: Sequence[Hashable], z: float = Z95
) -> tuple[float, float, float]:
    """The mean of ``values`` with a normal interval (default 95 %) whose standard error
    is robust to correlation inside each cluster (the turns of one battle, say): the
    sandwich estimate over cluster totals, with the small-sample factor G / (G - 1) for G
    clusters. A single cluster gives an interval of zero width (nothing to measure the
    spread between clusters with).

    Raises:
        ValueError: ``values`` and ``clusters`` differ in length, or are empty.
    """
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster labels")
    if not values:
        raise ValueError("no values to average")
    n = len(values)
    mean = math.fsum(values) / n
    residuals: dict[Hashable, float] = {}
    for value, cluster in zip(values, clusters, strict=True):
        residuals[cluster] = residuals.get(cluster, 0.0) + value - mean
    g = len(residuals)
    if g < 2:
        return mean, mean, mean
    variance = g / (g - 1) * math.fsum(r * r for r in residuals.values()) / (n * n)
    half = z * math.sqrt(variance)
    return mean, mean - half, mean + half
