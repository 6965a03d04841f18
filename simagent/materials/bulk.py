"""Primitive cells of one-element crystals (ase.build.bulk), shared by the DFT and ML-potential
engines (tools/qe, tools/vasp, tools/mlp)."""

from __future__ import annotations

import math

from ase import Atoms
from ase.build import bulk


def crystal(element: str, lattice: str, a: float, c_over_a: float | None = None) -> Atoms:
    """The primitive cell of a one-element crystal (ase.build.bulk); hcp with the ideal c/a unless given."""
    if lattice == "hcp":
        return bulk(element, "hcp", a=a, c=a * (c_over_a or math.sqrt(8 / 3)))
    return bulk(element, lattice, a=a)
