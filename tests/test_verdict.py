"""The book's one rule for training verdicts (``transformer_lib.verdict``): its interval, its words, and
its false-positive rate, computed in closed form and measured by simulation under the null."""

from __future__ import annotations

import math

import pytest
import torch
from scipy import stats

from transformer_lib.verdict import (
    MIN_SEEDS,
    false_positive_rate,
    t_interval,
    t_quantile,
    t_two_sided_probability,
    verdict,
)

TRIALS = 40_000  # standard error of a 5 % rate: 0.0011


def null_draws(seeds: int, seed: int = 0) -> torch.Tensor:
    """(TRIALS, seeds) paired differences of a choice with no effect: independent standard normals."""
    return torch.randn(TRIALS, seeds, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@pytest.mark.parametrize("dof", [1, 2, 3, 4, 5, 8, 9, 20])
def test_the_t_distribution_is_scipys(dof: int) -> None:
    for t in (0.1, 1.0, 2.5, 7.0):
        assert t_two_sided_probability(t, dof) == pytest.approx(1 - 2 * stats.t.sf(t, dof), abs=1e-12)
    assert t_quantile(0.95, dof) == pytest.approx(stats.t.ppf(0.975, dof), rel=1e-10)


def test_the_interval_is_the_t_interval_of_the_mean() -> None:
    x = [0.3, -0.1, 0.5, 0.2, 0.4]
    low, high = t_interval(x)
    scipy_low, scipy_high = stats.t.interval(0.95, len(x) - 1, loc=stats.tmean(x), scale=stats.sem(x))
    assert (low, high) == pytest.approx((scipy_low, scipy_high), rel=1e-10)


def test_the_words() -> None:
    assert verdict([0.02, 0.03, 0.025, 0.021, 0.028]).word == "better"  # +2.5 points, every seed
    assert verdict([-0.02, -0.03, -0.025, -0.021, -0.028]).word == "worse"
    # sure but small: every seed +0.2 points, under the 0.5-point minimum
    assert verdict([0.002, 0.0021, 0.0019, 0.002, 0.0022]).word == "within the noise"
    assert verdict([0.05, -0.03, 0.04, 0.01, -0.02]).word == "within the noise"  # the interval holds 0
    few = verdict([0.05, 0.06, 0.07])  # every seed agrees, but three seeds give no direction
    assert few.word == f"fewer than {MIN_SEEDS} seeds" and not few.directed
    # perplexity: lower is better, and the minimum is 2 % of the base's
    assert verdict([-0.05, -0.06, -0.055, -0.052, -0.058], "perplexity", base=2.0).word == "better"
    assert verdict([-0.03, -0.031, -0.032, -0.03, -0.031], "perplexity", base=2.0).word == "within the noise"
    assert verdict([0.01, 0.02, 0.015, 0.012, 0.018]).text() == "better (+1.5 points [+1.0, +2.0], 5 seeds)"
    with pytest.raises(ValueError, match="base"):
        verdict([0.1] * 5, "perplexity")
    with pytest.raises(ValueError, match="measure"):
        verdict([0.1] * 5, "speed")
    # a classifier's accuracy, 0 to 1, judged and written as exact match is: half a point the minimum
    assert verdict([0.01, 0.02, 0.015, 0.012, 0.018], "accuracy").text() == "better (+1.5 points [+1.0, +2.0], 5 seeds)"
    assert verdict([0.004, 0.0041, 0.0039, 0.004, 0.0042], "accuracy").word == "within the noise"


def test_without_a_minimum_the_false_positive_rate_is_five_percent() -> None:
    for seeds in (3, 5, 10):
        assert false_positive_rate(seeds, 0.0) == pytest.approx(0.05, abs=1e-6)
    assert false_positive_rate(5, 0.5) < false_positive_rate(5, 0.2) < 0.05  # a minimum only lowers it


@pytest.mark.parametrize("minimum", [0.0, 0.5, 1.0])
def test_the_computed_false_positive_rate_is_the_simulated_one(minimum: float) -> None:
    x = null_draws(MIN_SEEDS)
    mean, sd = x.mean(dim=1), x.std(dim=1)
    half = t_quantile(0.95, MIN_SEEDS - 1) * sd / math.sqrt(MIN_SEEDS)
    directed = ((mean.abs() > half) & (mean.abs() > minimum)).double().mean().item()
    assert directed == pytest.approx(false_positive_rate(MIN_SEEDS, minimum), abs=4 * 0.0011)
    # and the rule itself, on a sample of the same draws (scale: the minimum of exact match is 0.005)
    words = [verdict([0.005 / minimum * v for v in row] if minimum else [0.01 * v for v in row]).directed
             for row in x[:4000].tolist()]
    expected = false_positive_rate(MIN_SEEDS, minimum if minimum else 0.005 / 0.01)
    assert sum(words) / len(words) == pytest.approx(expected, abs=4 * math.sqrt(expected * (1 - expected) / 4000))


def test_a_percentile_bootstrap_would_say_too_much() -> None:
    """Why the rule uses t: with 5 seeds a percentile bootstrap gives a null effect a direction about
    three times in twenty, not once."""
    x = null_draws(MIN_SEEDS, seed=1)[:4000]
    draws = torch.randint(0, MIN_SEEDS, (4000, 1000, MIN_SEEDS), generator=torch.Generator().manual_seed(2))
    means = torch.gather(x.unsqueeze(1).expand(-1, 1000, -1), 2, draws).mean(dim=2)
    low, high = means.quantile(0.025, dim=1), means.quantile(0.975, dim=1)
    assert ((low > 0) | (high < 0)).double().mean().item() > 0.12
