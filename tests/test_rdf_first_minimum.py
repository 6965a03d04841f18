"""The first minimum of g(r) and the coordination number up to it (simagent.materials.rdf), checked
against an independent calculation: a smooth water-like O-O g(r) whose minimum and neighbour count
are found on a dense grid (brute force), then binned as LAMMPS's compute rdf bins it (100 bins to
12 A: 0.12 A, shell-volume-weighted bin averages) with noise added. The binned curve's minimum is
flat over several bins, which is where reading the minimum at a bin centre, or the running count at a
bin's outer edge, moves the coordination number by several per cent."""

from __future__ import annotations

import numpy as np
import pytest

from simagent.materials.rdf import first_minimum, neighbours_within, rdf_peak_and_cn

RHO = 0.0334  # water O atoms per A^3 (1500 waters in 35.506 A)^3 = 0.03351


def water_like(r: np.ndarray) -> np.ndarray:
    core = 1.0 / (1.0 + np.exp(-(r - 2.55) / 0.04))
    shells = (1.0 + 2.1 * np.exp(-(((r - 2.76) / 0.16) ** 2)) - 0.3 * np.exp(-(((r - 3.45) / 0.4) ** 2))
              + 0.15 * np.exp(-(((r - 4.5) / 0.45) ** 2)))
    return core * shells


def dense_truth(r_true_lo: float = 3.0, r_true_hi: float = 4.0) -> tuple[float, float]:
    """(r of the minimum, neighbours within it) on a 1e-4 A grid, no binning."""
    x = np.arange(1e-4, 6.0, 1e-4)
    g = water_like(x)
    inside = (x > r_true_lo) & (x < r_true_hi)
    r_true = float(x[inside][np.argmin(g[inside])])
    below = x <= r_true
    return r_true, float(RHO * np.trapezoid(4 * np.pi * x[below] ** 2 * g[below], x[below]))


def binned(offset: float, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """100 bins to 12 A (shifted by `offset` of a bin so the minimum falls anywhere in a bin)."""
    dr = 0.12
    edges = np.arange(101) * dr + offset * dr
    r = 0.5 * (edges[1:] + edges[:-1])
    g = np.empty(r.size)
    for i in range(r.size):
        x = np.linspace(edges[i], edges[i + 1], 201)
        w = x**2
        g[i] = np.trapezoid(water_like(x) * w, x) / np.trapezoid(w, x)
    return r, g + np.random.default_rng(seed).normal(0.0, noise, r.size)


@pytest.mark.parametrize("offset", [0.0, 0.25, 0.5, 0.75])
def test_minimum_and_count_below_the_bin_width(offset):
    r_true, cn_true = dense_truth()
    r, g = binned(offset, noise=0.0, seed=0)
    peak, r_min, cn = rdf_peak_and_cn(r, g, RHO)
    assert abs(peak - 2.76) < 0.07  # within the bin holding the peak
    assert abs(r_min - r_true) < 0.03  # a quarter of a bin
    assert cn == pytest.approx(cn_true, rel=0.01)


def test_noisy_curve_stays_within_two_per_cent():
    # noise of 0.02 in g per bin (a few thousand frames of 1500 waters give less)
    r_true, cn_true = dense_truth()
    cns = [rdf_peak_and_cn(*binned(0.4, noise=0.02, seed=s), RHO)[2] for s in range(10)]
    assert np.mean(cns) == pytest.approx(cn_true, rel=0.02)
    assert max(abs(c - cn_true) for c in cns) / cn_true < 0.05


def test_count_within_a_radius_is_the_shell_volume_sum():
    # g = 1 everywhere: the count within R is rho 4/3 pi R^3, whatever bin R falls in
    r = (np.arange(100) + 0.5) * 0.12
    g = np.ones(100)
    for radius in (1.0, 3.3, 3.36, 3.42):
        assert neighbours_within(r, g, RHO, radius) == pytest.approx(RHO * 4 / 3 * np.pi * radius**3, rel=1e-9)
    assert neighbours_within(r, g, 0.5, 2.0, dimension=2) == pytest.approx(0.5 * np.pi * 4.0, rel=1e-9)


def test_flat_empty_gap_keeps_the_bin_centre():
    # an fcc-like first shell and an empty gap: the parabola is flat (a = 0), the bin centre stays
    r = np.arange(0.0075, 2.5, 0.015)
    g = np.where((r > 1.0) & (r < 1.2), 5.0, 0.0) + np.where(r > 1.4, 1.0, 0.0)
    peak, r_min = first_minimum(r, g)
    assert 1.2 <= r_min < 1.4 and np.isclose(r_min, r[np.argmin(np.abs(r - r_min))])


def test_described_coordination_number_carries_a_block_error(tmp_path):
    """lammps/described reads compute rdf's fix ave/time file (one block per snapshot); its coordination
    number's ± is the spread of the same analysis over 5 blocks of snapshots: with 20 noisy snapshots of
    the water-like curve the true count lies within a few of those errors, and the error is neither zero
    nor larger than the noise could make it."""
    from simagent.described.model import SimulationDescription
    from tools.lammps.protocols.described import _structure

    r, clean = binned(0.4, noise=0.0, seed=0)
    rng = np.random.default_rng(7)
    lines = ["# Time-averaged data for fix rdf", "# TimeStep Number-of-rows", "# Row c_rdf[1] c_rdf[2] c_rdf[3]"]
    for snap in range(20):
        lines.append(f"{200 * (snap + 1)} {r.size}")
        g = clean + rng.normal(0.0, 0.05, r.size)
        lines += [f"{i + 1} {r[i]:.6f} {g[i]:.6f} 0.0" for i in range(r.size)]
    (tmp_path / "rdf.dat").write_text("\n".join(lines) + "\n")
    n = 1000
    block = {"Volume": np.array([n / RHO]), "Atoms": np.array([float(n)])}
    (cn,) = _structure(["coordination_number"], tmp_path, block, SimulationDescription(), {"length": "A"}, "the run")
    _, cn_true = dense_truth()
    assert cn.uncertainty is not None and 0.0 < cn.uncertainty < 0.2
    assert abs(cn.value - cn_true) < 4 * cn.uncertainty + 0.01 * cn_true
    assert "5 blocks" in cn.method
