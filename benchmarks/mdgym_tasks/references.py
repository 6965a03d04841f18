"""Independent reference values for simagent's MDGym-format task files (no simagent code used).

* `jzg_*`: the Lennard-Jones equation of state of Johnson, Zollweg & Gubbins, Mol. Phys. 78, 591
  (1993) (modified Benedict-Webb-Rubin form, 32 fitted constants of their Table 10), for the full
  (untruncated) potential; `truncation_energy` corrects U/N to a potential cut at rc (g(r) = 1
  beyond rc, Allen & Tildesley eq. 2.144).
* `lattice_sum_energy`: static energy per atom of a perfect LJ lattice cut at rc (direct sum over
  lattice vectors), plus the classical harmonic potential energy d/2 kT of a crystal at low T.
* `metropolis_lj`: a small independent Metropolis Monte Carlo of truncated LJ particles in 2D or
  3D (NVT), sampling the force-shifted distribution that MD with truncated forces samples and
  reporting the unshifted energy, the virial pressure and g(r).

Run `python benchmarks/mdgym_tasks/references.py` to print the values used in the task files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Johnson, Zollweg & Gubbins (1993), Table 10: x1..x32; gamma = 3.
JZG_X = [
    0.8623085097507421, 2.976218765822098, -8.402230115796038, 0.1054136629203555,
    -0.8564583828174598, 1.582759470107601, 0.7639421948305453, 1.753173414312048,
    2.798291772190376e3, -4.8394220260857657e-2, 0.9963265197721935, -3.698000291272493e1,
    2.084012299434647e1, 8.305402124717285e1, -9.574799715203068e2, -1.477746229234994e2,
    6.398607852471505e1, 1.603993673294834e1, 6.805916615864377e1, -2.791293578795945e3,
    -6.245128304568454, -8.116836104958410e3, 1.488735559561229e1, -1.059346754655084e4,
    -1.131607632802822e2, -8.867771540418822e3, -3.986982844450543e1, -4.689270299917261e3,
    2.593535277438717e2, -2.694523589434903e3, -7.218487631550215e2, 1.721802063863269e2,
]  # fmt: skip
JZG_GAMMA = 3.0

# Each coefficient a_i(T), b_i(T) of the MBWR form as a list of (x index, power of T) terms.
_A_TERMS = [
    [(1, 1.0), (2, 0.5), (3, 0.0), (4, -1.0), (5, -2.0)],
    [(6, 1.0), (7, 0.0), (8, -1.0), (9, -2.0)],
    [(10, 1.0), (11, 0.0), (12, -1.0)],
    [(13, 0.0)],
    [(14, -1.0), (15, -2.0)],
    [(16, -1.0)],
    [(17, -1.0), (18, -2.0)],
    [(19, -2.0)],
]
_B_TERMS = [
    [(20, -2.0), (21, -3.0)],
    [(22, -2.0), (23, -4.0)],
    [(24, -2.0), (25, -3.0)],
    [(26, -2.0), (27, -4.0)],
    [(28, -2.0), (29, -3.0)],
    [(30, -2.0), (31, -3.0), (32, -4.0)],
]


def _coefficients(terms: list[list[tuple[int, float]]], t: float, energy: bool) -> list[float]:
    """a_i(T) (energy False) or the matching c_i(T) of the internal energy (energy True):
    U_res = A_res - T dA_res/dT, so a term x T^n of A contributes (1 - n) x T^n to U."""
    return [sum(JZG_X[i - 1] * t**n * ((1.0 - n) if energy else 1.0) for i, n in group) for group in terms]


def _g_functions(rho: float) -> list[float]:
    f = math.exp(-JZG_GAMMA * rho**2)
    g = [(1.0 - f) / (2.0 * JZG_GAMMA)]
    for i in range(2, 7):
        g.append(-(f * rho ** (2 * (i - 1)) - 2.0 * (i - 1) * g[-1]) / (2.0 * JZG_GAMMA))
    return g


def jzg_residual_helmholtz(t: float, rho: float) -> float:
    """A_res/N of the full LJ fluid (reduced units)."""
    a, b = _coefficients(_A_TERMS, t, False), _coefficients(_B_TERMS, t, False)
    g = _g_functions(rho)
    return sum(a[i] * rho ** (i + 1) / (i + 1) for i in range(8)) + sum(b[i] * g[i] for i in range(6))


def jzg_energy(t: float, rho: float) -> float:
    """Configurational energy per particle U/N of the full LJ fluid (JZG 1993, eq. 8)."""
    c, d = _coefficients(_A_TERMS, t, True), _coefficients(_B_TERMS, t, True)
    g = _g_functions(rho)
    return sum(c[i] * rho ** (i + 1) / (i + 1) for i in range(8)) + sum(d[i] * g[i] for i in range(6))


def jzg_pressure(t: float, rho: float) -> float:
    """Pressure of the full LJ fluid (JZG 1993, eq. 7)."""
    a, b = _coefficients(_A_TERMS, t, False), _coefficients(_B_TERMS, t, False)
    f = math.exp(-JZG_GAMMA * rho**2)
    return rho * t + sum(a[i] * rho ** (i + 2) for i in range(8)) + f * sum(b[i] * rho ** (2 * i + 3) for i in range(6))


def truncation_energy(rho: float, rc: float) -> float:
    """U_tail/N = (8/3) pi rho (rc^-9 / 3 - rc^-3): the part of U/N beyond rc (g = 1 there)."""
    return 8.0 / 3.0 * math.pi * rho * (rc**-9 / 3.0 - rc**-3)


def truncation_pressure(rho: float, rc: float) -> float:
    """P_tail = (16/3) pi rho^2 (2/3 rc^-9 - rc^-3), the virial beyond rc (no impulsive term)."""
    return 16.0 / 3.0 * math.pi * rho**2 * (2.0 / 3.0 * rc**-9 - rc**-3)


def truncated_energy(t: float, rho: float, rc: float) -> float:
    """U/N of LJ cut (not shifted) at rc: JZG minus the tail."""
    return jzg_energy(t, rho) - truncation_energy(rho, rc)


# ---------------------------------------------------------------------------------------------
# Perfect lattices
# ---------------------------------------------------------------------------------------------

BASIS = {
    "fcc": ([1, 1, 1], [[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]]),
    "bcc": ([1, 1, 1], [[0, 0, 0], [0.5, 0.5, 0.5]]),
    "sc": ([1, 1, 1], [[0, 0, 0]]),
    "sq": ([1, 1], [[0, 0]]),
    "hex": ([1, math.sqrt(3.0)], [[0, 0], [0.5, 0.5]]),  # orthogonal 2-atom cell a x sqrt(3) a
}


def lattice_constant(lattice: str, rho: float) -> float:
    cell, basis = BASIS[lattice]
    return (len(basis) / (rho * math.prod(cell))) ** (1.0 / len(cell))


def lattice_sum_energy(lattice: str, rho: float, rc: float, shifted: bool = False) -> float:
    """Static U/N of a perfect LJ lattice (eps = sigma = 1) cut at rc: half the sum over all
    neighbours within rc of 4 (r^-12 - r^-6) (minus its value at rc when shifted), from the atom
    at the origin."""
    cell, basis = BASIS[lattice]
    a = lattice_constant(lattice, rho)
    edges = np.array(cell) * a
    dim = len(cell)
    reach = [math.ceil(rc / e) + 1 for e in edges]
    grids = np.meshgrid(*[np.arange(-n, n + 1) for n in reach], indexing="ij")
    shifts = np.stack([g.ravel() for g in grids], axis=1) * edges
    points = (shifts[:, None, :] + np.array(basis)[None, :, :] * edges).reshape(-1, dim)
    r = np.linalg.norm(points, axis=1)
    r = r[(r > 1e-9) & (r < rc)]
    shift = 4.0 * (rc**-12 - rc**-6) if shifted else 0.0
    return float(0.5 * np.sum(4.0 * (r**-12 - r**-6) - shift))


def harmonic_crystal_energy(lattice: str, rho: float, rc: float, t: float, shifted: bool = False) -> float:
    """U/N of a classical crystal at low T: static lattice energy + d/2 kT (equipartition of the
    potential energy of d harmonic degrees of freedom per atom). Valid when no neighbour shell
    lies within thermal reach of an unshifted cutoff (pairs crossing rc would add jumps of u(rc))."""
    dim = len(BASIS[lattice][0])
    return lattice_sum_energy(lattice, rho, rc, shifted) + 0.5 * dim * t


# ---------------------------------------------------------------------------------------------
# Metropolis Monte Carlo
# ---------------------------------------------------------------------------------------------


@dataclass
class MCResult:
    energy: float  # U/N of the cut, unshifted potential
    energy_se: float
    pressure: float
    pressure_se: float
    acceptance: float
    r: np.ndarray
    g: np.ndarray

    def first_peak(self) -> float:
        smooth = np.convolve(self.g, np.ones(3) / 3, mode="same")
        return float(self.r[int(np.argmax(smooth))])

    def coordination(self, rho: float, dim: int) -> tuple[float, float]:
        """(CN to the first minimum after the peak, r_min); the minimum is looked for between the
        peak and 1.8 times its position."""
        smooth = np.convolve(self.g, np.ones(3) / 3, mode="same")
        i_peak = int(np.argmax(smooth))
        window = np.nonzero((self.r > self.r[i_peak]) & (self.r <= 1.8 * self.r[i_peak]))[0]
        i_min = int(window[np.argmin(smooth[window])])
        dr = self.r[1] - self.r[0]
        shell = 4 * np.pi * self.r**2 if dim == 3 else 2 * np.pi * self.r
        return float(rho * np.sum(self.g[: i_min + 1] * shell[: i_min + 1]) * dr), float(self.r[i_min])


def _blocks_se(series: np.ndarray, n_blocks: int = 10) -> float:
    usable = series[: len(series) // n_blocks * n_blocks].reshape(n_blocks, -1).mean(axis=1)
    return float(usable.std(ddof=1) / math.sqrt(n_blocks))


def metropolis_lj(n_side: int, rho: float, t: float, rc: float, dim: int = 3, sweeps: int = 4000,
                  equilibration: int = 1000, seed: int = 1, max_step: float = 0.15, rdf_bins: int = 200,
                  lattice: str | None = None) -> MCResult:
    """NVT Metropolis MC of N = basis x n_side^dim LJ particles. Moves are accepted with the
    shifted potential (u - u(rc) inside rc): the configurations MD with truncated forces samples;
    energies are reported for the unshifted cut potential, the pressure from the virial of the
    truncated forces (as LAMMPS pair lj/cut computes them)."""
    rng = np.random.default_rng(seed)
    lattice = lattice or ("fcc" if dim == 3 else "hex")
    cell, basis = BASIS[lattice]
    a = lattice_constant(lattice, rho)
    edges = np.array(cell) * a * n_side
    grids = np.meshgrid(*[np.arange(n_side)] * dim, indexing="ij")
    origins = np.stack([g.ravel() for g in grids], axis=1)
    pos = ((origins[:, None, :] + np.array(basis)[None, :, :]) * np.array(cell) * a).reshape(-1, dim)
    n = len(pos)
    if min(edges) < 2 * rc:
        raise ValueError("box too small for the cutoff: use more cells")
    u_rc = 4.0 * (rc**-12 - rc**-6)
    rc2 = rc * rc

    def pair_terms(delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        delta -= edges * np.round(delta / edges)
        r2 = np.sum(delta * delta, axis=1)
        inside = r2 < rc2
        inv6 = np.where(inside, 1.0 / np.where(inside, r2, 1.0) ** 3, 0.0)
        energy = np.where(inside, 4.0 * (inv6 * inv6 - inv6), 0.0)
        virial = np.where(inside, 24.0 * (2.0 * inv6 * inv6 - inv6), 0.0)  # r . f
        return energy, virial

    def particle_energy(i: int, xi: np.ndarray) -> float:
        others = np.delete(pos, i, axis=0)
        e, _ = pair_terms(others - xi)
        return float(np.sum(e - np.where(e != 0.0, u_rc, 0.0)))  # shifted: only for sampling

    def totals() -> tuple[float, float, np.ndarray]:
        energy = virial = 0.0
        distances = []
        for i in range(n - 1):
            delta = pos[i + 1 :] - pos[i]
            e, w = pair_terms(delta)
            energy += float(np.sum(e))
            virial += float(np.sum(w))
            distances.append(np.sqrt(np.sum(delta * delta, axis=1)))
        return energy, virial, np.concatenate(distances)

    volume = float(np.prod(edges))
    r_max = min(edges) / 2
    bins = np.linspace(0.0, r_max, rdf_bins + 1)
    hist = np.zeros(rdf_bins)
    energies, pressures = [], []
    accepted = tried = 0
    step = max_step
    for sweep in range(equilibration + sweeps):
        for _ in range(n):
            i = int(rng.integers(n))
            trial = pos[i] + rng.uniform(-step, step, size=dim)
            delta = particle_energy(i, trial) - particle_energy(i, pos[i])
            tried += 1
            if delta <= 0.0 or rng.random() < math.exp(-delta / t):
                pos[i] = trial - edges * np.floor(trial / edges)
                accepted += 1
        if sweep < equilibration and sweep % 20 == 19:  # tune to about 40 % acceptance
            step *= 1.1 if accepted / tried > 0.4 else 0.9
            accepted = tried = 0
        if sweep >= equilibration and sweep % 5 == 0:
            energy, virial, dist = totals()
            energies.append(energy / n)
            pressures.append(n * t / volume + virial / (dim * volume))
            hist += np.histogram(dist, bins=bins)[0]
    r = 0.5 * (bins[1:] + bins[:-1])
    if dim == 3:
        shells = 4.0 / 3.0 * np.pi * (bins[1:] ** 3 - bins[:-1] ** 3)
    else:
        shells = np.pi * (bins[1:] ** 2 - bins[:-1] ** 2)
    g = hist / len(energies) / (0.5 * n * (n - 1) / volume * shells)
    e, p = np.array(energies), np.array(pressures)
    return MCResult(float(e.mean()), _blocks_se(e), float(p.mean()), _blocks_se(p), accepted / max(tried, 1), r, g)


# State points of the task files whose reference comes from the Monte Carlo above:
# name -> (n_side, rho*, T*, rc, dimension, lattice, sweeps, seed)
MC_STATE_POINTS = {
    "lj2d_fluid_T1.0_rho0.5": (12, 0.5, 1.0, 2.5, 2, "hex", 6000, 11),
    "lj3d_liquid_T0.85_rho0.86": (4, 0.86, 0.85, 2.5, 3, "fcc", 3000, 12),
}
MC_FILE = "mc_references.json"


def run_mc(names: list[str] | None = None) -> dict:
    """Run the Monte Carlo state points and write them to mc_references.json next to this file."""
    import json
    import time
    from pathlib import Path

    path = Path(__file__).with_name(MC_FILE)
    done: dict = {}
    for name, (n_side, rho, t, rc, dim, lattice, sweeps, seed) in MC_STATE_POINTS.items():
        if names and name not in names:
            continue
        start = time.time()
        res = metropolis_lj(n_side, rho, t, rc, dim=dim, sweeps=sweeps, equilibration=1000, seed=seed, lattice=lattice)
        n = len(BASIS[lattice][1]) * n_side**dim
        cn, r_min = res.coordination(rho * (n - 1) / n, dim)
        done = json.loads(path.read_text()) if path.is_file() else {}  # other runs may have written
        done[name] = {
            "method": f"Metropolis MC (benchmarks/mdgym_tasks/references.py), N = {n}, {dim}D, rc = {rc}, "
                      f"{sweeps} sweeps after 1000, seed {seed}; shifted-potential sampling, unshifted energy",
            "T": t, "rho": rho, "rc": rc, "N": n,
            "potential_energy_per_atom": res.energy, "potential_energy_per_atom_se": res.energy_se,
            "pressure": res.pressure, "pressure_se": res.pressure_se,
            "rdf_first_peak": res.first_peak(), "coordination_number": cn, "r_min": r_min,
            "acceptance": res.acceptance, "cpu_s": round(time.process_time(), 1),
            "wall_s": round(time.time() - start, 1),
        }
        path.write_text(json.dumps(done, indent=1) + "\n")
        print(name, done[name])
    return done


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["mc"]:
        run_mc(sys.argv[2:] or None)
        raise SystemExit(0)
    for t, rho in ((1.2, 0.8), (0.85, 0.86), (1.3, 0.4)):
        print(f"JZG T*={t} rho*={rho}: U/N = {jzg_energy(t, rho):.4f}, P = {jzg_pressure(t, rho):.4f}; "
              f"cut at 2.5: U/N = {truncated_energy(t, rho, 2.5):.4f}")
    print(f"fcc rho*=1.1 rc=2.5 shifted static U/N = {lattice_sum_energy('fcc', 1.1, 2.5, True):.5f}; "
          f"T*=0.1 harmonic: {harmonic_crystal_energy('fcc', 1.1, 2.5, 0.1, True):.5f}")
    print(f"hex rho*=0.9 rc=2.5 static U/N = {lattice_sum_energy('hex', 0.9, 2.5):.5f}; "
          f"T*=0.1 harmonic: {harmonic_crystal_energy('hex', 0.9, 2.5, 0.1):.5f}")
