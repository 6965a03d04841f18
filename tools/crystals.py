"""Shared by the DFT and ML-potential protocols (tools/qe, tools/mlp, tools/vasp): the one-element
crystal a request names (element, lattice, starting lattice constant, every default recorded) and
the equation-of-state fit (ase.eos) with its physics gates and plot."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from ase import Atoms
from ase.build import bulk
from ase.data import atomic_numbers, reference_states
from ase.eos import EquationOfState
from ase.units import GPa

from simagent.errors import CalculationFailed, RequestError
from simagent.models import DefaultApplied, TaskSpec
from simagent.protocols import Protocol
from tools.lammps.protocols.crystal import initial_lattice_constant

CUBIC = ("fcc", "bcc", "diamond", "sc")
EOS_FORM = "birchmurnaghan"  # third-order Birch-Murnaghan, ase.eos
# Linear strains of the EOS: +-3 % in a is +-9 % in volume, inside the range where the third-order
# Birch-Murnaghan form fits DFT energies to well below 1 meV/atom.
DEFAULT_STRAINS = (0.97, 0.98, 0.99, 1.0, 1.01, 1.02, 1.03)


def crystal(element: str, lattice: str, a: float, c_over_a: float | None = None) -> Atoms:
    """The primitive cell of a one-element crystal (ase.build.bulk; hcp with the ideal c/a by default)."""
    if lattice == "hcp":
        return bulk(element, "hcp", a=a, c=a * (c_over_a or math.sqrt(8 / 3)))
    return bulk(element, lattice, a=a)



class NamedEngineCrystalProtocol(Protocol):
    """Base of the DFT / ML-potential crystal protocols: it applies only when the request named its
    engine (spec.engine) and asks about a crystal for properties it computes."""

    def applies_to(self, spec: TaskSpec) -> bool:
        if spec.engine != self.engine or spec.system is None or spec.system.kind != "crystal" or not spec.properties:
            return False
        return {p.name for p in spec.properties} <= self.properties


@dataclass
class CrystalChoice:
    element: str
    lattice: str
    a_initial: float
    defaults: list[DefaultApplied] = field(default_factory=list)


def crystal_from_spec(spec: TaskSpec, lattices: tuple[str, ...] = CUBIC) -> CrystalChoice:
    """The element and lattice of a one-element crystal request; RequestError when it is not one."""
    system = spec.system
    if system is None or not system.elements:
        raise RequestError("say which element the crystal is made of (e.g. 'diamond silicon', 'fcc copper')")
    if len(system.elements) != 1:
        raise RequestError(f"only one-element crystals are supported here, not {'-'.join(system.elements)}")
    element = system.elements[0].strip().capitalize()
    if element not in atomic_numbers or element == "X":
        raise RequestError(f"unknown chemical element {system.elements[0]!r}")
    defaults = []
    lattice = system.lattice
    if lattice is None:
        lattice = (reference_states[atomic_numbers[element]] or {}).get("symmetry")
        if lattice not in lattices:
            raise RequestError(f"say which lattice {element} should have ({', '.join(lattices)}); its reference "
                               f"structure ({lattice}) is not one of these")
        defaults.append(DefaultApplied(parameter="lattice", value=lattice,
                                       reason=f"reference structure of {element} (ase.data)"))
    if lattice not in lattices:
        raise RequestError(f"lattice {lattice!r} is not supported here ({', '.join(lattices)})")
    a, source = initial_lattice_constant(element, lattice)
    defaults.append(DefaultApplied(parameter="initial lattice constant", value=f"{a} angstrom", reason=source))
    return CrystalChoice(element, lattice, a, defaults)


@dataclass
class EosFit:
    v0: float  # angstrom^3 per cell
    e0: float  # eV per cell
    bulk_modulus_GPa: float
    volumes: list[float]
    energies: list[float]
    rms_meV_per_atom: float


def fit_eos(volumes: list[float], energies: list[float], natoms: int, plot: Path | None = None,
            title: str = "") -> EosFit:
    """Birch-Murnaghan fit; CalculationFailed when the minimum is outside the sampled volumes or the
    fit is poor (residual > 1 meV/atom)."""
    if len(volumes) < 5:
        raise CalculationFailed(f"an equation of state needs at least 5 points, got {len(volumes)}")
    eos = EquationOfState(volumes, energies, eos=EOS_FORM)
    try:
        v0, e0, b = eos.fit()
    except (RuntimeError, ValueError) as err:
        raise CalculationFailed(f"equation-of-state fit failed: {err}") from None
    if not min(volumes) < v0 < max(volumes):
        raise CalculationFailed(f"E(V) minimum at {v0:.3f} A^3 lies outside the sampled volumes "
                                f"{min(volumes):.3f}-{max(volumes):.3f} A^3: widen the strain range")
    if not b > 0:
        raise CalculationFailed(f"non-positive bulk modulus {b / GPa:.3g} GPa from the E(V) fit")
    fitted = np.array([eos.func(v, *eos.eos_parameters) for v in volumes])
    rms = float(np.sqrt(np.mean((fitted - np.array(energies)) ** 2)) / natoms * 1000)
    if rms > 1.0:
        raise CalculationFailed(f"E(V) points scatter {rms:.2f} meV/atom around the fit: noisy energies")
    if plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        eos.plot(str(plot), show=False)
    return EosFit(float(v0), float(e0), float(b / GPa), list(volumes), list(energies), rms)
