"""Structure of liquids from a radial distribution function: first peak, first minimum and the
coordination number up to it (used by the LAMMPS and GROMACS fluid protocols).

How the first minimum is found (one rule for every liquid, never adjusted to a reference):

1. g(r) is smoothed by a 3-bin running mean; the first peak is the maximum of the smoothed g.
2. The first minimum is first located as the lowest point of the smoothed g after the peak and
   before 1.8 x the peak position (LJ liquid: r_min / r_peak ~ 1.4, water O-O ~ 1.2; fcc: the empty
   gap), i.e. the minimum that separates the first shell from the second.
3. Bins are coarse next to a broad minimum (water O-O with 100 bins to 12 A: 0.12 A bins, and one
   bin moves the coordination number by ~0.45), so the minimum is refined below the bin width: the
   vertex of a least-squares parabola through the raw g over +/- 10 % of the peak distance (at least
   two bins each side) around that point. The vertex is kept only when the parabola opens upwards
   and the vertex lies inside the fitted window; otherwise (a flat, empty gap) the bin centre stays.
4. The coordination number is the number of neighbours within r_min: rho g times the exact shell
   volume of each bin (4/3 pi (r_out^3 - r_in^3); 2D: pi (r_out^2 - r_in^2)), summed over the bins
   inside r_min and over the part of the bin that r_min cuts. (LAMMPS's compute rdf running
   coordination number at a bin is the count within that bin's OUTER edge, half a bin beyond its
   listed r: reading it at the bin of the minimum counts half a bin too far.)
"""

from __future__ import annotations

import numpy as np

from simagent.errors import CalculationFailed

PEAK_WINDOW = 1.8  # the first minimum lies before this multiple of the first-peak distance
FIT_HALF_WIDTH = 0.10  # parabola fit around the minimum: +/- this fraction of the peak distance
MIN_FIT_BINS = 2  # ... and at least this many bins each side


def first_minimum(r: np.ndarray, g: np.ndarray) -> tuple[float, float]:
    """(first-peak position, first-minimum position) of g(r) on uniform bin centres r (steps 1-3 of the
    module's rule)."""
    dr = float(r[1] - r[0])
    smooth = np.convolve(g, np.ones(3) / 3, mode="same")
    i_peak = int(np.argmax(smooth))
    window = np.nonzero((r > r[i_peak]) & (r <= PEAK_WINDOW * r[i_peak]))[0]
    if window.size < 2 or window[-1] == r.size - 1:
        raise CalculationFailed("g(r) range too short to find its first minimum: larger cutoff")
    i_min = int(window[np.argmin(smooth[window])])
    half = max(MIN_FIT_BINS, int(round(FIT_HALF_WIDTH * float(r[i_peak]) / dr)))
    lo, hi = max(i_peak + 1, i_min - half), min(r.size, i_min + half + 1)
    r_min = float(r[i_min])
    if hi - lo >= 3:
        a, b, _ = np.polyfit(r[lo:hi], g[lo:hi], 2)
        if a > 0 and r[lo] <= -b / (2 * a) <= r[hi - 1]:
            r_min = float(-b / (2 * a))
    return float(r[i_peak]), r_min


def neighbours_within(r: np.ndarray, g: np.ndarray, rho: float, radius: float, dimension: int = 3) -> float:
    """Number of neighbours within `radius` from g on uniform bin centres r: rho g times the exact
    shell volume (area in 2D) of each bin, the bin that `radius` cuts counted in part."""
    dr = float(r[1] - r[0])
    inner, outer = r - dr / 2, r + dr / 2
    cut = np.clip(radius, inner, outer)  # each bin's outer edge, or radius inside the bin it cuts
    if dimension == 2:
        shells = np.pi * (cut**2 - inner**2)
    else:
        shells = 4.0 / 3.0 * np.pi * (cut**3 - inner**3)
    return float(rho * np.sum(g * shells))


def rdf_peak_and_cn(r: np.ndarray, g: np.ndarray, rho: float, dimension: int = 3) -> tuple[float, float, float]:
    """(first-peak position, first minimum after it, coordination number up to that minimum);
    rho is a number density per volume (per area in 2D). The rule is the module's docstring."""
    peak, r_min = first_minimum(r, g)
    return peak, r_min, neighbours_within(r, g, rho, r_min, dimension)
