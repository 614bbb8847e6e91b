"""Paired bootstrap intervals: a planted difference is found, none is found at about the stated
rate when there is none, the same seed gives the same intervals, and both methods agree with naive
implementations written here."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest

from engine.errors import WorkloadError
from engine.metrics.bootstrap import Bootstrap, paired_interval, resample_indices


def paired_samples(rng: np.random.Generator, n: int, effect: float,
                   sigma: float = 0.8) -> tuple[np.ndarray, np.ndarray]:
    """Replicates that differ a lot from each other (a busy week, a quiet week) and a policy B whose
    value is A's times (1 + effect) plus its own noise: what weekly windows look like."""
    level = rng.lognormal(mean=8.0, sigma=sigma, size=n)           # skewed, like mean waits
    a = level * rng.normal(1.0, 0.1, size=n)
    b = level * (1 + effect) * rng.normal(1.0, 0.1, size=n)
    return a, b


def test_a_planted_difference_is_found_and_its_size_is_inside_the_interval():
    a, b = paired_samples(np.random.default_rng(1), 52, effect=-0.10)
    interval = paired_interval(a, b, Bootstrap(seed=3))
    low, high = interval.relative_ci
    assert high < 0                                  # told from noise: B is lower
    assert low < -0.10 < high
    assert interval.ci[1] < 0
    assert interval.difference == pytest.approx(b.mean() - a.mean())
    assert interval.relative == pytest.approx(b.mean() / a.mean() - 1)


def coverage(method: str, *, cases: int, replicates: int, sigma: float) -> tuple[float, float]:
    """The share of ``cases`` seeded comparisons with no difference whose interval covers zero
    (difference, relative change)."""
    rng = np.random.default_rng(2026)
    covered = covered_relative = 0
    for case in range(cases):
        a, b = paired_samples(rng, replicates, effect=0.0, sigma=sigma)
        interval = paired_interval(a, b, Bootstrap(method=method, resamples=1000, seed=case))
        covered += interval.ci[0] <= 0 <= interval.ci[1]
        covered_relative += interval.relative_ci[0] <= 0 <= interval.relative_ci[1]
    return covered / cases, covered_relative / cases


# A 95 % interval should leave out zero in about 5 % of comparisons with no difference. Binomial
# sd of the rate over 200 cases: 1.5 points; the tolerance is 3.5 points.
def test_with_no_difference_the_default_interval_covers_zero_at_about_the_stated_rate():
    # 52 weekly windows of heavy-tailed values (what the module docstring quotes)
    for rate in coverage("percentile", cases=200, replicates=52, sigma=0.8):
        assert abs(rate - 0.95) <= 0.035, rate


@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_with_no_difference_both_methods_cover_zero_at_about_the_stated_rate_on_milder_data(method):
    for rate in coverage(method, cases=200, replicates=52, sigma=0.4):
        assert abs(rate - 0.95) <= 0.035, rate


def test_the_same_seed_gives_the_same_intervals_and_another_seed_others():
    a, b = paired_samples(np.random.default_rng(5), 30, effect=0.05)
    first, again = paired_interval(a, b, Bootstrap(seed=11)), paired_interval(a, b, Bootstrap(seed=11))
    other = paired_interval(a, b, Bootstrap(seed=12))
    assert first == again
    assert first.ci != other.ci


def naive_mean_differences(a: np.ndarray, b: np.ndarray, how: Bootstrap) -> np.ndarray:
    """The resampled mean differences, one resample at a time, drawing as the module says it does."""
    rng = np.random.default_rng(how.seed)
    picks = rng.integers(0, len(a), size=(how.resamples, len(a)))
    return np.array([sum(b[i] - a[i] for i in row) / len(row) for row in picks])


def test_the_percentile_interval_is_the_quantiles_of_the_resampled_differences():
    a, b = paired_samples(np.random.default_rng(7), 12, effect=0.2)
    how = Bootstrap(method="percentile", resamples=500, seed=4)
    boots = naive_mean_differences(a, b, how)
    interval = paired_interval(a, b, how)
    assert interval.ci == pytest.approx(tuple(np.quantile(boots, [0.025, 0.975])))


def test_the_bca_interval_matches_a_naive_bca():
    # Efron & Tibshirani (1993) eq. 14.10-14.15 written out loop by loop
    a, b = paired_samples(np.random.default_rng(8), 15, effect=0.3)
    how = Bootstrap(method="bca", resamples=800, seed=9)
    boots = naive_mean_differences(a, b, how)
    observed = b.mean() - a.mean()
    z0 = NormalDist().inv_cdf((sum(x < observed for x in boots) + 0.5 * sum(x == observed for x in boots))
                              / len(boots))
    leave_one_out = [(sum(b) - b[i] - (sum(a) - a[i])) / (len(a) - 1) for i in range(len(a))]
    centre = sum(leave_one_out) / len(leave_one_out)
    accel = (sum((centre - t) ** 3 for t in leave_one_out)
             / (6 * sum((centre - t) ** 2 for t in leave_one_out) ** 1.5))
    levels = []
    for alpha in (0.025, 0.975):
        z = NormalDist().inv_cdf(alpha)
        levels.append(NormalDist().cdf(z0 + (z0 + z) / (1 - accel * (z0 + z))))
    interval = paired_interval(a, b, how)
    assert interval.ci == pytest.approx(tuple(np.quantile(boots, levels)))


def test_shared_resamples_give_the_same_interval_as_the_seed_alone():
    a, b = paired_samples(np.random.default_rng(3), 20, effect=0.1)
    how = Bootstrap(seed=6)
    assert paired_interval(a, b, how, resample_indices(20, how)) == paired_interval(a, b, how)


def test_identical_policies_give_a_zero_interval():
    values = np.array([3.0, 5.0, 8.0, 1.0])
    interval = paired_interval(values, values.copy(), Bootstrap())
    assert interval.difference == 0 and interval.ci == (0.0, 0.0) and interval.relative_ci == (0.0, 0.0)


def test_one_replicate_gives_no_interval_and_a_zero_mean_no_relative_change():
    one = paired_interval(np.array([2.0]), np.array([3.0]), Bootstrap())
    assert one.ci is None and one.relative == pytest.approx(0.5)
    zero = paired_interval(np.array([0.0, 0.0]), np.array([1.0, 2.0]), Bootstrap())
    assert zero.relative is None and zero.relative_ci is None and zero.ci is not None


@pytest.mark.parametrize("options", [{"method": "student"}, {"resamples": 10}, {"confidence": 1.0}])
def test_bad_options_are_input_errors(options):
    with pytest.raises(WorkloadError):
        Bootstrap(**options)
