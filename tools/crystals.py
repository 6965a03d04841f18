"""Shared by the crystal protocols of every engine (tools/lammps, tools/qe, tools/mlp, tools/vasp):
the one-element crystal a request names (element, lattice, starting lattice constant, each default
declared in CRYSTAL_DEFAULTS and reported when the request left it out) and the equation-of-state
fit (ase.eos) with its physics gates and plot."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from ase import Atoms
from ase.build import bulk
from ase.data import atomic_numbers, covalent_radii, reference_states
from ase.eos import EquationOfState
from ase.units import GPa

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, RequestError
from simagent.models import TaskSpec
from simagent.protocols import Protocol

CUBIC = ("fcc", "bcc", "diamond", "sc")
EOS_FORM = "birchmurnaghan"  # third-order Birch-Murnaghan, ase.eos
# Linear strains of the EOS: +-3 % in a is +-9 % in volume, inside the range where the third-order
# Birch-Murnaghan form fits DFT energies to well below 1 meV/atom.
DEFAULT_STRAINS = (0.97, 0.98, 0.99, 1.0, 1.01, 1.02, 1.03)

# Nearest-neighbour distance as a fraction of the lattice constant a (LAMMPS `lattice` conventions;
# hcp built with the ideal c/a = sqrt(8/3)).
NN_OVER_A = {
    "fcc": 1 / math.sqrt(2),
    "bcc": math.sqrt(3) / 2,
    "sc": 1.0,
    "diamond": math.sqrt(3) / 4,
    "hcp": 1.0,
}

# What a crystal request may leave out: the lattice (the element's reference structure) and where
# the starting lattice constant comes from (the relaxation or the fit removes its influence).
_START_A = {"shown": "{a} angstrom", "parameter": "initial lattice constant"}
CRYSTAL_DEFAULTS: dict[str, Default] = {
    "lattice": Default("the reference structure", "reference structure of {element} (ase.data)",
                       "ase.data.reference_states", shown="{lattice}"),
    "a from experiment": Default("experimental", "experimental {lattice} lattice constant (ase.data.reference_states)",
                                 "ase.data.reference_states", **_START_A),
    "a from neighbours": Default("nearest-neighbour distance",
                                 "nearest-neighbour distance of the reference {symmetry} structure (ase.data)",
                                 "ase.data.reference_states", **_START_A),
    "a from radii": Default("covalent radii", "twice the covalent radius (ase.data, Cordero 2008)",
                            "Cordero et al., Dalton Trans. 2832 (2008)", **_START_A),
}


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


def _start_a(element: str, lattice: str) -> tuple[float, str, dict]:
    """Starting a (angstrom), the CRYSTAL_DEFAULTS key saying where it came from, and its fields.

    ase.data.reference_states (experimental structures) when its symmetry is the requested lattice;
    otherwise the reference nearest-neighbour distance (or twice the covalent radius, Cordero 2008)
    converted to the requested lattice."""
    state = reference_states[atomic_numbers[element]] or {}
    symmetry = state.get("symmetry")
    if symmetry == lattice and "a" in state:
        return float(state["a"]), "a from experiment", {"lattice": lattice}
    if symmetry in NN_OVER_A and "a" in state:
        nn, key = state["a"] * NN_OVER_A[symmetry], "a from neighbours"
    else:
        nn, key = 2 * float(covalent_radii[atomic_numbers[element]]), "a from radii"
    return round(nn / NN_OVER_A[lattice], 4), key, {"symmetry": symmetry}


def initial_lattice_constant(element: str, lattice: str, log: DefaultsLog | None = None) -> tuple[float, str]:
    """Starting a (angstrom) and where it came from (reported to `log` when one is given). The
    relaxation removes the guess's influence."""
    a, key, fields = _start_a(element, lattice)
    applied = CRYSTAL_DEFAULTS[key].applied(key, a=a, **fields)
    if log is not None:
        log.applied.append(applied)
    return a, applied.reason


def reference_lattice(element: str, given: str | None, lattices: tuple[str, ...], log: DefaultsLog,
                      refusal: str) -> str:
    """The lattice the request names, else the element's reference structure (reported); RequestError
    with `refusal` (formatted with element, symmetry) when that is not one of `lattices`."""
    if given is not None:
        return given
    symmetry = (reference_states[atomic_numbers[element]] or {}).get("symmetry")
    if symmetry not in lattices:
        raise RequestError(refusal.format(element=element, symmetry=symmetry, lattices=", ".join(lattices)))
    log.applied.append(CRYSTAL_DEFAULTS["lattice"].applied("lattice", element=element, lattice=symmetry))
    return symmetry


@dataclass
class CrystalChoice:
    element: str
    lattice: str
    a_initial: float


def crystal_from_spec(spec: TaskSpec, log: DefaultsLog, lattices: tuple[str, ...] = CUBIC) -> CrystalChoice:
    """The element and lattice of a one-element crystal request (defaults reported to `log`);
    RequestError when it is not one."""
    system = spec.system
    if system is None or not system.elements:
        raise RequestError("say which element the crystal is made of (e.g. 'diamond silicon', 'fcc copper')")
    if len(system.elements) != 1:
        raise RequestError(f"only one-element crystals are supported here, not {'-'.join(system.elements)}")
    element = system.elements[0].strip().capitalize()
    if element not in atomic_numbers or element == "X":
        raise RequestError(f"unknown chemical element {system.elements[0]!r}")
    lattice = reference_lattice(element, system.lattice, lattices, log, "say which lattice {element} should have "
                                "({lattices}); its reference structure ({symmetry}) is not one of these")
    if lattice not in lattices:
        raise RequestError(f"lattice {lattice!r} is not supported here ({', '.join(lattices)})")
    a, _ = initial_lattice_constant(element, lattice, log)
    return CrystalChoice(element, lattice, a)


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
