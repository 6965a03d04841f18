"""Structure of liquids from a radial distribution function: first peak, first minimum and the
coordination number up to it (used by the LAMMPS and GROMACS fluid protocols)."""

from __future__ import annotations

import numpy as np

from simagent.errors import CalculationFailed


def rdf_peak_and_cn(r: np.ndarray, g: np.ndarray, rho: float, dimension: int = 3) -> tuple[float, float, float]:
    """(first-peak position, first minimum after it, coordination number up to that minimum);
    rho is a number density per volume (per area in 2D).

    Peak and minimum are located on a 3-bin running mean of g; the minimum is searched between
    the peak and 1.8 x its position (LJ liquid: r_min/r_peak ~ 1.4; fcc: the empty gap)."""
    dr = r[1] - r[0]
    smooth = np.convolve(g, np.ones(3) / 3, mode="same")
    i_peak = int(np.argmax(smooth))
    window = np.nonzero((r > r[i_peak]) & (r <= 1.8 * r[i_peak]))[0]
    if window.size < 2 or window[-1] == r.size - 1:
        raise CalculationFailed("g(r) range too short to find its first minimum: larger cutoff")
    i_min = int(window[np.argmin(smooth[window])])
    if dimension == 2:
        cn = 2 * np.pi * rho * float(np.sum(g[: i_min + 1] * r[: i_min + 1]) * dr)
    else:
        cn = 4 * np.pi * rho * float(np.sum(g[: i_min + 1] * r[: i_min + 1] ** 2) * dr)
    return float(r[i_peak]), float(r[i_min]), cn
