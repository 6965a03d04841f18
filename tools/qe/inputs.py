"""pw.x input from a typed model (namelists and cards written here, nothing free-form), and the
crystal structures and k-point meshes the protocols use."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from ase import Atoms
from ase.data import atomic_masses, atomic_numbers
from pydantic import BaseModel, Field, model_validator

RY_TO_EV = 13.605693122994  # CODATA 2018, as in QE's constants
BOHR_TO_ANGSTROM = 0.529177210903


class Site(BaseModel):
    element: str
    position: tuple[float, float, float] = Field(description="crystal (fractional) coordinates")


class KPoint(BaseModel):
    k: tuple[float, float, float] = Field(description="crystal coordinates of the reciprocal lattice")
    weight: float = 1.0


class PwInput(BaseModel):
    """Everything a pw.x input holds; defaults are QE's own unless stated."""

    calculation: Literal["scf", "nscf", "bands"] = "scf"
    prefix: str = "pwscf"
    outdir: str = "./tmp"
    pseudo_dir: str
    pseudopotentials: dict[str, str] = Field(description="element -> UPF file name in pseudo_dir")
    cell: list[tuple[float, float, float]] = Field(description="lattice vectors, angstrom")
    sites: list[Site]
    ecutwfc: float = Field(gt=0, description="wave-function cutoff, Ry")
    ecutrho: float | None = Field(default=None, description="density cutoff, Ry (None: 4 x ecutwfc, QE's default)")
    occupations: Literal["fixed", "smearing"] = "fixed"
    smearing: Literal["mv", "gaussian", "mp", "fd"] = "mv"
    degauss: float = Field(default=0.02, gt=0, description="smearing width, Ry")
    nbnd: int | None = None
    nspin: Literal[1, 2] = 1
    starting_magnetization: float = Field(default=0.0, ge=-1, le=1, description="every species (nspin 2)")
    conv_thr: float = Field(default=1e-8, gt=0, description="SCF convergence threshold, Ry")
    electron_maxstep: int = 100
    mixing_beta: float = Field(default=0.7, gt=0, le=1)
    diagonalization: Literal["david", "cg", "ppcg"] = "david"
    kpts: tuple[int, int, int] | None = Field(default=None, description="Monkhorst-Pack mesh")
    kshift: tuple[int, int, int] = (0, 0, 0)
    kpoints: list[KPoint] = Field(default_factory=list, description="explicit k-points (bands runs)")
    max_seconds: float | None = Field(default=None, description="pw.x stops cleanly after this wall time")
    restart_mode: Literal["from_scratch", "restart"] = "from_scratch"
    tstress: bool = True
    tprnfor: bool = True

    @model_validator(mode="after")
    def _consistent(self) -> PwInput:
        if (self.kpts is None) == (not self.kpoints):
            raise ValueError("give either a Monkhorst-Pack mesh (kpts) or explicit kpoints")
        missing = {s.element for s in self.sites} - set(self.pseudopotentials)
        if missing:
            raise ValueError(f"no pseudopotential for {', '.join(sorted(missing))}")
        if len(self.cell) != 3:
            raise ValueError("the cell needs three lattice vectors")
        return self

    @property
    def natoms(self) -> int:
        return len(self.sites)

    def atoms(self) -> Atoms:
        return Atoms([s.element for s in self.sites], scaled_positions=[s.position for s in self.sites],
                     cell=self.cell, pbc=True)

    def render(self) -> str:
        species = sorted({s.element for s in self.sites}, key=lambda el: [s.element for s in self.sites].index(el))
        control = {
            "calculation": self.calculation, "prefix": self.prefix, "outdir": self.outdir,
            "pseudo_dir": self.pseudo_dir, "restart_mode": self.restart_mode,
            "tstress": self.tstress, "tprnfor": self.tprnfor, "verbosity": "high",
        }
        if self.max_seconds:
            control["max_seconds"] = self.max_seconds
        system: dict = {"ibrav": 0, "nat": self.natoms, "ntyp": len(species), "ecutwfc": self.ecutwfc,
                        "occupations": self.occupations}
        if self.ecutrho:
            system["ecutrho"] = self.ecutrho
        if self.occupations == "smearing":
            system.update(smearing=self.smearing, degauss=self.degauss)
        if self.nbnd:
            system["nbnd"] = self.nbnd
        if self.nspin == 2:
            system["nspin"] = 2
            system.update({f"starting_magnetization({i + 1})": self.starting_magnetization
                           for i in range(len(species))})
        electrons = {"conv_thr": self.conv_thr, "electron_maxstep": self.electron_maxstep,
                     "mixing_beta": self.mixing_beta, "diagonalization": self.diagonalization}
        lines = [*_namelist("CONTROL", control), *_namelist("SYSTEM", system), *_namelist("ELECTRONS", electrons),
                 "ATOMIC_SPECIES"]
        lines += [f"  {el} {atomic_masses[atomic_numbers[el]]:.4f} {self.pseudopotentials[el]}" for el in species]
        lines.append("CELL_PARAMETERS angstrom")
        lines += ["  " + " ".join(f"{x:.10f}" for x in vec) for vec in self.cell]
        lines.append("ATOMIC_POSITIONS crystal")
        lines += [f"  {s.element} " + " ".join(f"{x:.10f}" for x in s.position) for s in self.sites]
        if self.kpts is not None:
            lines += ["K_POINTS automatic", "  " + " ".join(map(str, (*self.kpts, *self.kshift)))]
        else:
            lines += ["K_POINTS crystal", f"  {len(self.kpoints)}"]
            lines += ["  " + " ".join(f"{x:.8f}" for x in p.k) + f" {p.weight:g}" for p in self.kpoints]
        return "\n".join(lines) + "\n"


def _value(value: object) -> str:
    if isinstance(value, bool):
        return ".true." if value else ".false."
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, float):
        return f"{value:.10g}".replace("e", "d")  # Fortran double-precision exponent
    return str(value)


def _namelist(name: str, values: dict) -> list[str]:
    return [f"&{name}", *(f"  {key} = {_value(val)}" for key, val in values.items()), "/"]


def sites_of(atoms: Atoms) -> list[Site]:
    return [Site(element=s, position=tuple(float(x) for x in p))
            for s, p in zip(atoms.get_chemical_symbols(), atoms.get_scaled_positions(), strict=True)]


def mesh_for_spacing(atoms: Atoms, spacing: float) -> tuple[int, int, int]:
    """Smallest Monkhorst-Pack mesh with k-point spacing <= `spacing` (1/angstrom, 2*pi included),
    the convention of ASE's kspacing and VASP's KSPACING."""
    reciprocal = 2 * np.pi * np.linalg.inv(atoms.cell.array).T
    return tuple(max(1, math.ceil(np.linalg.norm(b) / spacing - 1e-9)) for b in reciprocal)
