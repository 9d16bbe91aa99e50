"""The clustered mean interval: equal to the usual interval when every value is its own
cluster, wider when values inside a cluster move together, and clear errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pokegym.stats import Z95, clustered_mean_interval


def test_one_value_a_cluster_is_the_usual_standard_error_of_a_mean():
    values = [0.2, 0.9, 0.4, 0.7, 0.1]
    mean, low, high = clustered_mean_interval(values, range(len(values)))
    half = Z95 * np.std(values, ddof=1) / math.sqrt(len(values))
    assert mean == pytest.approx(np.mean(values))
    assert (low, high) == pytest.approx((mean - half, mean + half))


def test_values_that_move_together_in_a_cluster_widen_the_interval():
    values = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    mean, low, high = clustered_mean_interval(values, "aaabbb")
    # Two clusters of totals +1.5 and -1.5 around the mean: variance 2 * 4.5 / 36.
    assert mean == 0.5 and high - mean == pytest.approx(Z95 * 0.5)
    _, naive_low, _ = clustered_mean_interval(values, range(6))
    assert low < naive_low


def test_one_cluster_has_no_spread_to_measure_and_bad_input_is_named():
    assert clustered_mean_interval([0.1, 0.3], [7, 7]) == pytest.approx((0.2, 0.2, 0.2))
    with pytest.raises(ValueError, match="cluster labels"):
        clustered_mean_interval([0.1, 0.3], [1])
    with pytest.raises(ValueError, match="no values"):
        clustered_mean_interval([], [])
