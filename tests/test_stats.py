"""simagent.stats on synthetic series with known answers."""

import numpy as np
import pytest

from simagent.stats import (
    block_average,
    blocking_levels,
    detect_equilibration,
    linear_fit,
    statistical_inefficiency,
)


def ar1(n: int, phi: float, mean: float, seed: int) -> np.ndarray:
    """AR(1): x_t = phi x_(t-1) + e_t with unit normal noise, started stationary."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(size=n)
    x = np.empty(n)
    x[0] = noise[0] / np.sqrt(1 - phi**2)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + noise[i]
    return x + mean


def ar1_standard_error(n: int, phi: float) -> float:
    # variance 1/(1-phi^2), statistical inefficiency (1+phi)/(1-phi)
    return float(np.sqrt((1 + phi) / (1 - phi) / (1 - phi**2) / n))


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_block_average_ar1(phi):
    n, mean = 20000, 3.0
    exact = ar1_standard_error(n, phi)
    for seed in range(3):
        x = ar1(n, phi, mean, seed)
        m, se = block_average(x)
        assert 0.7 < se / exact < 1.4
        assert abs(m - mean) < 4 * exact
        assert 0.6 < statistical_inefficiency(x) / ((1 + phi) / (1 - phi)) < 1.6


def test_block_average_fixed_blocks():
    x = ar1(20000, 0.9, 0.0, seed=4)
    m, se = block_average(x, n_blocks=10)
    assert m == pytest.approx(x.mean())
    assert 0.4 < se / ar1_standard_error(20000, 0.9) < 1.8  # 10 blocks: ~25 % scatter
    with pytest.raises(ValueError):
        block_average(x, n_blocks=1)


def test_blocking_levels_shape():
    levels = blocking_levels(np.arange(64.0), min_blocks=16)
    assert [(size, n) for size, n, _, _ in levels] == [(1, 64), (2, 32), (4, 16)]


def test_constant_series():
    assert block_average(np.full(100, 2.5)) == (2.5, 0.0)
    assert statistical_inefficiency(np.full(100, 2.5)) == 1.0


def test_nan_rejected():
    with pytest.raises(ValueError):
        block_average([1.0, np.nan, 2.0])


def test_detect_equilibration_after_transient():
    n, tau = 5000, 200
    for seed in range(3):
        x = ar1(n, 0.8, 0.0, seed) + 10.0 * np.exp(-np.arange(n) / tau)
        t0 = detect_equilibration(x)
        assert 1.5 * tau <= t0 <= n // 2
        m, se = block_average(x[t0:])
        assert abs(m) < 4 * se + 0.05


def test_detect_equilibration_stationary_keeps_most():
    x = ar1(4000, 0.5, 1.0, seed=7)
    assert detect_equilibration(x) < 800


def test_linear_fit_exact_line():
    x = np.linspace(0, 10, 11)
    slope, intercept, slope_se = linear_fit(x, 2.5 * x - 1.0)
    assert slope == pytest.approx(2.5)
    assert intercept == pytest.approx(-1.0)
    assert slope_se == pytest.approx(0.0, abs=1e-12)


def test_linear_fit_noisy_line_error():
    rng = np.random.default_rng(1)
    x = np.linspace(0, 1, 200)
    slopes, errors = [], []
    for _ in range(200):
        slope, _, se = linear_fit(x, 3.0 * x + 0.5 + rng.normal(scale=0.1, size=x.size))
        slopes.append(slope)
        errors.append(se)
    # the reported error matches the scatter of the slope over repeats
    assert np.mean(slopes) == pytest.approx(3.0, abs=0.01)
    assert np.mean(errors) == pytest.approx(np.std(slopes), rel=0.2)
