"""Small, numpy-only statistics for time series from simulations.

- `statistical_inefficiency`: g = 1 + 2 sum_t (1 - t/N) C(t), the number of correlated samples
  per independent one (integrated autocorrelation time; Chodera et al., JCTC 3, 26 (2007)).
- `block_average`: mean and standard error by Flyvbjerg-Petersen blocking (J. Chem. Phys. 91,
  461 (1989)), or by a fixed number of blocks.
- `detect_equilibration`: start of the equilibrated region by maximising the number of
  uncorrelated samples (Chodera, JCTC 12, 1799 (2016)).
- `linear_fit`: least-squares line with the standard error of the slope.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Series = np.ndarray | Sequence[float]

# Fewest blocks a blocking level may have: with n blocks the standard error itself has a relative
# error of about 1/sqrt(2(n-1)), 27 % at n = 8.
MIN_BLOCKS = 8


def _as_series(x: Series, minimum: int = 2) -> np.ndarray:
    arr = np.asarray(x, dtype=float).ravel()
    if arr.size < minimum:
        raise ValueError(f"need at least {minimum} samples, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("series contains NaN or infinite values")
    return arr


def statistical_inefficiency(x: Series) -> float:
    """g >= 1 such that the standard error of the mean is std(x) * sqrt(g / N).

    The normalised autocorrelation C(t) (computed by FFT) is summed with weights (1 - t/N) up to
    its first non-positive value, where noise starts to dominate (Chodera 2007)."""
    arr = _as_series(x)
    n = arr.size
    dev = arr - arr.mean()
    var = float(dev @ dev) / n
    if var == 0.0:
        return 1.0
    size = 1 << (2 * n - 1).bit_length()
    spectrum = np.fft.rfft(dev, size)
    acov = np.fft.irfft(spectrum * np.conj(spectrum), size)[:n] / np.arange(n, 0, -1)
    corr = acov[1:] / var
    nonpositive = np.nonzero(corr <= 0.0)[0]
    stop = nonpositive[0] if nonpositive.size else n - 1
    t = np.arange(1, stop + 1)
    g = 1.0 + 2.0 * float(np.sum((1.0 - t / n) * corr[:stop]))
    return max(g, 1.0)


def blocking_levels(x: Series, min_blocks: int = MIN_BLOCKS) -> list[tuple[int, int, float, float]]:
    """Flyvbjerg-Petersen blocking: (block size, number of blocks, standard error, its error) for
    block sizes 1, 2, 4, ... while at least `min_blocks` blocks remain."""
    y = _as_series(x)
    levels = []
    size = 1
    while y.size >= min_blocks:
        n = y.size
        se = float(np.sqrt(np.var(y) / (n - 1)))
        levels.append((size, n, se, se / np.sqrt(2.0 * (n - 1))))
        half = n // 2
        y = 0.5 * (y[0 : 2 * half : 2] + y[1 : 2 * half : 2])
        size *= 2
    return levels


def block_average(x: Series, n_blocks: int | None = None) -> tuple[float, float]:
    """Mean of the series and the standard error of that mean.

    n_blocks=None (default): Flyvbjerg-Petersen blocking. The standard error SE_B grows with the
    block size B until blocks outlast the correlation time, then plateaus. The plateau is picked
    with the criterion of Lee, Needs & Drummond (Phys. Rev. E 83, 066706 (2011), as in pyblock):
    the smallest B with B^3 > 2 N (SE_B / SE_1)^4, among levels with at least MIN_BLOCKS blocks.
    If no level qualifies the series is too short; the largest SE seen is returned (a lower bound).
    The result is never below the statistical-inefficiency estimate std * sqrt(g / N): on a series
    only a few correlation times long (a short barostatted run of a small box) blocking alone
    underestimates the error, and gates that trusted it would call ordinary fluctuations a drift.
    n_blocks=k: the series (minus the remainder at its start) is cut into k equal blocks and the
    error is std(block means)/sqrt(k); use k >= 5."""
    arr = _as_series(x)
    mean = float(arr.mean())
    if n_blocks is not None:
        if n_blocks < 2 or n_blocks > arr.size:
            raise ValueError(f"n_blocks must be between 2 and {arr.size}, got {n_blocks}")
        size = arr.size // n_blocks
        means = arr[arr.size - size * n_blocks :].reshape(n_blocks, size).mean(axis=1)
        return mean, float(means.std(ddof=1) / np.sqrt(n_blocks))
    levels = blocking_levels(arr, min_blocks=min(MIN_BLOCKS, arr.size))
    se_1 = levels[0][2]
    if se_1 == 0.0:
        return mean, 0.0
    se_g = float(arr.std() * np.sqrt(statistical_inefficiency(arr) / arr.size))
    for size, _, se, _ in levels:
        if size**3 > 2 * arr.size * (se / se_1) ** 4:
            return mean, max(se, se_g)
    return mean, max(max(level[2] for level in levels), se_g)


def detect_equilibration(x: Series, n_candidates: int = 50) -> int:
    """Index t0 from which the series is taken as equilibrated (Chodera 2016).

    t0 maximises the number of effectively uncorrelated samples (N - t0) / g(x[t0:]). Candidates
    lie on an even grid of `n_candidates` points over the first half of the series (for speed; we
    never discard more than half a production run)."""
    arr = _as_series(x, minimum=4)
    n = arr.size
    candidates = np.unique(np.linspace(0, n // 2, n_candidates).astype(int))
    best_t0, best_neff = 0, -1.0
    for t0 in candidates:
        neff = (n - t0) / statistical_inefficiency(arr[t0:])
        if neff > best_neff:
            best_t0, best_neff = int(t0), neff
    return best_t0


def linear_fit(x: Series, y: Series) -> tuple[float, float, float]:
    """Ordinary least squares y = slope * x + intercept; returns (slope, intercept, slope standard
    error from the residuals with N - 2 degrees of freedom; 0 for an exact line or N = 2)."""
    xa, ya = _as_series(x), _as_series(y)
    if xa.size != ya.size:
        raise ValueError("x and y differ in length")
    dx = xa - xa.mean()
    sxx = float(dx @ dx)
    if sxx == 0.0:
        raise ValueError("x values are all equal")
    slope = float(dx @ (ya - ya.mean())) / sxx
    intercept = float(ya.mean() - slope * xa.mean())
    if xa.size <= 2:
        return slope, intercept, 0.0
    residuals = ya - (slope * xa + intercept)
    slope_se = float(np.sqrt((residuals @ residuals) / (xa.size - 2) / sxx))
    return slope, intercept, slope_se
