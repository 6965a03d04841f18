"""Point-defect energetics shared by every protocol that computes them.

The formation energy of a point defect from two relaxed cells of the same crystal: the defect cell
(N_def atoms, energy E_def) and the perfect one (N atoms, energy E_0), with the perfect crystal's
energy per atom as the reference for the atoms added or removed:

    E_f = E_def - (N_def / N) E_0        (interstitial: N_def = N + 1; vacancy: N_def = N - 1)
"""

from __future__ import annotations


def formation_energy(e_defect: float, n_defect: int | float, e_perfect: float, n_perfect: int | float) -> float:
    """E_def - (N_def / N) E_0 (energies of the whole cells, in one unit; the result in that unit)."""
    if n_perfect <= 0 or n_defect <= 0:
        raise ValueError(f"atom counts must be positive (defect {n_defect}, perfect {n_perfect})")
    return e_defect - n_defect / n_perfect * e_perfect
